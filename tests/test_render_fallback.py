"""An engine that cannot render a log (no `/apply-template`, an answer without "prompt") is quoted and every
request is estimated instead — in `prefix` and in the cost what-ifs alike, which build the cache model's
arrivals the one way (`analyzer.prefix.arrivals`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from observe_server import fake_engine
from renderfixtures import CharServer

from analyzer.api.cost import CostOptions, cost
from analyzer.cli import main
from analyzer.cost.bill import bill
from analyzer.cost.fixes import parse_fix
from analyzer.cost.fixsim import fix_whatif
from analyzer.cost.prices import load_book
from analyzer.prefix import analyse
from analyzer.prefix.tokens import LlamaServerRenderer, RenderError

SYSTEM = "You are a terse helper. Reply in one word. " * 4
ANSWER = " Ok."


def rows(n: int = 3, *, answer: str | None = None, clock: bool = True) -> list[dict[str, Any]]:
    out, turns = [], []
    for i in range(n):
        turns = [*turns, {"role": "user", "content": f"question {i}"}]
        system = f"Now 0{i}:00. {SYSTEM}" if clock else SYSTEM
        body = {"model": "local", "messages": [{"role": "system", "content": system}, *turns]}
        row: dict[str, Any] = {"series": "proxy", "index": i, "started_at": f"2026-12-07T05:0{i}:00Z",
                               "usage": {"prompt_tokens": 60 + 10 * i, "prompt_tokens_details": {"cached_tokens": 0},
                                         "completion_tokens": 3},
                               "config": {"model": "local", "url": "http://127.0.0.1:1/v1/chat/completions"},
                               "request_body": json.dumps(body)}
        if answer is not None:
            row["server"] = {"settings": {"answer": answer}}
        out.append(row)
        turns = [*turns, {"role": "assistant", "content": answer or "Ok."}]
    return out


def test_a_server_that_answers_apply_template_without_a_prompt_is_a_render_error_not_a_traceback() -> None:
    with fake_engine() as engine:          # answers every POST with a chat completion: no "prompt" in it
        renderer = LlamaServerRenderer(engine.base_url)
        try:
            renderer.render({"messages": [{"role": "user", "content": "hi"}]})
        except RenderError as exc:
            said = str(exc)
        else:
            raise AssertionError("a render without a prompt must fail")
        finally:
            renderer.close()
    assert "/apply-template answered without a \"prompt\"" in said and "choices" in said


def test_prefix_quotes_a_server_without_apply_template_and_estimates(tmp_path: Path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows()), encoding="utf-8")
    with fake_engine() as engine:
        engine.script = {1: ("status", 404, "File Not Found")}
        code = main(["prefix", str(log), "--engine-url", engine.base_url])
    captured = capsys.readouterr()
    assert code == 0 and "Traceback" not in captured.err
    assert "could not render it" in captured.out and "HTTP 404: File Not Found" in captured.out
    assert "assumed: a plain template" in captured.out


def test_prefix_report_falls_back_when_the_answer_has_no_prompt() -> None:
    with fake_engine() as engine:
        rep = analyse(rows(), engine_url=engine.base_url)
    assert not rep.exact and len(rep.render_errors) == 1 and "without a \"prompt\"" in rep.render_errors[0]
    assert all(r.prompt_tokens > 0 for r in rep.requests)


def test_cost_fix_whatif_falls_back_to_estimates_for_both_versions_with_the_engines_error() -> None:
    with fake_engine() as engine:
        report = cost(rows(), CostOptions(provider="deepseek", engine_url=engine.base_url,
                                          fixes=("replace:Now 0[0-9]:00=Today",)))
    fix = report.whatif["fix"]
    assert fix["render_errors"] and "without a \"prompt\"" in fix["render_errors"][0]
    assert fix["tokens"].startswith("assumed: a plain template")
    # the clock broke every prefix as recorded; the fix lets the later requests read the earlier ones
    assert fix["cached_tokens_gain"] > 0


def test_fix_whatif_predicts_what_prefix_predicts_with_the_servers_fixed_answer_counted() -> None:
    """The engine keeps the answer it generated in the slot; both commands must count it the same way."""
    log = rows(3, answer=ANSWER, clock=False)
    settings = {"total_slots": 1}
    rep = analyse(log, renderer=CharServer(), rule="llama.cpp", settings=settings)
    what = fix_whatif(log, bill(log, load_book(), provider="deepseek"), [parse_fix("sort-tools")],
                      renderer=CharServer(), rule="llama.cpp", settings=settings)
    by_prefix = {r.row: r.predicted for r in rep.requests}
    assert {r.row: r.recorded.cached for r in what.rows} == by_prefix
    # the slot holds row 1's prompt and the answer's first output − 1 = 2 characters (" O"), which row 2 repeats
    first = CharServer().render(json.loads(log[0]["request_body"]))
    assert by_prefix[2] == len(first.tokens) + 2
