"""Reconciling an observation log: observed raw usage replayed through the (fixture or pinned) upstream usage
code. What the replay finds is tested through `analyzer.api`; the command line only for its refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DSH_RC2, PI_V0_82_1, snapshot
from observe_fixtures import experiment, write
from observe_server import fake_engine
from test_usage_cli import args, repos, write_lock  # noqa: F401  (fixture)

from analyzer.api import ObserveOptions, ReconcileOptions, observe, open_session, reconcile
from analyzer.cli import main
from analyzer.errors import AnalyzerError
from analyzer.observe.jsonl import read_rows
from analyzer.usage.fromlog import scenario_from_log


def _row(**kw) -> dict:
    row = {"experiment": "e", "series": "control", "index": 1, "measured": True, "outcome": "ok", "status": 200,
           "config": {"endpoint": "http://127.0.0.1:8080/v1", "model": "local"},
           "usage": {"prompt_tokens": 1000, "completion_tokens": 5, "total_tokens": 1005,
                     "prompt_tokens_details": {"cached_tokens": 960}}}
    row.update(kw)
    return row


def _log(tmp_path: Path, rows: list[dict]) -> Path:
    p = tmp_path / "obs.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_rows_become_requests_and_skipped_rows_are_named(tmp_path: Path) -> None:
    rows = [_row(), _row(index=2, outcome="timeout", usage=None, status=None),
            _row(series="treatment", index=0, measured=False),
            _row(index=3, usage={"input_tokens": 40, "cache_read_input_tokens": 960, "output_tokens": 5}),
            _row(index=4, usage={"prompt_tokens": 1000, "completion_tokens": 5, "prompt_cache_hit_tokens": 896,
                                 "prompt_cache_miss_tokens": 104})]
    scenario, notes = scenario_from_log(_log(tmp_path, rows))
    assert [r.usage for r in scenario.requests] == [rows[0]["usage"], rows[4]["usage"]]
    assert [r.turn for r in scenario.requests] == [1, 2] and scenario.model == "local"
    assert scenario.provider == "openai-compatible" and scenario.registry is None
    assert len(notes) == 3 and "timeout" in notes[0] and "warm-up" in notes[1] and "no prompt_tokens" in notes[2]


def test_deepseek_endpoint_uses_the_registry_lookup(tmp_path: Path) -> None:
    row = _row(config={"endpoint": "https://api.deepseek.com/v1", "model": "deepseek-chat"})
    scenario, _ = scenario_from_log(_log(tmp_path, [row]))
    assert scenario.provider == "deepseek" and scenario.registry == ("deepseek", "deepseek-chat")


def test_a_log_without_usable_rows_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(AnalyzerError, match="no row with an OpenAI-compatible usage"):
        scenario_from_log(_log(tmp_path, [_row(outcome="connection-error", usage=None)]))
    (tmp_path / "torn.jsonl").write_text(json.dumps(_row()) + "\n{\"series\": ")
    with pytest.raises(AnalyzerError, match=r"torn.jsonl:2: not a JSON object"):
        scenario_from_log(tmp_path / "torn.jsonl")


def _observe_log(tmp_path: Path) -> Path:
    from analyzer.observe.experiment import load_experiment

    with fake_engine() as engine:
        data = experiment("system-prefix", endpoint={"base_url": engine.base_url})
        done = observe(load_experiment(str(write(tmp_path / "e.toml", data))), ObserveOptions(out_dir=tmp_path / "obs"))
    assert done.exit_code == 0
    return done.log


def _cached(row: dict) -> int:
    return row["usage"]["prompt_tokens_details"]["cached_tokens"]


def test_an_observe_log_replays_through_fixture_upstreams(tmp_path: Path, repos) -> None:  # noqa: F811
    log = _observe_log(tmp_path)
    rows = read_rows(log)
    session = open_session(write_lock(tmp_path, repos), cache_dir=tmp_path / "cache", environ={})
    done = reconcile(session, ReconcileOptions(from_log=log, route="pi-ai",
                                               repo_dirs={name: d for name, (d, _) in repos.items()}))
    ledger = done.document["routes"]["pi-ai"]
    assert done.ok and ledger["scenario"]["name"] == f"log:{log.name}"
    assert len(ledger["requests"]) == len(rows)
    for req, row in zip(ledger["requests"], rows, strict=True):
        provider = {f["name"]: f["value"] for f in req["provider"]}
        assert provider["prompt_tokens"] == row["usage"]["prompt_tokens"]
        assert provider["prompt_tokens_details.cached_tokens"] == _cached(row)
        pi = {f["name"]: f["value"] for f in req["pi_usage"]}
        assert pi["cacheRead"] == _cached(row) and pi["input"] == row["usage"]["prompt_tokens"] - _cached(row)


def test_cli_refuses_a_scenario_and_a_log_together(tmp_path: Path, capsys, repos) -> None:  # noqa: F811
    log = _log(tmp_path, [_row()])
    assert main([*args(tmp_path, repos, "deepseek-10k", "--from-log", str(log))]) == 3
    assert "not both" in capsys.readouterr().err


@pytest.mark.upstream
def test_observed_usage_through_the_pinned_upstreams(tmp_path: Path, cache_dir: Path) -> None:
    pi, dsh = snapshot("at-inc+pi", PI_V0_82_1), snapshot("deepseek-ai+deepseek-harness", DSH_RC2)
    log = _observe_log(tmp_path)
    rows = read_rows(log)
    done = reconcile(open_session(cache_dir=cache_dir), ReconcileOptions(
        from_log=log, route="pi-ai", repo_dirs={"pi": str(pi), "dsh": str(dsh)},
        at={"pi": PI_V0_82_1, "dsh": DSH_RC2}))
    ledger = done.document["routes"]["pi-ai"]
    assert done.ok and ledger["ok"] is True
    assert ledger["functions"]["parse"]["site"].startswith("pi:packages/ai/src/api/openai-completions.ts:")
    for req, row in zip(ledger["requests"], rows, strict=True):
        pi_usage = {f["name"]: f["value"] for f in req["pi_usage"]}
        dsh_usage = {f["name"]: f["value"] for f in req["dsh_usage"]}
        assert pi_usage["cacheRead"] == _cached(row)
        assert dsh_usage.get("cacheReadTokens", 0) == _cached(row)
    meter = {f["name"]: f["value"] for f in ledger["meter"]}
    assert meter["cacheReadTokens"] == sum(_cached(r) for r in rows)
