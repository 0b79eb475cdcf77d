"""The real Pi (npm, 0.82.1) against the real local engine, through the recording proxy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from appfixtures import pi_app  # noqa: F401 (fixture)
from enginefixtures import SENTINEL_API_KEY

from analyzer.observe.appdriver import AppRunner
from analyzer.observe.experiment import parse_experiment
from analyzer.observe.jsonl import log_path
from analyzer.observe.record import build_record
from analyzer.observe.runner import APP_ROW_KEY
from analyzer.observe.summary import summarise, summarise_run, summary_lines
from analyzer.requests.usage import read_usage

pytestmark = pytest.mark.engine


def _experiment(tmp_path: Path, turns: list[str], vary: dict[str, Any], **endpoint: Any) -> Any:
    data = {"name": "t", "question": "q", "endpoint": endpoint, "app": {"profile": "pi", "turns": turns},
            "vary": vary}
    return parse_experiment(data, tmp_path / "t.toml")


def _run(exp: Any, app: Any, upstream: str, out: Path) -> Any:
    runner = AppRunner(app, upstream, engine_url=upstream.removesuffix("/v1"), say=lambda _line: None)
    return runner.run(exp, log_path(out, exp.name))


def test_a_continued_session_reuses_the_prefix_and_pi_reports_what_the_server_did(
        pi_app, local_engine, tmp_path: Path) -> None:  # noqa: F811
    exp = _experiment(tmp_path, ["Say hello.", "Say it again.", "Once more."], {"factor": "none"})
    result = _run(exp, pi_app, local_engine.base_url, tmp_path / "obs")
    assert len(result.app.turns) == 6 and not any(t.failed for t in result.app.turns)  # 3 turns, 2 series
    for t in result.app.turns:  # each series' files were set aside under its name, and the turn says where
        assert t.result.stdout.parent == result.app.run_dir / t.series and t.result.stdout.is_file()
    control = [r for r in result.rows if r["series"] == "control"]
    assert len(control) >= 3 and all(r["outcome"] == "ok" for r in control)
    assert [(r.get("label") or {}).get("turn") for r in control][:1] == [1]
    for row in result.rows:  # the third witness sits beside the raw usage, and agrees with it
        c = read_usage(row["usage"], row.get("timings"))
        app = row[APP_ROW_KEY]
        assert (app["prompt"], app["cached"]) == (c.prompt, c.cached), row["index"]
    later = [read_usage(r["usage"], r.get("timings")) for r in control[1:]]
    assert all(c.cached and c.prompt and c.cached / c.prompt > 0.5 for c in later)  # the session's prefix is reused
    body = json.loads(control[-1]["request_body"])
    assert [m["role"] for m in body["messages"]].count("user") == 3  # the continued session carries its history
    assert result.log.is_file() and len(result.log.read_text().splitlines()) == len(result.rows)
    # the prefix rule (llama.cpp, one slot, the engine's own template and tokenizer) predicts what was reported
    prefix = result.app.prefix
    assert prefix is not None and prefix.exact and prefix.rule == "llama.cpp"
    assert len(prefix.requests) == len(result.rows)
    first, *rest = prefix.requests
    # the first request may meet a prompt an earlier test left in the slot, which this log cannot show
    assert first.prediction is not None and first.reported is not None and first.reported >= first.prediction.cached
    for rep in rest:
        assert rep.prediction is not None and rep.prediction.cached == rep.reported, (rep.series, rep.index)
    assert result.app.prefix_path is not None and json.loads(result.app.prefix_path.read_text())["requests"]
    # the summary and the record carry raw, app-reported and predicted per request, in both languages
    summary = summarise_run(exp, result)
    first = summary["app_requests"][1]
    assert first["raw_cached"] == first["app_cached"] == first["predicted_cached"] > 0
    lines = "\n".join(summary_lines(summary))
    assert "predicted" in lines and "appended from messages" in lines
    for lang, word in (("en", "predicted"), ("zh", "预测")):
        text = build_record(exp, summary, result.rows, lang=lang).to_markdown(lang)
        assert f"{word} {first['predicted_cached']:,}" in text


def test_another_working_directory_breaks_the_prefix_in_the_system_prompt(
        pi_app, local_engine, tmp_path: Path) -> None:  # noqa: F811
    exp = _experiment(tmp_path, ["Say hello."], {"factor": "cwd", "values": ["work", "elsewhere/project"]})
    result = _run(exp, pi_app, local_engine.base_url, tmp_path / "obs")
    summary = summarise(result.rows)
    control, treatment = (next(r for r in summary["requests"] if r["series"] == s) for s in ("control", "treatment"))
    assert treatment["parts"]["system"] != control["parts"]["system"]
    assert treatment["parts"]["tools"] == control["parts"]["tools"]
    body = json.loads(next(r for r in result.rows if r["series"] == "treatment")["request_body"])
    assert "elsewhere/project" in body["messages"][0]["content"]  # Pi names its working directory
    assert treatment["cached_tokens"] < treatment["prompt_tokens"]


def test_the_key_reaches_the_engine_but_never_the_app_or_the_disk(
        pi_app, local_engine_with_key, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setenv("ANALYZER_TEST_ENGINE_KEY", SENTINEL_API_KEY)
    exp = _experiment(tmp_path, ["Say hello."], {"factor": "none"}, api_key_env="ANALYZER_TEST_ENGINE_KEY")
    out = tmp_path / "obs"
    result = _run(exp, pi_app, local_engine_with_key.base_url, out)
    assert result.rows and all(r["status"] == 200 for r in result.rows)  # the proxy added the key
    written = [p for p in out.rglob("*") if p.is_file() and not p.is_symlink()]
    assert any(p.name == "models.json" for p in written)
    assert written and not [p for p in written if SENTINEL_API_KEY.encode() in p.read_bytes()]


def test_the_command_runs_an_app_experiment_and_writes_its_record(pi_app, local_engine, tmp_path: Path,  # noqa: F811
                                                                  capsys) -> None:
    """`analyze observe` on an [app] experiment: install (cached), run through the proxy, summary, record."""
    import tomli_w
    from appfixtures import PI_VERSION

    from analyzer.cli import main

    path = tmp_path / "one.toml"
    path.write_text(tomli_w.dumps({"name": "one-turn", "question": "does a second turn reuse the first?",
                                   "endpoint": {"base_url": local_engine.base_url},
                                   "app": {"profile": "pi", "turns": ["Say hello.", "Say it again."]},
                                   "vary": {"factor": "none"}}))
    record = tmp_path / "record.md"
    code = main(["--json", "observe", str(path), "--app-version", PI_VERSION, "--out", str(tmp_path / "obs"),
                 "--record", str(record)])
    out = capsys.readouterr().out
    assert code == 0
    summary = json.loads(out)
    assert len(summary["app_requests"]) >= 2 and summary["app_requests"][1]["raw_cached"] > 0
    assert record.is_file() and "one-turn" in record.read_text(encoding="utf-8")


def test_a_tool_set_changed_mid_session_breaks_at_the_turn_it_changes_and_is_priced_there(
        pi_app, local_engine, tmp_path: Path) -> None:  # noqa: F811
    exp = _experiment(tmp_path, ["Say hello.", "Say it again."],
                      {"factor": "arg", "values": ["", "--tools read,bash"], "from_turn": 2})
    result = _run(exp, pi_app, local_engine.base_url, tmp_path / "obs")
    assert not any(t.failed for t in result.app.turns)
    treatment = [r for r in result.rows if r["series"] == "treatment"]
    tools = [len(json.loads(r["request_body"]).get("tools") or []) for r in treatment]
    control_tools = len(json.loads(result.rows[0]["request_body"]).get("tools") or [])
    assert tools[0] == control_tools and tools[-1] == 2   # turn 1 with the control's tools, turn 2 with read, bash
    assert [t.value_in_force for t in result.app.turns if t.series == "treatment"] == ["", "--tools read,bash"]
    summary = summarise_run(exp, result)
    [cost] = summary["session_cost"]
    assert cost["row"] == result.rows.index(treatment[-1]) + 1 and cost["tokens"] > 0
    assert "each time it changes inside a session (turn 2)" in "\n".join(summary_lines(summary))


def test_the_interval_factor_sends_the_side_conversation_in_each_pause_and_not_into_the_rows(
        pi_app, tmp_path: Path) -> None:  # noqa: F811
    from enginefixtures import require_engine

    from analyzer.engine import start_engine
    from analyzer.engine.options import EngineOptions

    handle = start_engine(require_engine(), options=EngineOptions(parallel=1, cache_ram_mib=0))
    try:
        exp = _experiment(tmp_path, ["Say hello.", "Say it again."],
                          {"factor": "interval", "values": ["0", "1"], "side_prompt": "Another user: hi"})
        result = _run(exp, pi_app, handle.base_url, tmp_path / "obs")
    finally:
        handle.stop()
    sides = [t.side_request for t in result.app.turns]
    # only the treatment's second turn follows a pause
    assert [s is not None for s in sides] == [False, False, False, True]
    assert sides[3]["status"] == 200 and sides[3]["prompt"] > 0
    assert len(result.rows) == 4   # the side conversation is not one of the session's rows
    # one slot, no prompt cache in RAM: the side conversation evicted the session's prefix
    later = read_usage(result.rows[3]["usage"], result.rows[3].get("timings"))
    control = read_usage(result.rows[1]["usage"], result.rows[1].get("timings"))
    assert later.cached is not None and control.cached is not None and later.cached < control.cached // 2
