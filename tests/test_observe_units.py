"""Small units of `analyze observe`: usage-field normalisation, Retry-After parsing, scrubbing, log names."""

from __future__ import annotations

import datetime as _dt
import email.utils
import time
from pathlib import Path

from analyzer.observe.client import _retry_after
from analyzer.observe.jsonl import log_path, scrub
from analyzer.requests.usage import read_usage


def test_each_provider_shape_is_read_from_its_own_field() -> None:
    deepseek = read_usage({"prompt_tokens": 100, "prompt_cache_hit_tokens": 64, "prompt_cache_miss_tokens": 36,
                       "prompt_tokens_details": {"cached_tokens": 1}})
    assert (deepseek.prompt, deepseek.cached, deepseek.cached_field) == (100, 64, "usage.prompt_cache_hit_tokens")
    openai = read_usage({"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 80}})
    assert (openai.cached, openai.cached_field) == (80, "usage.prompt_tokens_details.cached_tokens")
    anthropic = read_usage({"input_tokens": 10, "cache_read_input_tokens": 80, "cache_creation_input_tokens": 5})
    assert (anthropic.prompt, anthropic.cached) == (95, 80)
    timings = read_usage({"prompt_tokens": 100}, {"cache_n": 90, "prompt_n": 10})
    assert (timings.prompt, timings.cached, timings.cached_field) == (100, 90, "timings.cache_n")
    only_timings = read_usage(None, {"cache_n": 7, "prompt_n": 3})
    assert (only_timings.prompt, only_timings.prompt_field) == (10, "timings.cache_n + timings.prompt_n")
    none = read_usage({"prompt_tokens": 5})
    assert (none.prompt, none.cached, none.cached_field) == (5, None, None)


def test_retry_after_seconds_date_missing_and_cap() -> None:
    assert _retry_after("2", 0, 60) == (2.0, "2")
    assert _retry_after("120", 0, 30)[0] == 30.0
    future = email.utils.formatdate(time.time() + 100, usegmt=True)
    assert 90 <= _retry_after(future, 0, 1000)[0] <= 101
    assert _retry_after(None, 0, 60)[0] == 1.0 and _retry_after(None, 3, 60)[0] == 8.0
    assert _retry_after("soon", 1, 60)[0] == 2.0


def test_scrub_removes_the_key_and_bearer_credentials() -> None:
    text = 'error: {"Authorization": "Bearer sk-abc123"} key sk-secret-42 again sk-secret-42'
    out = scrub(text, ["sk-secret-42"])
    assert "sk-abc123" not in out and "sk-secret-42" not in out and out.count("[redacted]") == 3


def test_log_names_are_safe_and_never_collide(tmp_path: Path) -> None:
    now = _dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=_dt.UTC)
    first = log_path(tmp_path, "my exp/../x", now)
    assert first.parent == tmp_path and first.name == "my-exp-..-x-20260102T030405Z.jsonl"
    first.write_text("")
    assert log_path(tmp_path, "my exp/../x", now).name.endswith("-2.jsonl")


def test_the_command_module_imports_no_heavy_library() -> None:
    import subprocess
    import sys
    code = ("import sys, analyzer.cli.commands.observe, analyzer.cli.commands.reconcile; "
            "heavy = [m for m in ('httpx', 'numpy', 'networkx', 'git', 'analyzer.observe.runner') "
            "if m in sys.modules]; "
            "print(heavy); sys.exit(1 if heavy else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _row(series: str, index: int, cached: int | None, *, prompt: int = 100, outcome: str = "ok",
         system: str = "s") -> dict:
    usage = None if cached is None else {"prompt_tokens": prompt, "prompt_tokens_details": {"cached_tokens": cached}}
    return {"experiment": "e", "factor": "system-prefix", "series": series, "index": index, "measured": True,
            "outcome": outcome, "status": 200 if outcome == "ok" else None, "usage": usage, "ttft_s": 0.1,
            "total_s": 0.2, "config": {"endpoint": "http://x/v1", "model": "m"},
            "server": {} if outcome != "ok" else {"model": "m1"},
            "parts": {"system": {"sha256": system}, "tools": {"sha256": "t"}, "messages": {"sha256": "m"}}}


def test_summary_figures_and_drop_from_rows() -> None:
    from analyzer.observe.summary import summarise

    rows = [_row("control", 1, None, outcome="connection-error"), _row("control", 2, 90), _row("control", 3, 90),
            _row("treatment", 1, 90), _row("treatment", 2, 95, system="s2"), _row("treatment", 3, 10, system="s3")]
    s = summarise(rows)
    control, treatment = s["series"]
    assert (control["requests"], control["ok"], control["failed"]) == (3, 2, 1)
    assert control["hit_percent_after_first"] == 90.0 and control["prompt_tokens"] == 200
    assert treatment["hit_percent"] == round(100 * 195 / 300, 1)
    assert s["server"] == {"model": "m1"}  # from the first answered row
    assert s["drop"] == {"series": "treatment", "index": 3, "value": None, "cached_tokens": 10,
                         "control_cached_tokens": 90, "prompt_tokens": 100, "changed_parts": ["system"]}


def test_an_app_runs_requests_read_the_prefix_reports_typed_entries() -> None:
    """Where each request first differs from its baseline, in the app summary's terms: the field's path, the
    text on both sides with whitespace made visible, the token and the tokens lost; no entry without a report."""
    import json

    from analyzer.observe.summary import prefix_entries
    from analyzer.prefix import analyse

    def row(series: str, index: int, system: str, cached: int) -> dict:
        body = {"model": "m", "messages": [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]}
        return {"series": series, "index": index, "request_body": json.dumps(body), "server": {"version": "x"},
                "usage": {"prompt_tokens": 40, "prompt_tokens_details": {"cached_tokens": cached}}}

    rows = [row("control", 1, "You help.\nLine two", 0), row("treatment", 1, "You help.\nLine 2 now", 3)]
    entries = prefix_entries(analyse(rows, against="control", rule="vllm"))
    assert set(entries) == {("control", 1), ("treatment", 1)}
    control, treatment = entries[("control", 1)], entries[("treatment", 1)]
    assert control.divergence is None and control.baseline_row is None and control.reported_cached == 0
    assert treatment.baseline_row == 1 and treatment.row == 2 and treatment.reported_cached == 3
    assert treatment.divergence is not None
    assert {k: treatment.divergence[k] for k in ("kind", "part", "offset", "old", "new")} == {
        "kind": "changed", "part": "messages[0]", "offset": 15, "old": "two", "new": "2·now"}
    assert treatment.divergence["token"] is not None and treatment.divergence["lost"] > 0
    assert prefix_entries(None) == {}
