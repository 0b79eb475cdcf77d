"""`analyze observe` against the real local engine (llama-server, started by the session fixtures).

These are the behaviours the issue names: natural hits, a changing system-prompt prefix vs suffix, the tools
order, a refused two-factor file, Ctrl-C mid-run, and a sentinel API key that never reaches a written file.
Timings are recorded and summarised, never asserted. What the engine does is observed through
`analyzer.api.observe`; the refusal, Ctrl-C and the key through the command line, which owns them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from observe_fixtures import experiment, write

from analyzer.api import ObserveOptions, observe
from analyzer.cli import main
from analyzer.observe.experiment import load_experiment
from analyzer.observe.jsonl import read_rows

pytestmark = pytest.mark.engine


def _observe(name: str, base_url: str, tmp_path: Path) -> tuple[int, dict, list[dict]]:
    """A shipped experiment against the engine: exit code, summary, the rows on disk."""
    done = observe(load_experiment(name).with_endpoint(base_url=base_url), ObserveOptions(out_dir=tmp_path / "obs"))
    return done.exit_code, done.summary, read_rows(done.log)


def _measured(summary: dict, series: str) -> list[dict]:
    return [r for r in summary["requests"] if r["series"] == series and r["measured"]]


def test_natural_hits_show_cached_tokens_on_requests_2_and_later(local_engine, tmp_path: Path) -> None:
    code, summary, rows = _observe("natural-hits", local_engine.base_url, tmp_path)
    assert code == 0 and all(r["outcome"] == "ok" for r in rows)
    assert summary["cached_field"] == "usage.prompt_tokens_details.cached_tokens"
    reqs = _measured(summary, "control")
    assert len(reqs) == 4 and reqs[0]["prompt_tokens"] > 1000
    for r in reqs[1:]:
        assert r["cached_tokens"] >= 0.95 * r["prompt_tokens"]
    for row in rows:  # llama.cpp also says it in timings; the raw objects are kept verbatim
        assert row["usage"]["prompt_tokens_details"]["cached_tokens"] == row["timings"]["cache_n"]


def test_system_prefix_leaves_almost_nothing_cached(local_engine, tmp_path: Path) -> None:
    _, summary, _ = _observe("system-prefix-timestamp", local_engine.base_url, tmp_path)
    control, treatment = _measured(summary, "control"), _measured(summary, "treatment")
    assert all(r["cached_tokens"] >= 0.95 * r["prompt_tokens"] for r in control[1:])
    for r in treatment[1:]:  # the value changes on every request after the first
        assert r["cached_tokens"] <= 0.05 * r["prompt_tokens"]
    assert summary["drop"]["index"] == 2 and summary["drop"]["changed_parts"] == ["system"]


def test_system_suffix_keeps_nearly_all_of_the_prefix(local_engine, tmp_path: Path) -> None:
    _, summary, rows = _observe("system-suffix-timestamp", local_engine.base_url, tmp_path)
    treatment = _measured(summary, "treatment")
    for r in treatment[1:]:
        assert r["cached_tokens"] >= 0.7 * r["prompt_tokens"]
    # what is recomputed is the tail after the changed line: tools and messages, not the system prompt
    assert summary["drop"] is None or summary["drop"]["changed_parts"] == ["system"]


def test_tools_order_drop_is_at_the_tools_part(local_engine, tmp_path: Path) -> None:
    _, summary, rows = _observe("tools-order", local_engine.base_url, tmp_path)
    drop = summary["drop"]
    assert drop is not None and drop["index"] == 2 and drop["changed_parts"] == ["tools"]
    assert drop["cached_tokens"] < drop["control_cached_tokens"]
    # the system prompt before the tools stays cached
    assert drop["cached_tokens"] >= 0.5 * drop["prompt_tokens"]
    assert rows[4]["parts"]["tools"]["names"] == ["gate_slots", "container_status", "tide_table", "vessel_schedule"]


def test_a_two_factor_file_is_refused_before_anything_is_sent(local_engine, tmp_path: Path, capsys) -> None:
    data = experiment("system-prefix", endpoint={"base_url": local_engine.base_url})
    data["vary"]["tools"] = []
    code = main(["observe", str(write(tmp_path / "two.toml", data)), "--out", str(tmp_path / "obs")])
    err = capsys.readouterr().err
    assert code == 3 and "changes two things: factor 'system-prefix' and the tools" in err
    assert not (tmp_path / "obs").exists()


def test_ctrl_c_mid_run_leaves_a_parseable_jsonl(local_engine, tmp_path: Path) -> None:
    data = experiment("none", endpoint={"base_url": local_engine.base_url}, run={"requests": 30, "interval_s": 0.2})
    out_dir = tmp_path / "obs"
    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "observe", str(write(tmp_path / "e.toml", data)),
                             "--out", str(out_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    logs: list[Path] = []
    while time.monotonic() < deadline and proc.poll() is None:
        logs = list(out_dir.glob("*.jsonl")) if out_dir.exists() else []
        if logs and logs[0].read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    rows = read_rows(logs[0])
    assert 2 <= len(rows) < 30 and all(r["outcome"] == "ok" and r["usage"] for r in rows)
    assert f"interrupted: {len(rows)} of 30 requests finished" in err


def test_sentinel_api_key_never_appears_in_any_written_file(local_engine_with_key, tmp_path: Path, capsys,
                                                            monkeypatch) -> None:
    key = local_engine_with_key.api_key
    assert key
    monkeypatch.setenv("OBSERVE_ENGINE_KEY", key)
    record = tmp_path / "record.md"
    code = main(["--json", "-v", "observe", "system-prefix-timestamp", "--base-url", local_engine_with_key.base_url,
                 "--api-key-env", "OBSERVE_ENGINE_KEY", "--out", str(tmp_path / "obs"), "--record", str(record)])
    cap = capsys.readouterr()
    rows = read_rows(Path(json.loads(cap.out)["log"]))
    assert code == 0 and all(r["status"] == 200 for r in rows)  # the server accepted the key
    # without the key the same server refuses: the key really was what let the requests in
    monkeypatch.delenv("OBSERVE_ENGINE_KEY")
    code2 = main(["--json", "observe", "natural-hits", "--base-url", local_engine_with_key.base_url,
                  "--out", str(tmp_path / "obs")])
    cap2 = capsys.readouterr()
    assert code2 == 1 and "401" in cap2.out
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert record in written and len(written) >= 3
    for p in written:
        assert key not in p.read_text(errors="replace"), p
    for text in (cap.out, cap.err, cap2.out, cap2.err):
        assert key not in text
    assert os.environ.get("OBSERVE_ENGINE_KEY") is None
