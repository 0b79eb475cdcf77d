"""`observe`: one controlled comparison, raw usage logged — its requests sent by the tool (a `[request]`
experiment) or built by a real app behind the recording proxy (an `[app]` experiment). A thin face over
analyzer.observe: the experiment, the two runners, the summary and the record live there."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analyzer.api.session import Session
    from analyzer.observe.experiment import Experiment
    from analyzer.observe.runner import Runner, RunResult

OnRow = Callable[[dict[str, Any], int, int], None]  # (row, done, total), after each row is on disk


@dataclass(frozen=True)
class ObserveOptions:
    """Where the JSONL log goes and the research record (`record`, in `lang`; written to `record_file` when
    given, else only returned). A `[request]` run: the API key (the value; it is scrubbed from everything
    written), whether to stop at the first failed request, `on_row` after each row. An `[app]` run: the app's
    commit (`at`, `NAME=SHA`; default the lock's pin) or an npm release by hand (`version`), and `say`, which
    hears progress (install, build, each turn)."""

    out_dir: Path = Path("observations")
    api_key: str | None = None
    stop_on_error: bool = False
    record: bool = False
    record_file: Path | None = None
    lang: str = "en"
    on_row: OnRow | None = None
    at: tuple[str, ...] = ()
    version: str | None = None
    say: Callable[[str], None] | None = None


@dataclass(frozen=True)
class ObserveResult:
    summary: dict[str, Any]  # analyzer.observe.summary's summary of the run (for an app run, with the app's part)
    log: Path
    run: RunResult
    record: str | None = None  # the record's Markdown, secrets scrubbed

    @property
    def exit_code(self) -> int:
        """0 every request (and app turn) succeeded, 1 some failed (or stopped at the first failure), 130
        interrupted."""
        return 130 if self.run.interrupted else 1 if self.run.stopped_on_error or self.run.failed else 0


def observe(experiment: Experiment, options: ObserveOptions = ObserveOptions(),
            session: Session | None = None) -> ObserveResult:
    """Run the experiment's control and treatment series; each row is appended to the log as it ends. An
    `[app]` experiment needs the `session` (the app is installed at its pin and its code looked up)."""
    from analyzer.observe.jsonl import log_path, scrub
    from analyzer.observe.record import build_record
    from analyzer.observe.summary import summarise_run

    secrets = [options.api_key] if options.api_key else []
    runner = _app_runner(experiment, options, session) if experiment.mode == "app" else _direct_runner(options)
    path = log_path(options.out_dir, experiment.name)
    result = runner.run(experiment, path)
    summary = summarise_run(experiment, result)
    text = None
    if options.record:
        record = build_record(experiment, summary, result.rows, lang=options.lang)
        text = scrub(record.to_markdown(options.lang), secrets)
        if options.record_file is not None:
            _write_record(options.record_file, text, path)
    return ObserveResult(summary, path, result, text)


def summarize_log(log: Path) -> dict[str, Any]:
    """The summary (schema `analyzer.observe.summary/1`) recomputed from a log on disk, sending nothing: a log
    with no rows is an `AnalyzerError`."""
    from analyzer.errors import AnalyzerError
    from analyzer.observe.jsonl import read_rows
    from analyzer.observe.summary import summarise

    rows = read_rows(log)
    if not rows:
        raise AnalyzerError(f"{log} holds no rows; pass a log written by `analyze observe`")
    return summarise(rows, log=str(log))


def _direct_runner(options: ObserveOptions) -> Runner:
    from analyzer.observe.direct import DirectRunner

    return DirectRunner(api_key=options.api_key, stop_on_error=options.stop_on_error, on_row=options.on_row)


def _app_runner(experiment: Experiment, options: ObserveOptions, session: Session | None) -> Runner:
    """The app installed at its pin, its code indexed for the literal lookup, the upstream chosen: the
    experiment's `base_url`, else the running local engine (whose tokenizer the prefix analysis then uses)."""
    from urllib.parse import urlparse

    from analyzer.apps.setup import default_base_url, install_app
    from analyzer.errors import AnalyzerError
    from analyzer.observe.appdriver import AppRunner
    from analyzer.observe.applookup import app_literal_lookup
    from analyzer.observe.runner import LOOPBACK

    if session is None:
        raise AnalyzerError(f"experiment {experiment.path} drives an app: pass a session (api.open_session) to "
                            "install it at its pin")
    tell = options.say or session.notify
    upstream = experiment.endpoint.base_url or default_base_url(session)
    engine_url = upstream.rstrip("/").removesuffix("/v1") if (urlparse(upstream).hostname or "") in LOOPBACK else None
    app = install_app(session, experiment.app.profile, list(options.at) or None, version=options.version, say=tell)
    lookup, note = app_literal_lookup(session, app)
    return AppRunner(app, upstream, engine_url=engine_url, say=tell, lookup=lookup, lookup_note=note)


def _write_record(record_file: Path, text: str, log: Path) -> None:
    """The record, written whole or not at all; a failure names where the observations already are."""
    from analyzer.atomic import write_text_atomic
    from analyzer.errors import AnalyzerError

    try:
        write_text_atomic(record_file, text)
    except OSError as exc:
        raise AnalyzerError(f"cannot write the record {record_file} ({exc.strerror}); the observations are in "
                            f"{log}; choose a writable path") from None
