"""Notes on symbols of the request path, kept in `reports/annotations.toml`.

A note is keyed by symbol (repo + qualified name, optional path hint), never by line, so it survives
moves and line shifts. It remembers the commit it was written at and the symbol's body hash there:
at another pin it is re-anchored by symbol and shown as stale (body changed) or orphaned (symbol gone).

Public API:
- `Note`, `load_notes(path)`, `upsert_note(path, note)`, `remove_note(path, repo, symbol, path_hint)`,
  `annotations_path(lock_path, override)`; `locate_notes(lock_path, override) -> NotesFile` (which file, why,
  found or not, and a sentence saying so for reports and `annotate`).
- `anchor_note(g, note) -> Anchored`, `anchor_all(g, notes)`, `find_symbol(g, repo, qualname, ...)`.
- `note_body_diff(reader, anchored, commit)`: fills the unified body diff of a stale note; `body_diff`.
"""

from analyzer.annotations.anchor import Anchored, anchor_all, anchor_note, find_symbol
from analyzer.annotations.diff import body_diff, note_body_diff
from analyzer.annotations.model import Note
from analyzer.annotations.notesfile import NotesFile, locate_notes
from analyzer.annotations.store import annotations_path, load_notes, remove_note, upsert_note

__all__ = ["Anchored", "anchor_all", "anchor_note", "find_symbol", "body_diff", "note_body_diff", "Note",
           "NotesFile", "annotations_path", "load_notes", "locate_notes", "remove_note", "upsert_note"]
