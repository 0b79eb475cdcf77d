"""`recheck`: what changed on the request path between two pin sets (the trace at each, compared)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.api.session import Session
from analyzer.trace.defaults import DEFAULT_MAX_DEPTH

if TYPE_CHECKING:
    from analyzer.analysis import Analysis
    from analyzer.annotations import Note
    from analyzer.lock import RepoPin


@dataclass(frozen=True)
class RecheckOptions:
    """FROM/TO (default the lock's `[trace]`) and the path options, as for `trace`; the old pins: a lock
    file or a git revision of the lock (`old_from`, default HEAD) moved by `old_commits` NAME=SHA items;
    the report folder (`out`, default reports/ beside the lock; `write_report=False` writes no report)."""

    from_symbol: str | None = None
    to_symbol: str | None = None
    max_depth: int = DEFAULT_MAX_DEPTH
    allow_guesses: bool = False
    old_from: str | None = None
    old_commits: list[str] | None = None
    out: Path | None = None
    annotations: Path | None = None
    write_report: bool = True


@dataclass(frozen=True)
class RecheckResult:
    document: dict[str, Any]  # schema `analyzer.recheck/1` (analyzer.recheck.compare)
    report_path: Path | None

    @property
    def exit_code(self) -> int:
        """0 nothing on the path changed, 1 changes need a human look, 2 the path is broken."""
        return int(self.document["exit_code"])

    @property
    def notes(self) -> list[str]:
        """FROM/TO names with several definitions, and which one was compared."""
        return list(self.document.get("notes", []))


def recheck(session: Session, options: RecheckOptions = RecheckOptions(), *, command: str = "recheck",
            old_pins: list[RepoPin] | None = None, new_pins: list[RepoPin] | None = None,
            old_origin: str | None = None, new_origin: str | None = None,
            new_analysis: Analysis | None = None, notes: list[Note] | None = None) -> RecheckResult:
    """Compare the path at the old pins (from `options`, or `old_pins`) with the new ones (the lock's, or
    `new_pins`, already analysed as `new_analysis` when given). FROM/TO are resolved and traced exactly
    as `api.trace` does; reconciliation deltas and hazards at both pin sets are added. `notes` (default:
    read from `options.annotations` or the lock's reports/annotations.toml) are re-anchored at both."""
    from analyzer.annotations import load_notes, locate_notes
    from analyzer.api.trace import endpoints
    from analyzer.recheck import old_pins as pins_before
    from analyzer.recheck import recheck as compare_pin_sets

    lock = session.lock
    spec_from, spec_to = endpoints(lock, options.from_symbol, options.to_symbol, command)
    if old_pins is None:
        old_pins, origin = pins_before(lock, options.old_from, options.old_commits)
        old_origin = old_origin or origin
    if notes is None:
        notes = load_notes(locate_notes(lock.path, options.annotations, must_exist=True).path)
    out = (options.out or lock.path.resolve().parent / "reports") if options.write_report else None
    document, path = compare_pin_sets(
        session, old_pins, new_pins or list(lock.repos.values()), spec_from, spec_to, notes=notes,
        old_origin=old_origin or "old", new_origin=new_origin or f"working {lock.path.name}", out_dir=out,
        max_depth=options.max_depth, allow_guesses=options.allow_guesses, new_analysis=new_analysis)
    return RecheckResult(document, path)
