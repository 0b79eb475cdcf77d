"""The reconciliation's research record (fixture repos), in English and Chinese: built by `analyzer.api.reconcile`;
`analyze reconcile --record` for where it goes (a file, stdout, the JSON) and its errors."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest
from test_usage_cli import args, make_repo, replay, write_lock
from test_usage_fixtures import DSH_FILES, PI_FILES

from analyzer.cli import main
from analyzer.usage.record import first_seam, path_summary

ZH_HEADINGS = ("问题", "来源与版本", "输入与配置", "本次只改变", "直接观察", "我的解释", "尚未排除", "下一次只验证")


@pytest.fixture
def repos(tmp_path: Path) -> dict:
    return {"pi": make_repo(tmp_path / "pi", PI_FILES), "dsh": make_repo(tmp_path / "dsh", DSH_FILES)}


def _numbers(text: str) -> collections.Counter[str]:
    return collections.Counter(re.findall(r"\d[\d,.]*\d|\d", text))


def test_record_in_both_languages(tmp_path: Path, repos: dict) -> None:
    en, zh = tmp_path / "r2.en.md", tmp_path / "notes" / "r2.zh.md"
    en_result = replay(tmp_path, repos, record=True, record_file=en)
    zh_result = replay(tmp_path, repos, record=True, record_file=zh, lang="zh")
    en_text, zh_text = en.read_text(encoding="utf-8"), zh.read_text(encoding="utf-8")
    assert (en_result.record, zh_result.record) == (en_text, zh_text)
    assert en_result.document["record_file"] == str(en)
    assert en_text.startswith("# Round 2 research record") and zh_text.startswith("# 第 2 轮研究记录")
    for head in ZH_HEADINGS:
        assert f"**{head}:**" in zh_text and f"({head}):**" in en_text
    for name, (_, shas) in repos.items():
        assert f"{name} {shas[-1]}, no tag at this commit, commit “tree 0” of " in en_text
        assert f"{name} {shas[-1]}" in zh_text
    for site in ("pi:packages/ai/src/api/completions.ts:7", "dsh:packages/llm/llm-pi-ai/src/stream.ts:3",
                 "dsh:packages/llm/llm-deepseek/src/translate.ts:4", "dsh:packages/client/ui/src/stats.ts:1",
                 "dsh:packages/llm/token-meter/src/usage-projection.ts:22"):
        assert site in en_text and site in zh_text
    assert "scenario deepseek-10k (scenarios/deepseek-10k.toml)" in en_text
    assert "pi-ai: dsh TokenUsage inputTokens 1040, outputTokens 500, cacheReadTokens 8960" in en_text
    assert "deepseek-native：dsh TokenUsage inputTokens 1040, outputTokens 500, cacheReadTokens 8960, " \
           "reasoningTokens 200" in zh_text
    assert "dsh TokenUsage.reasoningTokens: pi-ai absent vs deepseek-native 200" in en_text
    assert "dsh TokenUsage.reasoningTokens：pi-ai 缺失，deepseek-native 200" in zh_text
    assert "as of 2025-10-01" in en_text and "截至 2025-10-01" in zh_text
    # the lock of this test has no [trace]: the record says the path was not computed, and why
    assert "request path not computed: trace needs FROM and TO" in en_text
    assert "the request path was not computed for this record" in en_text
    assert "Which adapter a real configuration selects is decided at run time" in en_text
    assert "Question" not in zh_text and "Direct observations" not in zh_text
    assert _numbers(en_text) == _numbers(zh_text)


def test_the_record_is_built_only_when_asked(tmp_path: Path, repos: dict) -> None:
    result = replay(tmp_path, repos)
    assert result.record is None and "record_file" not in result.document


def test_record_traces_the_path_from_the_repo_dirs(tmp_path: Path, repos: dict) -> None:
    lock = write_lock(tmp_path, repos)
    lock.write_text(lock.read_text() + '[trace]\nfrom = "parseChunkUsage"\nto = "priceUsage"\n', encoding="utf-8")
    result = replay(tmp_path, repos, record=True, keep_lock=True)
    assert result.record is not None
    assert ("request path (parseChunkUsage → priceUsage): direct path from parseChunkUsage at "
            "pi:packages/ai/src/api/completions.ts:7") in result.record
    assert (tmp_path / "cache" / "repos" / "pi").is_dir()  # synced from the repo dir, not the lock's URL


def test_record_written_beside_the_ledger_text(tmp_path: Path, repos: dict, capsys) -> None:
    record = tmp_path / "r2.en.md"
    assert main(args(tmp_path, repos, "--record", str(record))) == 0
    assert f"wrote {record}" in capsys.readouterr().out and record.read_text(encoding="utf-8").startswith("# Round 2")


def test_record_to_stdout_and_json(tmp_path: Path, repos: dict, capsys) -> None:
    assert main(args(tmp_path, repos, "--route", "pi-ai", "--record")) == 0
    out = capsys.readouterr().out
    assert out.index("all invariants hold") < out.index("# Round 2 research record")
    assert "only one route replayed" not in out and "nothing between routes: one route replayed (pi-ai)" in out
    assert "Only pi-ai was replayed" in out
    assert main(args(tmp_path, repos, "--json", "--record", "-", "--lang", "zh")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["record"].startswith("# 第 2 轮研究记录") and "**直接观察:**" in doc["record"]
    assert main(args(tmp_path, repos, "--json", "--record", str(tmp_path / "r.md"))) == 0
    assert json.loads(capsys.readouterr().out)["record_file"] == str(tmp_path / "r.md")


def test_record_names_a_missing_layer(tmp_path: Path) -> None:
    no_client = {p: t for p, t in DSH_FILES.items() if not p.startswith("packages/client/")}
    repos = {"pi": make_repo(tmp_path / "pi", PI_FILES), "dsh": make_repo(tmp_path / "dsh", no_client)}
    result = replay(tmp_path, repos, record=True)
    assert not result.ok and result.record is not None
    text = result.record
    assert "not replayed: cacheHitPercent (dsh stats-line cache-hit %)" in text
    assert "Layers that could not be located at these commits were not replayed: cacheHitPercent." in text
    assert "deepseek-native: meter buckets and cache-hit % not replayed" in text


def test_unwritable_record_is_one_error_line(tmp_path: Path, repos: dict, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    assert main(args(tmp_path, repos, "--record", str(blocker / "r.md"))) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write") and "Traceback" not in err
    assert not (blocker / "r.md").exists()


TRACE = {
    "found": True, "mode": "common-caller", "from": "renderPrompt", "to": "parseChunkUsage",
    "hops": [
        {"symbol": "Agent.step", "repo": "app", "path": "src/agent.ts", "line": 10, "branch": "anchor", "via": None},
        {"symbol": "renderPrompt", "repo": "app", "path": "src/prompt.ts", "line": 3, "branch": "from", "via": 0},
        {"symbol": "Runtime.stream", "repo": "app", "path": "src/llm.ts", "line": 5, "branch": "to", "via": 1},
        {"symbol": "PiAdapter.stream", "repo": "app", "path": "src/pi.ts", "line": 8, "branch": "to", "via": 2},
    ],
    "edges": [
        {"source": "app:src/agent.ts:Agent.step", "target": "app:src/prompt.ts:renderPrompt", "kind": "direct",
         "possible": False, "alternatives": [], "call_path": "src/agent.ts", "call_line": 12, "rule": None},
        {"source": "app:src/agent.ts:Agent.step", "target": "app:src/llm.ts:Runtime.stream", "kind": "method",
         "possible": False, "alternatives": [], "call_path": "src/agent.ts", "call_line": 14, "rule": None},
        {"source": "app:src/llm.ts:Runtime.stream", "target": "app:src/pi.ts:PiAdapter.stream",
         "kind": "interface", "possible": True, "alternatives": ["app:src/native.ts:NativeAdapter.stream"],
         "call_path": "src/llm.ts", "call_line": 6, "rule": None},
    ],
}


def test_path_summary_names_anchor_branches_and_seams() -> None:
    text = path_summary(TRACE, "en")
    assert text == ("request path (renderPrompt → parseChunkUsage): anchor Agent.step at app:src/agent.ts:10; "
                    "calls towards FROM at line 12 (renderPrompt); then towards TO at line 14; seam at "
                    "app:src/llm.ts:6: interface → PiAdapter.stream (app:src/pi.ts); other live targets: "
                    "NativeAdapter.stream (app:src/native.ts)")
    assert path_summary(TRACE, "zh").startswith("请求路径（renderPrompt → parseChunkUsage）：锚点 Agent.step")
    assert first_seam(TRACE) == "app:src/llm.ts:6"
    assert path_summary({"found": False, "error": "boom"}, "en") == "request path not computed: boom"
