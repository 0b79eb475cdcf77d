"""Read and write `reports/annotations.toml` (tomlkit keeps the user's comments and order; writes are atomic).

File format (one `[[note]]` per symbol):

    [[note]]
    repo = "dsh"
    symbol = "ReactLoopAgent.step"
    path = "packages/core/agent-loop/src/agent.ts"   # optional hint
    commit = "<40-hex sha the note was written at>"
    body_hash = "<the symbol's body hash at that commit>"
    text = "what this hop does to the request"
"""

from __future__ import annotations

from pathlib import Path

import tomlkit
from tomlkit.exceptions import TOMLKitError

from analyzer.annotations.model import Note
from analyzer.atomic import write_text_atomic
from analyzer.errors import AnalyzerError

DEFAULT_RELATIVE = Path("reports") / "annotations.toml"
HEADER = (
    "# Notes on the request path, keyed by symbol (repo + qualified name, optional path hint), not by line.\n"
    "# commit/body_hash record the symbol when the note was written: at other pins a note whose body hash\n"
    "# differs is shown as stale (with the body diff), one whose symbol is gone as orphaned.\n"
    "# Add or update notes with: analyze annotate SYMBOL \"text\"\n\n"
)
REQUIRED = ("repo", "symbol", "text", "commit", "body_hash")


def annotations_path(lock_path: Path, override: Path | None = None) -> Path:
    """`--annotations PATH`, else `reports/annotations.toml` beside the lock file."""
    return override if override is not None else lock_path.resolve().parent / DEFAULT_RELATIVE


def _read(path: Path) -> tomlkit.TOMLDocument:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return tomlkit.parse(HEADER)
    except OSError as exc:
        raise AnalyzerError(f"{path}: cannot read ({exc.strerror or exc}); check the path and permissions") from None
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise AnalyzerError(f"{path}: malformed TOML ({exc}); fix that line or restore the file from git") from None


def _notes(doc: tomlkit.TOMLDocument, path: Path) -> list[Note]:
    raw = doc.get("note", [])
    if not isinstance(raw, list):
        raise AnalyzerError(f"{path}: 'note' must be an array of tables ([[note]]); fix the file")
    notes, problems = [], []
    for i, table in enumerate(raw, 1):
        where = f"{path}: note {i}"
        if not isinstance(table, dict):
            problems.append(f"{where}: not a table")
            continue
        missing = [k for k in REQUIRED if not isinstance(table.get(k), str) or not str(table.get(k)).strip()]
        if missing:
            problems.append(f"{where}: missing or empty {', '.join(missing)}")
            continue
        hint = table.get("path")
        notes.append(Note(str(table["repo"]), str(table["symbol"]), str(table["text"]), str(table["commit"]),
                          str(table["body_hash"]), str(hint) if isinstance(hint, str) and hint else None))
    if problems:
        raise AnalyzerError("; ".join(problems) + "; each [[note]] needs repo, symbol, text, commit and body_hash")
    return notes


def load_notes(path: Path) -> list[Note]:
    """All notes in the file (an absent file has none)."""
    return _notes(_read(path), path)


def _table(note: Note) -> tomlkit.items.Table:
    t = tomlkit.table()
    t["repo"] = note.repo
    t["symbol"] = note.symbol
    if note.path:
        t["path"] = note.path
    t["commit"] = note.commit
    t["body_hash"] = note.body_hash
    t["text"] = tomlkit.string(note.text, multiline="\n" in note.text)
    t.add(tomlkit.nl())  # a blank line between notes keeps the file readable in review
    return t


def upsert_note(path: Path, note: Note) -> str:
    """Add the note, or replace the one with the same key; returns "added" or "updated". One atomic write."""
    doc = _read(path)
    existing = _notes(doc, path)
    if "note" not in doc:
        doc.append("note", tomlkit.aot())
    aot = doc["note"]
    action = "added"
    for i, old in enumerate(existing):
        if old.same_key(note.repo, note.symbol, note.path):
            aot[i] = _table(note)  # type: ignore[index]
            action = "updated"
            break
    else:
        aot.append(_table(note))  # type: ignore[union-attr]
    _write(path, doc)
    return action


def remove_note(path: Path, repo: str, symbol: str, path_hint: str | None = None) -> bool:
    """Drop the note with that key; False when there was none (the file is then left alone)."""
    doc = _read(path)
    existing = _notes(doc, path)
    for i, old in enumerate(existing):
        if old.same_key(repo, symbol, path_hint):
            del doc["note"][i]  # type: ignore[union-attr]
            _write(path, doc)
            return True
    return False


def _write(path: Path, doc: tomlkit.TOMLDocument) -> None:
    text = tomlkit.dumps(doc)
    _notes(tomlkit.parse(text), path)  # never write a file we could not read back
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise AnalyzerError(f"{path}: could not write ({exc.strerror or exc}); the old file is unchanged") from None
