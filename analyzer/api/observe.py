"""`observe`: one controlled comparison sent to a real engine, raw usage logged (a thin face over
analyzer.observe.runner; the experiment, plan and summary live in analyzer.observe)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from analyzer.atomic import write_text_atomic
    from analyzer.errors import AnalyzerError
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
            try:
                write_text_atomic(options.record_file, text)
            except OSError as exc:
                raise AnalyzerError(f"cannot write the record {options.record_file} ({exc.strerror}); the "
                                    f"observations are in {path}; choose a writable path") from None
    return ObserveResult(summary, path, result, text)
