"""A hazard finding's experiment priced: the treatment session's first request against the control's, "this
finding costs N tokens, $X per new session at DeepSeek's prices", in the observe summary and its record.

The expected figures are the arithmetic by hand: one token per character, the published DeepSeek rates the shipped
price file carries (deepseek-flash off-peak: $0.15 uncached input, $0.003 cache read per 1,000,000 tokens)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from renderfixtures import CharServer

from analyzer.cost.session import new_session_costs
from analyzer.observe.record import session_cost_observations
from analyzer.observe.summary import cost_lines, session_costs
from analyzer.prefix import analyse
from analyzer.records import sentences

M = 1_000_000
HEAD = "You are a coding agent. Work in "
TAIL = ". Be brief."


def row(series: str, value: str, index: int, started: str, *, cached: int) -> dict[str, Any]:
    body = {"model": "local", "messages": [{"role": "system", "content": HEAD + value + TAIL},
                                           {"role": "user", "content": "Say hello."}]}
    prompt = len(CharServer().render(body).tokens)
    return {"schema": "analyzer.observe/1", "series": series, "value": value, "index": index, "factor": "env",
            "started_at": started, "request_body": json.dumps(body),
            "config": {"model": "local", "url": "http://127.0.0.1:1/v1"},
            "usage": {"prompt_tokens": prompt, "prompt_tokens_details": {"cached_tokens": cached},
                      "completion_tokens": 3}}


def rows() -> list[dict[str, Any]]:
    # Monday 2026-12-07 05:00 UTC = 13:00 Beijing time: DeepSeek's off-peak lunch gap
    return [row("control", "/srv/app", 0, "2026-12-07T05:00:00Z", cached=0),
            row("treatment", "/tmp/pkg", 0, "2026-12-07T05:01:00Z", cached=len("<system>" + HEAD + "/"))]


def test_the_treatments_first_request_is_priced_from_where_the_value_enters_the_prompt() -> None:
    log = rows()
    prefix = analyse(log, against="control", renderer=CharServer())
    [c] = new_session_costs(log, prefix)
    # both prompts are "<system>" + HEAD + value + TAIL + "<user>Say hello.<assistant>"; values differ after "/"
    total = len("<system>" + HEAD + "/srv/app" + TAIL + "<user>Say hello.<assistant>")
    recomputed = total - len("<system>" + HEAD + "/")
    assert (c.series, c.row, c.baseline_row, c.tokens) == ("treatment", 2, 1, recomputed)
    assert c.money == pytest.approx(recomputed * (0.15 - 0.003) / M)
    assert c.family == "deepseek-flash" and c.period == "off_peak" and "api-docs.deepseek.com" in c.source
    assert c.where == "system (messages[0])"


def test_the_summary_line_and_the_record_say_the_finding_costs_per_new_session() -> None:
    log = rows()
    prefix = analyse(log, against="control", renderer=CharServer())
    costs, error = session_costs(log, prefix)
    assert error is None and len(costs) == 1
    summary = {"session_cost": costs, "source": {"finding": "28fc8e2a37cc"}}
    [line] = cost_lines(summary)
    n = costs[0]["tokens"]
    assert line.startswith(f"this finding (28fc8e2a37cc) costs {n:,} tokens, $")
    assert "per new session at deepseek-flash prices, off-peak: https://api-docs.deepseek.com" in line
    assert "checked 2026-12-07" in line
    for lang in ("en", "zh"):
        [said] = session_cost_observations(sentences("observe_app", lang), summary)
        assert f"{n:,}" in said and "28fc8e2a37cc" in said and "api-docs.deepseek.com" in said


def test_a_treatment_that_shares_the_control_prompt_costs_nothing() -> None:
    log = rows()
    log[1] = row("treatment", "/srv/app", 0, "2026-12-07T05:01:00Z", cached=40)
    [c] = new_session_costs(log, analyse(log, against="control", renderer=CharServer()))
    assert c.tokens == 0 and c.money == 0.0
    assert "costs nothing per new session" in cost_lines({"session_cost": [c.as_json()]})[0]


def test_a_log_without_a_control_series_is_not_priced() -> None:
    log = [row("proxy", "x", 0, "2026-12-07T05:00:00Z", cached=0)]
    prefix = analyse(log, renderer=CharServer())
    assert session_costs(log, prefix) == ([], None)


def test_a_value_changed_mid_session_is_priced_at_the_turn_it_changes() -> None:
    log = [row("control", "/srv/app", 0, "2026-12-07T05:00:00Z", cached=0),
           row("control", "/srv/app", 1, "2026-12-07T05:00:10Z", cached=50),
           row("treatment", "/srv/app", 0, "2026-12-07T05:01:00Z", cached=80),
           row("treatment", "/tmp/pkg", 1, "2026-12-07T05:01:10Z", cached=41)]
    [c] = new_session_costs(log, analyse(log, against="control", renderer=CharServer()))
    assert c.row == 4 and c.baseline_row == 2 and c.tokens > 0
    line = cost_lines({"session_cost": [c.as_json()], "vary": {"from_turn": 2}})[0]
    assert "each time it changes inside a session (turn 2)" in line
