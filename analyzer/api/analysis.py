"""Open one pin set's graph: the lock's pins, moved by `at` overrides, from the session's cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzer.api.session import Session

if TYPE_CHECKING:
    from analyzer.analysis import Analysis
    from analyzer.lock import RepoPin


def pins_at(session: Session, at: list[str] | None = None) -> list[RepoPin]:
    """The lock's pins with `NAME=SHA` overrides (full 40-hex shas; the lock is not edited)."""
    from analyzer.analysis import apply_at

    return apply_at(session.lock, at)


def open_analysis(session: Session, *, at: list[str] | None = None, pins: list[RepoPin] | None = None,
                  need_program: bool = False, rebuild: bool = False) -> Analysis:
    """The analysis at `pins` (default: the lock's, moved by `at`): the stored graph when one was built for
    exactly these pins, rules and analyzer (opened lazily), else sources → index → graph, stored.

    `need_program` keeps the per-file facts in memory (a build); `rebuild` ignores the stored graph."""
    from analyzer.analysis import analyze

    chosen = pins if pins is not None else pins_at(session, at)
    return analyze(session, pins=chosen, need_program=need_program, rebuild=rebuild, progress=session.progress)
