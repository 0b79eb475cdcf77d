"""Observations against a loopback fake engine: rows, summary, record, faults, Ctrl-C and the API key.

What a run does is tested through `analyzer.api.observe`; the command line only for what it adds (the JSON
and text it prints, exit codes, environment overrides, the progress bar, the error lines)."""

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
from observe_server import fake_engine

from analyzer.api import ObserveOptions, ObserveResult, observe
from analyzer.api.observe import summarize_log
from analyzer.cli import main
from analyzer.errors import AnalyzerError
from analyzer.observe.experiment import load_experiment
from analyzer.observe.jsonl import read_rows

ROW_KEYS = {"series", "index", "value", "since_previous_s", "ttft_s", "total_s", "status", "usage", "config",
            "parts", "server", "error", "outcome"}


def _observe(tmp_path: Path, data: dict, **options: object) -> tuple[ObserveResult, list[dict]]:
    """One run through the library; the rows as they are on disk."""
    exp = load_experiment(str(write(tmp_path / "exp.toml", data)))
    done = observe(exp, ObserveOptions(out_dir=tmp_path / "obs", **options))  # type: ignore[arg-type]
    return done, read_rows(done.log)


def _run(tmp_path: Path, capsys, data: dict, *extra: str) -> tuple[int, dict, list[dict], str]:
    """One run through the command line (`--json`): exit code, printed summary, rows, stderr."""
    p = write(tmp_path / "exp.toml", data)
    code = main(["--json", "observe", str(p), "--out", str(tmp_path / "obs"), *extra])
    cap = capsys.readouterr()
    summary = json.loads(cap.out)
    rows = read_rows(Path(summary["log"]))
    return code, summary, rows, cap.err


def test_rows_keep_raw_usage_verbatim_and_the_config(tmp_path: Path, capsys) -> None:
    with fake_engine() as engine:
        done, rows = _observe(tmp_path, experiment("system-prefix", endpoint={"base_url": engine.base_url}))
        summary = done.summary
        assert done.exit_code == 0 and len(rows) == 6 and done.run.rows == rows
        assert [r["usage"] for r in rows] == engine.sent_usage
        assert rows[0]["timings"]["cache_n"] == 0 and rows[1]["timings"]["cache_n"] > 0
    log = Path(summary["log"])
    assert log.parent == tmp_path / "obs" and log.name.startswith("test-system-prefix-") and log.suffix == ".jsonl"
    for i, row in enumerate(rows):
        assert ROW_KEYS <= set(row)
        assert row["config"]["endpoint"] == engine.base_url and row["config"]["model"] == "local"
        assert row["config"]["max_tokens"] == 4 and row["config"]["overrides"] == {}
        assert set(row["parts"]) == {"system", "tools", "messages"} and row["parts"]["system"]["bytes"] > 2000
        assert row["server"]["model"] == "fake-model" and row["server"]["system_fingerprint"] == "fp_fake"
        assert row["server"]["version"] == "llama.cpp fake-engine-1"
        assert (row["since_previous_s"] is None) == (i == 0)
        assert isinstance(row["ttft_s"], float) and isinstance(row["total_s"], float)
    assert [r["series"] for r in rows] == ["control"] * 3 + ["treatment"] * 3
    assert [r["value"] for r in rows[3:]] == ["Time 10:00:01.", "Time 10:00:02.", "Time 10:00:03."]


def test_summary_names_the_field_and_the_changed_part(tmp_path: Path) -> None:
    with fake_engine() as engine:
        done, rows = _observe(tmp_path, experiment("tools-order", endpoint={"base_url": engine.base_url}))
    summary = done.summary
    assert summary["cached_field"] == "usage.prompt_tokens_details.cached_tokens"
    control, treatment = summary["series"]
    assert control["name"] == "control" and control["requests"] == 3
    assert control["prompt_tokens"] == sum(r["usage"]["prompt_tokens"] for r in rows[:3])
    assert control["cached_tokens"] == sum(r["usage"]["prompt_tokens_details"]["cached_tokens"] for r in rows[:3])
    assert set(control["ttft_s"]) == {"median", "min", "max", "n"}
    drop = summary["drop"]
    assert drop["index"] == 2 and drop["changed_parts"] == ["tools"]
    assert drop["cached_tokens"] < drop["control_cached_tokens"]


def test_text_summary_lists_series_and_the_drop(tmp_path: Path, capsys) -> None:
    with fake_engine() as engine:
        p = write(tmp_path / "exp.toml", experiment("system-prefix", endpoint={"base_url": engine.base_url}))
        assert main(["observe", str(p), "--out", str(tmp_path / "obs")]) == 0
    out = capsys.readouterr().out
    assert "cached tokens from: usage.prompt_tokens_details.cached_tokens" in out
    assert "control: 3/3 ok" in out and "treatment: 3/3 ok" in out and "TTFT" in out
    assert "hits dropped at treatment request 2" in out and "part whose digest changed: system" in out


@pytest.mark.parametrize("style, field", [("deepseek", "usage.prompt_cache_hit_tokens"),
                                          ("anthropic", "usage.cache_read_input_tokens")])
def test_other_providers_usage_fields_are_normalised(tmp_path: Path, style: str, field: str) -> None:
    with fake_engine(usage_style=style) as engine:
        done, rows = _observe(tmp_path, experiment("none", endpoint={"base_url": engine.base_url}))
        assert [r["usage"] for r in rows] == engine.sent_usage
    summary = done.summary
    assert summary["cached_field"] == field
    key = "prompt_cache_hit_tokens" if style == "deepseek" else "cache_read_input_tokens"
    assert [r["cached_tokens"] for r in summary["requests"]] == [r["usage"][key] for r in rows]
    assert summary["requests"][1]["cached_tokens"] > 0


def test_non_streaming_requests_work_too(tmp_path: Path) -> None:
    with fake_engine() as engine:
        done, rows = _observe(tmp_path, experiment("none", endpoint={"base_url": engine.base_url},
                                                   run={"stream": False}))
        assert "stream_options" not in engine.received[0]["body"]
    assert done.exit_code == 0 and rows[1]["usage"] == engine.sent_usage[1] and rows[0]["ttft_s"] is None


def test_base_url_and_model_overrides_are_recorded(tmp_path: Path, capsys, monkeypatch) -> None:
    with fake_engine() as engine:
        monkeypatch.setenv("ANALYZER_OBSERVE_BASE_URL", engine.base_url)
        _, _, rows, _ = _run(tmp_path, capsys, experiment("none"), "--model", "other")
        assert engine.received[0]["body"]["model"] == "other"
    assert rows[0]["config"]["overrides"] == {"base_url": engine.base_url, "model": "other"}


# ---- faults ------------------------------------------------------------------------------------------------


def test_connection_refused_becomes_rows(tmp_path: Path) -> None:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nobody listens once closed
    done, rows = _observe(tmp_path, experiment("none", endpoint={"base_url": f"http://127.0.0.1:{port}/v1"},
                                               run={"requests": 2}))
    assert done.exit_code == 1 and [r["outcome"] for r in rows] == ["connection-error"] * 2
    assert all(r["error"] and r["status"] is None and r["usage"] is None for r in rows)
    assert done.summary["series"][0]["failed"] == 2


def test_http_errors_and_stop_on_error(tmp_path: Path, capsys) -> None:
    with fake_engine() as engine:
        engine.script = {2: ("status", 500, "model exploded"), 3: ("status", 400, "bad request")}
        data = experiment("none", endpoint={"base_url": engine.base_url}, run={"requests": 4})
        done, rows = _observe(tmp_path, data)
        assert done.exit_code == 1 and [r["status"] for r in rows] == [200, 500, 400, 200]
        assert rows[1]["outcome"] == "http-error" and "model exploded" in rows[1]["error"]
        engine.script = {len(engine.received) + 2: ("status", 503, "overloaded")}
        done, rows = _observe(tmp_path, data, stop_on_error=True)
        assert done.exit_code == 1 and [r["status"] for r in rows] == [200, 503]
        assert done.summary["stopped_on_error"] is True and done.summary["planned"] == 4
        engine.script = {len(engine.received) + 2: ("status", 503, "overloaded")}
        code, _, _, err = _run(tmp_path, capsys, data, "--stop-on-error")  # what the command line says
    assert code == 1 and "stopped at the first failed request (2 of 4 written" in err


def test_429_honours_retry_after(tmp_path: Path) -> None:
    with fake_engine() as engine:
        engine.script = {2: ("429", "0"), 3: ("429", "0")}
        done, rows = _observe(tmp_path, experiment("none", endpoint={"base_url": engine.base_url},
                                                   run={"requests": 2}))
        assert len(engine.received) == 4
    assert done.exit_code == 0 and [r["outcome"] for r in rows] == ["ok", "ok"]
    assert rows[1]["retries"] == [{"status": 429, "retry_after": "0", "waited_s": 0.0}] * 2


def test_429_retries_are_bounded(tmp_path: Path) -> None:
    with fake_engine() as engine:
        engine.script = {n: ("429", "0") for n in range(1, 10)}
        done, rows = _observe(tmp_path, experiment("none", endpoint={"base_url": engine.base_url},
                                                   run={"requests": 1, "retries_429": 2}))
        assert len(engine.received) == 3
    assert done.exit_code == 1 and rows[0]["status"] == 429 and len(rows[0]["retries"]) == 2


def test_timeout_and_dropped_connection_become_rows(tmp_path: Path) -> None:
    with fake_engine() as engine:
        engine.script = {1: ("sleep", 2.0), 2: ("close",)}
        done, rows = _observe(tmp_path, experiment("none", endpoint={"base_url": engine.base_url,
                                                                     "timeout_s": 0.3}))
    assert done.exit_code == 1 and [r["outcome"] for r in rows] == ["timeout", "connection-error", "ok"]


def _start_with_sigint(disposition: signal.Handlers) -> None:
    """The child's SIGINT as its parent leaves it: default (a terminal) or ignored (a script's background job)."""
    signal.signal(signal.SIGINT, disposition)


@pytest.mark.parametrize(("sent", "sigint"), [
    (signal.SIGINT, signal.SIG_DFL),  # Ctrl-C at a terminal
    (signal.SIGINT, signal.SIG_IGN),  # `kill -INT` to a job a script started with `&` (SIGINT inherited ignored)
    (signal.SIGTERM, signal.SIG_DFL),  # `kill`
], ids=["sigint", "sigint-background-job", "sigterm"])
def test_ctrl_c_leaves_a_valid_jsonl(tmp_path: Path, sent: signal.Signals, sigint: signal.Handlers) -> None:
    with fake_engine(delay_s=0.4) as engine:
        p = write(tmp_path / "exp.toml", experiment("system-prefix", endpoint={"base_url": engine.base_url},
                                                    run={"requests": 10}))
        out_dir = tmp_path / "obs"
        proc = subprocess.Popen([sys.executable, "-m", "analyzer", "observe", str(p), "--out", str(out_dir)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: _start_with_sigint(sigint))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            logs = list(out_dir.glob("*.jsonl")) if out_dir.exists() else []
            if logs and logs[0].read_text().count("\n") >= 2:
                break
            time.sleep(0.05)
        proc.send_signal(sent)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    rows = read_rows(logs[0])
    assert 2 <= len(rows) < 20 and all(r["outcome"] == "ok" for r in rows)
    assert f"interrupted: {len(rows)} of 20 requests finished" in err and "Traceback" not in err


# ---- the API key ------------------------------------------------------------------------------------------


def _all_text(paths: list[Path]) -> str:
    return "\n".join(p.read_text(errors="replace") for p in paths if p.is_file())


def test_api_key_is_sent_but_never_written(tmp_path: Path, capsys, monkeypatch) -> None:
    key = "sk-observe-sentinel-0123456789abcdef"
    monkeypatch.setenv("OBSERVE_TEST_KEY", key)
    with fake_engine(api_key=key) as engine:
        data = experiment("system-prefix", endpoint={"base_url": engine.base_url, "api_key_env": "OBSERVE_TEST_KEY"})
        code, summary, rows, err = _run(tmp_path, capsys, data, "--record", str(tmp_path / "rec.md"), "-v")
        assert code == 0 and all(r["outcome"] == "ok" for r in rows)
        assert engine.received[0]["headers"]["Authorization"] == f"Bearer {key}"
        # a wrong key: the 401 row and every output stay clean too
        monkeypatch.setenv("OBSERVE_TEST_KEY", "sk-wrong-sentinel-abcdef")
        code2, _, rows2, err2 = _run(tmp_path, capsys, data)
    assert code2 == 1 and rows2[0]["status"] == 401 and "Invalid API Key" in rows2[0]["error"]
    written = _all_text(list((tmp_path / "obs").iterdir()) + [tmp_path / "rec.md"])
    for secret in (key, "sk-wrong-sentinel-abcdef"):
        assert secret not in written and secret not in err and secret not in err2
        assert secret not in json.dumps(summary)
    assert "Authorization" not in written and rows[0]["config"]["api_key_env"] == "OBSERVE_TEST_KEY"


# ---- the record -------------------------------------------------------------------------------------------

EN = ["Question (问题)", "Sources and versions (来源与版本)", "Inputs and config (输入与配置)",
      "The one thing changed (本次只改变)", "Direct observations (直接观察)", "Interpretation (我的解释)",
      "Not yet ruled out (尚未排除)", "Next check (下一次只验证)"]
ZH = ["问题", "来源与版本", "输入与配置", "本次只改变", "直接观察", "我的解释", "尚未排除", "下一次只验证"]


@pytest.mark.parametrize("lang, headings", [("en", EN), ("zh", ZH)])
def test_record_has_the_template_filled_from_the_run(tmp_path: Path, capsys, lang: str, headings: list[str]) -> None:
    with fake_engine() as engine:
        data = experiment("system-prefix", endpoint={"base_url": engine.base_url})
        _, summary, rows, _ = _run(tmp_path, capsys, data, "--record", str(tmp_path / "rec.md"), "--lang", lang)
    text = (tmp_path / "rec.md").read_text()
    positions = [text.index(f"**{h}") for h in headings]
    assert positions == sorted(positions)
    assert engine.base_url in text and "fake-model" in text and "llama.cpp fake-engine-1" in text
    assert "analyzer 0.1.0" in text and summary["log"] in text
    drop = summary["drop"]
    assert f"{drop['cached_tokens']:,}" in text and f"{drop['control_cached_tokens']:,}" in text
    for r in rows:
        assert f"{r['usage']['prompt_tokens']:,}" in text
    if lang == "zh":
        assert "前缀缓存" in text and "负载均衡" in text and "分词器" in text and "Interpretation" not in text
    else:
        assert "prefix cache" in text and "load balancing" in text and "tokenizer" in text


def test_record_for_natural_hits_says_requests_after_the_first_hit(tmp_path: Path) -> None:
    with fake_engine() as engine:
        done, _ = _observe(tmp_path, experiment("none", endpoint={"base_url": engine.base_url}), record=True,
                           record_file=tmp_path / "rec.md")
    text = (tmp_path / "rec.md").read_text()
    assert done.record == text and "Identical requests after the first were served largely from the cache" in text


@pytest.fixture(autouse=True)
def _no_env_overrides(monkeypatch) -> None:
    for key in ("ANALYZER_OBSERVE_BASE_URL", "ANALYZER_OBSERVE_MODEL"):
        monkeypatch.delenv(key, raising=False)
    os.environ.pop("OBSERVE_TEST_KEY", None)


def test_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from analyzer.cli import build_parser
    from analyzer.cli.commands import observe
    from analyzer.cli.context import CliContext

    with fake_engine(delay_s=0.05) as engine:
        p = write(tmp_path / "exp.toml", experiment("system-prefix", endpoint={"base_url": engine.base_url}))
        seen = {}
        for terminal in (True, False):
            err = io.StringIO()
            ctx = CliContext(out=Console(file=io.StringIO()), err=Console(file=err, force_terminal=terminal,
                                                                           width=100))
            args = build_parser()[0].parse_args(["observe", str(p), "--out", str(tmp_path / "obs")])
            assert observe.run(args, ctx) == 0
            seen[terminal] = err.getvalue()
    assert "observe" in seen[True] and "6/6" in seen[True]
    assert seen[False] == ""


def test_record_to_stdout_with_json_stays_valid_json(tmp_path: Path, capsys) -> None:
    with fake_engine() as engine:
        _, summary, _, _ = _run(tmp_path, capsys, experiment("none", endpoint={"base_url": engine.base_url}),
                                "--record", "-", "--lang", "zh")
    assert "record_file" not in summary and "**问题" in summary["record"]


def test_unwritable_record_path_is_one_error_and_the_log_is_kept(tmp_path: Path, capsys) -> None:
    """The command line's exit code and error line (the library raises the same `AnalyzerError`)."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with fake_engine() as engine:
        p = write(tmp_path / "exp.toml", experiment("none", endpoint={"base_url": engine.base_url}))
        code = main(["observe", str(p), "--out", str(tmp_path / "obs"), "--record", str(blocker / "rec.md")])
    err = capsys.readouterr().err
    assert code == 3 and err.startswith("error: cannot write the record") and err.count("\n") == 1
    logs = list((tmp_path / "obs").glob("*.jsonl"))
    assert len(logs) == 1 and len(read_rows(logs[0])) == 3


def test_shipped_deepseek_example_reads_its_key_from_the_environment(tmp_path: Path, capsys, monkeypatch) -> None:
    key = "sk-deepseek-sentinel-00000000000000"
    monkeypatch.setenv("DEEPSEEK_API_KEY", key)
    with fake_engine(api_key=key, usage_style="deepseek") as engine:
        code = main(["--json", "observe", "deepseek-system-prefix", "--base-url", engine.base_url,
                     "--out", str(tmp_path / "obs"), "--record", str(tmp_path / "rec.md")])
        out = capsys.readouterr().out
        assert engine.received[0]["body"]["model"] == "deepseek-chat"
    summary = json.loads(out)
    assert code == 0 and summary["cached_field"] == "usage.prompt_cache_hit_tokens"
    assert summary["drop"]["changed_parts"] == ["system"]
    assert key not in out and key not in _all_text(list((tmp_path / "obs").iterdir()) + [tmp_path / "rec.md"])


def test_record_numbers_are_the_same_in_both_languages(tmp_path: Path) -> None:
    import re

    from analyzer.observe.record import build_record

    with fake_engine() as engine:
        done, rows = _observe(tmp_path, experiment("tools-order", endpoint={"base_url": engine.base_url}))
    exp = load_experiment(str(tmp_path / "exp.toml"))
    texts = {lang: build_record(exp, done.summary, rows, lang=lang).to_markdown(lang) for lang in ("en", "zh")}
    numbers = {lang: sorted(re.findall(r"\d+(?:[,.]\d+)*", text)) for lang, text in texts.items()}
    assert numbers["en"] == numbers["zh"] and len(numbers["en"]) > 50


def test_summarize_recomputes_the_summary_from_a_log(tmp_path: Path, capsys) -> None:
    with fake_engine() as engine:
        done, _ = _observe(tmp_path, experiment("tools-order", endpoint={"base_url": engine.base_url}))
        sent = len(engine.received)
        again = summarize_log(done.log)
        assert len(engine.received) == sent
        assert main(["--json", "observe", "--summarize", str(done.log)]) == 0
        assert json.loads(capsys.readouterr().out) == again
    assert again["series"] == done.summary["series"] and again["drop"] == done.summary["drop"]
    assert again["drop"] is not None
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(AnalyzerError, match="holds no rows"):
        summarize_log(tmp_path / "empty.jsonl")
    assert main(["observe", "--summarize", str(tmp_path / "empty.jsonl")]) == 3
    assert "holds no rows" in capsys.readouterr().err


def test_a_server_that_ignores_stream_is_read_as_json(tmp_path: Path, capsys) -> None:
    with fake_engine() as engine:
        engine.script = {2: ("json",)}
        code, _, rows, _ = _run(tmp_path, capsys, experiment("none", endpoint={"base_url": engine.base_url}))
        assert code == 0 and rows[1]["usage"] == engine.sent_usage[1] and rows[1]["ttft_s"] is None
    assert rows[1]["outcome"] == "ok" and rows[0]["ttft_s"] is not None


def test_ctrl_c_landing_right_after_a_write_still_counts_that_row(tmp_path: Path) -> None:
    from analyzer.observe.direct import run_experiment
    from analyzer.observe.jsonl import RowWriter

    class InterruptedAfterSecondRow(RowWriter):
        def write(self, row: dict) -> None:
            super().write(row)
            if self.rows == 2:  # where a held SIGINT is delivered: the line is complete and synced
                raise KeyboardInterrupt

    with fake_engine() as engine:
        exp = load_experiment(str(write(tmp_path / "e.toml", experiment("none", endpoint={
            "base_url": engine.base_url}))))
        with InterruptedAfterSecondRow(tmp_path / "log.jsonl") as writer:
            result = run_experiment(exp, writer)
    assert result.interrupted and len(result.rows) == writer.rows == 2
    assert len(read_rows(tmp_path / "log.jsonl")) == 2
