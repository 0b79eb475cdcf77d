"""`annotate`: notes on symbols, kept in a notes file (default reports/annotations.toml beside the lock).

A note records the pinned commit and the symbol's body hash, so later pins show it as current, stale (the
body changed) or orphaned (the symbol is gone); `notes` anchors every note at the session's pins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.api.session import Session
from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.analysis import Analysis
    from analyzer.annotations import Anchored, Note, NotesFile


@dataclass(frozen=True)
class Annotated:
    action: str  # what upsert_note did: "added" or "updated"
    note: Note
    file: Path
    line: int  # the symbol's line at the pinned commit


@dataclass(frozen=True)
class NotesListing:
    notes_file: NotesFile  # which file was read, and why that one
    notes: list[Note]
    anchored: list[Anchored] = field(default_factory=list)  # each note at the session's pins (empty: no notes)


def _resolved(session: Session, symbol: str, include_tests: bool, at: list[str] | None,
              analysis: Analysis | None) -> tuple[Analysis, str, dict]:
    from analyzer.api.analysis import open_analysis
    from analyzer.graph.queries import resolve_one

    analysis = analysis or open_analysis(session, at=at)
    node = resolve_one(analysis.view, symbol, include_tests=include_tests).node
    return analysis, node, analysis.view.nodes[node]


def annotate(session: Session, symbol: str, text: str, *, annotations: Path | None = None,
             include_tests: bool = False, at: list[str] | None = None,
             analysis: Analysis | None = None) -> Annotated:
    """Add or update the note on `symbol` (a name, Class.method or repo:path:Name resolved at the pins) with
    the commit and body hash it has there; `analysis` (default: opened at the lock's pins moved by `at`)."""
    from analyzer.annotations import Note, load_notes, locate_notes, upsert_note

    path = locate_notes(session.lock.path, annotations).path
    load_notes(path)  # a malformed file fails before any graph work
    analysis, node, a = _resolved(session, symbol, include_tests, at, analysis)
    if not text.strip():
        raise AnalyzerError("the note text is empty; write what this symbol does to the request")
    commit = next(p.commit for p in analysis.pins if p.name == a["repo"])
    if not a.get("body_hash"):
        raise AnalyzerError(f"{node} has no body hash in the index (kind {a.get('kind')}); annotate a definition")
    note = Note(a["repo"], a["qualname"], text.strip(), commit, a["body_hash"], a["path"])
    return Annotated(upsert_note(path, note), note, path, a["line"])


def remove_annotation(session: Session, symbol: str, *, annotations: Path | None = None,
                      include_tests: bool = False, at: list[str] | None = None,
                      analysis: Analysis | None = None) -> tuple[str, Path]:
    """Delete the note on `symbol`; returns (`repo:qualname`, the notes file). No note there is an error."""
    from analyzer.annotations import load_notes, locate_notes, remove_note

    path = locate_notes(session.lock.path, annotations).path
    load_notes(path)
    _, _, a = _resolved(session, symbol, include_tests, at, analysis)
    if not remove_note(path, a["repo"], a["qualname"], a["path"]):
        raise AnalyzerError(f"no note on {a['repo']}:{a['qualname']} in {path}")
    return f"{a['repo']}:{a['qualname']}", path


def notes(session: Session, *, annotations: Path | None = None, at: list[str] | None = None,
          analysis: Analysis | None = None) -> NotesListing:
    """The notes file and its notes, each anchored at the pins (`analysis`, default opened at the lock's pins
    moved by `at`; only when there are notes): ok, stale or orphaned, and whether it moved."""
    from analyzer.annotations import anchor_all, load_notes, locate_notes
    from analyzer.api.analysis import open_analysis

    notes_file = locate_notes(session.lock.path, annotations)
    found = load_notes(notes_file.path)
    if not found:
        return NotesListing(notes_file, found)
    view = (analysis or open_analysis(session, at=at)).view
    return NotesListing(notes_file, found, anchor_all(view, found))
