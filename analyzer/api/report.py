"""`report`: the traced path written as trace.md, trace.html and trace.json, with excerpts and notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.api.session import Session
from analyzer.api.trace import TraceOptions

if TYPE_CHECKING:
    from analyzer.annotations import NotesFile


@dataclass(frozen=True)
class ReportOptions:
    """The path to report (`trace`; its `alternatives` are not reported), where to write it (default
    reports/<shorts>/ beside the lock), which notes file (default reports/annotations.toml beside the lock)
    and whether to mark the hops where hazards enter."""

    trace: TraceOptions = field(default_factory=TraceOptions)
    out: Path | None = None
    annotations: Path | None = None
    hazards: bool = True


@dataclass(frozen=True)
class ReportResult:
    report: dict[str, Any]  # the report model (analyzer.report.model): hops, excerpts, notes, the trace
    files: list[Path]
    notes_file: NotesFile
    notes_read: int

    @property
    def found(self) -> bool:
        return bool(self.report["found"])


def report(session: Session, options: ReportOptions = ReportOptions(), *, at: list[str] | None = None) -> ReportResult:
    """Trace (the same trace as `api.trace`), quote each hop's source from the cache, anchor the notes,
    mark hazards (a failure is warned about and noted, never fatal) and write the three files atomically.
    The notes file is read first: a malformed one fails before any graph work."""
    from dataclasses import replace

    from analyzer.annotations import load_notes, locate_notes
    from analyzer.api.analysis import open_analysis
    from analyzer.api.trace import trace
    from analyzer.report import build_report, reader_for, report_dirname, write_report

    notes_file = locate_notes(session.lock.path, options.annotations, must_exist=True)
    notes = load_notes(notes_file.path)
    analysis = open_analysis(session, at=at)
    found = trace(analysis, replace(options.trace, alternatives=1)).document
    built = build_report(found, analysis.view, reader_for(session, analysis.pins), notes,
                         notes_file.as_json(len(notes)))
    if options.hazards:
        from analyzer.hazards.report import mark_hazards

        mark_hazards(session, analysis, built)
    out = options.out or session.lock.path.resolve().parent / "reports" / report_dirname(found["pins"])
    return ReportResult(built, write_report(built, out), notes_file, len(notes))
