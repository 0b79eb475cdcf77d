"""`observe`: one controlled comparison sent to a real engine, raw usage logged (a thin face over
analyzer.observe.runner; the experiment, plan and summary live in analyzer.observe)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analyzer.api.session import Session
    from analyzer.observe.appexperiment import AppExperiment
    from analyzer.observe.apprunner import AppRunResult
    from analyzer.observe.experiment import Experiment
    from analyzer.observe.runner import RunResult

OnRow = Callable[[dict[str, Any], int, int], None]  # (row, done, total), after each row is on disk


@dataclass(frozen=True)
class ObserveOptions:
    """Where the JSONL log goes, the API key (the value; it is scrubbed from everything written), whether
    to stop at the first failed request, and the research record (`record`, in `lang`; written to
    `record_file` when given, else only returned)."""

    out_dir: Path = Path("observations")
    api_key: str | None = None
    stop_on_error: bool = False
    record: bool = False
    record_file: Path | None = None
    lang: str = "en"
    on_row: OnRow | None = None


@dataclass(frozen=True)
class ObserveResult:
    summary: dict[str, Any]  # analyzer.observe.summary's summary plus planned/written/interrupted/stopped
    log: Path
    run: RunResult
    record: str | None = None  # the record's Markdown, secrets scrubbed

    @property
    def exit_code(self) -> int:
        """0 every request succeeded, 1 some failed (or stopped at the first failure), 130 interrupted."""
        return 130 if self.run.interrupted else 1 if self.run.stopped_on_error or self.run.failed else 0


def observe(experiment: Experiment, options: ObserveOptions = ObserveOptions()) -> ObserveResult:
    """Send the experiment's control and treatment series; each row is appended to the log as it ends."""
    from analyzer.observe.jsonl import RowWriter, log_path, scrub
    from analyzer.observe.record import build_record
    from analyzer.observe.runner import run_experiment
    from analyzer.observe.summary import summarise

    secrets = [options.api_key] if options.api_key else []
    path = log_path(options.out_dir, experiment.name)
    with RowWriter(path, secrets) as writer:
        result = run_experiment(experiment, writer, api_key=options.api_key, stop_on_error=options.stop_on_error,
                                on_row=options.on_row)
    summary = summarise(result.rows, log=str(path))
    summary.update({"planned": result.planned, "written": len(result.rows), "interrupted": result.interrupted,
                    "stopped_on_error": result.stopped_on_error})
    text = None
    if options.record:
        record = build_record(experiment, summary, result.rows, lang=options.lang, planned=result.planned,
                              interrupted=result.interrupted)
        text = scrub(record.to_markdown(options.lang), secrets)
        if options.record_file is not None:
            _write_record(options.record_file, text, path)
    return ObserveResult(summary, path, result, text)


def _write_record(record_file: Path, text: str, log: Path) -> None:
    """The record, written whole or not at all; a failure names where the observations already are."""
    from analyzer.atomic import write_text_atomic
    from analyzer.errors import AnalyzerError

    try:
        write_text_atomic(record_file, text)
    except OSError as exc:
        raise AnalyzerError(f"cannot write the record {record_file} ({exc.strerror}); the observations are in "
                            f"{log}; choose a writable path") from None


@dataclass(frozen=True)
class AppObserveOptions:
    """For an experiment whose requests a real application builds: where the log goes, the app's commit
    (`at`, `NAME=SHA`; default the lock's pin) or an npm release by hand (`version`), the upstream (default
    the experiment's `base_url`, else the running local engine) and the research record (`record`, in
    `lang`; written to `record_file` when given)."""

    out_dir: Path = Path("observations")
    at: tuple[str, ...] = ()
    version: str | None = None
    base_url: str | None = None
    record: bool = False
    record_file: Path | None = None
    lang: str = "en"


@dataclass(frozen=True)
class AppObserveResult:
    summary: dict[str, Any]  # analyzer.observe.appsummary's summary (rows, prefix analysis, predictions)
    run: AppRunResult
    record: str | None = None  # the record's Markdown

    @property
    def exit_code(self) -> int:
        """0 every turn's request succeeded, 1 some failed."""
        return 1 if self.run.failed else 0


def observe_app(session: Session, experiment: AppExperiment, options: AppObserveOptions = AppObserveOptions(),
                say: Callable[[str], None] | None = None) -> AppObserveResult:
    """Install the app at its pin, run the experiment's turns through the recording proxy, analyse where
    consecutive requests stop sharing a prefix; `say` hears progress (install, build, each turn)."""
    from urllib.parse import urlparse

    from analyzer.apps.setup import default_base_url, install_app
    from analyzer.observe.apprecord import build_app_record
    from analyzer.observe.apprunner import run_app_experiment
    from analyzer.observe.appsummary import app_summary
    from analyzer.observe.literals import app_literal_lookup
    from analyzer.observe.runner import LOOPBACK

    tell = say or session.notify
    upstream = options.base_url or experiment.base_url or default_base_url(session)
    host = urlparse(upstream).hostname or ""
    engine_url = upstream.rstrip("/").removesuffix("/v1") if host in LOOPBACK else None
    app = install_app(session, experiment.profile, list(options.at) or None, version=options.version, say=tell)
    lookup, note = app_literal_lookup(session, app)
    result = run_app_experiment(experiment, app, upstream=upstream, out_dir=options.out_dir, engine_url=engine_url,
                                say=tell, lookup=lookup)
    result.lookup_note = note
    summary = app_summary(experiment, app, result)
    text = None
    if options.record:
        text = build_app_record(experiment, app, summary, lang=options.lang).to_markdown(options.lang)
        if options.record_file is not None:
            _write_record(options.record_file, text, result.log)
    return AppObserveResult(summary, result, text)
