"""Rewrite one pin in `repos.lock` without disturbing anything else in the file.

tomlkit keeps comments, key order and formatting; only the table's `ref`/`commit` values change. The
new text is validated before it is written, and written atomically, so on any failure the old lock is
still there, byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import tomlkit
from tomlkit.exceptions import TOMLKitError

from analyzer.atomic import write_text_atomic
from analyzer.errors import AnalyzerError
from analyzer.lock import parse_lock


def rewrite_pin(path: Path, name: str, ref: str | None, commit: str) -> str:
    """Set `[repos.NAME]`'s `commit` (and `ref`, removed when None) in the lock at `path`; return the new text."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AnalyzerError(f"{path}: cannot read ({exc.strerror or exc}); check the path and its permissions") \
            from None
    parse_lock(text, path)  # the file may have changed since it was loaded: never rewrite a broken lock
    try:
        doc = tomlkit.parse(text)
        table = doc["repos"][name]  # type: ignore[index]
    except (TOMLKitError, KeyError) as exc:
        raise AnalyzerError(f"{path}: repos.{name}: cannot edit this table ({exc}); edit the lock by hand") from None
    table["commit"] = commit  # type: ignore[index]
    if ref is None:
        if "ref" in table:  # type: ignore[operator]
            del table["ref"]  # type: ignore[attr-defined]
    elif "ref" in table:  # type: ignore[operator]
        table["ref"] = ref  # type: ignore[index]
    else:
        _insert_after_url(table, ref)
    new_text = tomlkit.dumps(doc)
    parse_lock(new_text, path)
    try:
        write_text_atomic(path, new_text)
    except OSError as exc:
        raise AnalyzerError(f"{path}: could not write the new pin ({exc.strerror or exc}); the lock is unchanged; "
                            "check free space and permissions, then run the command again") from None
    return new_text


def _insert_after_url(table: object, ref: str) -> None:
    """Keep the conventional url, ref, commit order when a table gains a ref."""
    container = getattr(table, "value", None)
    try:
        container._insert_after("url", "ref", ref)  # type: ignore[union-attr]
    except Exception:  # tomlkit internals moved: appending is still correct TOML
        table["ref"] = ref  # type: ignore[index]
