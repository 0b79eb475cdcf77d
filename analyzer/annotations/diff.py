"""The body diff that explains a stale note: the symbol when the note was written vs. now."""

from __future__ import annotations

import difflib
from typing import Protocol

from analyzer.annotations.anchor import Anchored

MAX_DIFF_LINES = 200


class Reader(Protocol):
    def lines(self, repo: str, commit: str, path: str, start: int, end: int) -> list[str] | None: ...

    def definition(self, repo: str, commit: str, path: str, qualname: str) -> tuple[int, int] | None: ...


def body_diff(old: list[str], new: list[str], old_label: str, new_label: str,
              limit: int = MAX_DIFF_LINES) -> list[str]:
    """Unified diff lines (no trailing newlines), cut at `limit` with a closing marker."""
    out = [line.rstrip("\n") for line in difflib.unified_diff(old, new, old_label, new_label, lineterm="")]
    if len(out) > limit:
        out = out[:limit] + [f"… diff cut at {limit} lines ({len(out) - limit} more)"]
    return out


def note_body_diff(reader: Reader, anchored: Anchored, commit: str) -> Anchored:
    """Fill `anchored.diff` for a stale note: the body at the note's commit vs. at `commit` (the current pin)."""
    if anchored.status != "stale" or anchored.path is None or anchored.line is None:
        return anchored
    note = anchored.note
    old_path = note.path or anchored.path
    span = reader.definition(note.repo, note.commit, old_path, note.symbol)
    if span is None:
        anchored.diff_error = (f"the body at {note.commit[:10]} could not be read ({old_path} not in the cached "
                               f"{note.repo} history or symbol not found there); run 'analyze sync' at that commit")
        return anchored
    old = reader.lines(note.repo, note.commit, old_path, *span) or []
    new = reader.lines(note.repo, commit, anchored.path, anchored.line, anchored.end_line or anchored.line) or []
    anchored.diff = body_diff(old, new, f"{note.repo}@{note.commit[:10]}:{old_path}:{span[0]}",
                              f"{note.repo}@{commit[:10]}:{anchored.path}:{anchored.line}")
    return anchored
