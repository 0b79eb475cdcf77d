"""`analyze replay`: a recorded log re-sent in order (as recorded or fixed), recorded like the proxy records, and
against the real local engine the fix what-if's predicted gain set beside the gain replay measures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from observe_server import fake_engine

from analyzer.cli import main
from analyzer.cost.fixes import parse_fix
from analyzer.cost.replay import Spacing, measured_cached, replay, within

STABLE = "You are a careful assistant. Answer in one short sentence. " * 6


def log_rows(stamps: list[str], *, minutes_apart: int = 1) -> list[dict[str, Any]]:
    rows = []
    turns: list[dict[str, Any]] = []
    for i, stamp in enumerate(stamps):
        turns = [*turns, {"role": "user", "content": f"question {i}: what is {i} plus {i}?"}]
        body = {"model": "local", "max_tokens": 4, "temperature": 0,
                "messages": [{"role": "system", "content": f"Session time {stamp}.\n{STABLE}"}, *turns]}
        rows.append({"series": "proxy", "index": i, "started_at": f"2026-12-07T02:{i * minutes_apart:02d}:00Z",
                     "usage": {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 0},
                               "completion_tokens": 4},
                     "config": {"model": "local", "url": "http://127.0.0.1:1/v1/chat/completions"},
                     "request_body": json.dumps(body)})
        turns = [*turns, {"role": "assistant", "content": f"It is {2 * i}."}]
    return rows


def test_replay_resends_in_order_records_like_the_proxy_and_applies_the_fix(tmp_path: Path) -> None:
    rows = log_rows(["09:00:01", "09:01:02", "09:02:03"])
    slept: list[float] = []
    with fake_engine() as engine:
        as_recorded = replay(rows, engine.base_url, tmp_path / "a", spacing=Spacing("compressed"),
                             sleep=slept.append)
    with fake_engine() as engine:
        fixed = replay(rows, engine.base_url, tmp_path / "b", fixes=[parse_fix("replace:[0-9:]{8}=today")],
                       spacing=Spacing("compressed"), sleep=slept.append)
        sent = [r["body"]["messages"][0]["content"] for r in engine.received]
    assert slept == []          # compressed: nothing waited
    assert [r["replayed_row"] for r in as_recorded.rows] == [1, 2, 3]
    assert all(r["source"] == "replay" and r["schema"] == "analyzer.observe/1" for r in fixed.rows)
    assert sent[0].startswith("Session time today.") and fixed.rows[0]["fix"]
    written = [json.loads(line) for line in fixed.log.read_text(encoding="utf-8").splitlines()]
    assert [json.loads(r["request_body"])["messages"][0]["content"] for r in written] == sent
    # the fake engine keeps one slot: the time stamp broke every prefix as recorded, the fix lets them match
    assert measured_cached(fixed.rows) > measured_cached(as_recorded.rows)


def test_replay_cli_says_what_it_measured_and_that_it_could_not_predict(tmp_path: Path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in log_rows(["a", "b"])), encoding="utf-8")
    with fake_engine() as engine:
        code = main(["replay", str(log), "--url", engine.base_url, "--spacing", "compressed",
                     "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0 and "replayed 2 requests" in out and "as recorded" in out and "cached tokens: measured" in out
    assert "no prediction" in out     # the fake has no /apply-template to tokenize with
    assert main(["replay", str(log), "--url", "http://127.0.0.1:9/v1", "--fix", "nonsense"]) == 2


def test_within_is_five_percent_or_sixteen_tokens() -> None:
    assert within(100, 110) and within(1000, 1049) and not within(1000, 1100) and not within(0, 17)


@pytest.mark.engine
def test_fix_gain_predicted_by_the_whatif_matches_replay_on_the_real_engine(tmp_path: Path) -> None:
    from enginefixtures import require_engine

    from analyzer.cost.bill import bill
    from analyzer.cost.fixsim import fix_whatif
    from analyzer.cost.prices import load_book
    from analyzer.engine import start_engine
    from analyzer.prefix.tokens import LlamaServerRenderer

    rows = log_rows(["09:00:01", "09:01:02", "09:02:03", "09:03:04"])
    fix = [parse_fix("replace:[0-9:]{8}=today")]
    cache = require_engine()
    measured = {}
    predicted_gain = None
    for name, fixes in (("recorded", []), ("fixed", fix)):
        handle = start_engine(cache)             # a fresh engine per version: a replay warms the cache
        try:
            result = replay(rows, handle.base_url, tmp_path / name, fixes=fixes, spacing=Spacing("compressed"))
            assert result.failed == 0
            measured[name] = measured_cached(result.rows)
            # the engine's slot count as its /props reports it, recorded in the replayed rows
            assert isinstance(result.rows[0]["server"].get("total_slots"), int)
            if predicted_gain is None:
                report = bill(rows, load_book(), provider="deepseek")
                what = fix_whatif(rows, report, fix, renderer=LlamaServerRenderer(handle.base_url), rule="llama.cpp",
                                  settings={"total_slots": result.rows[0]["server"]["total_slots"]})
                predicted_gain = what.cached_gain()
        finally:
            handle.stop()
    measured_gain = measured["fixed"] - measured["recorded"]
    assert measured_gain > 0
    assert predicted_gain is not None and within(predicted_gain, measured_gain), (predicted_gain, measured_gain)
