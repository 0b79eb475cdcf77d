"""Rewrite one pin in `repos.lock` without disturbing anything else in the file.

tomlkit keeps comments, key order and formatting; only the table's `ref`/`commit` values change. The
new text is validated before it is written, and written atomically, so on any failure the old lock is
still there, byte for byte.
"""

from __future__ import annotations

import re
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
    new_text = tomlkit.dumps(doc)
    if ref is not None and "ref" not in table:  # type: ignore[operator]
        placed = _with_ref_after_url(new_text, name, ref)
        if placed is None:  # no url line to follow: appending is still correct TOML
            table["ref"] = ref  # type: ignore[index]
            placed = tomlkit.dumps(doc)
        new_text = placed
    parse_lock(new_text, path)
    try:
        write_text_atomic(path, new_text)
    except OSError as exc:
        raise AnalyzerError(f"{path}: could not write the new pin ({exc.strerror or exc}); the lock is unchanged; "
                            "check free space and permissions, then run the command again") from None
    return new_text


def _with_ref_after_url(text: str, name: str, ref: str) -> str | None:
    """`text` with `ref = "…"` on the line after `[repos.NAME]`'s `url` line (the conventional url, ref, commit
    order), or None when that line cannot be found. Public tomlkit has no insert-after, and re-adding the later
    keys would move the comments and blank lines that trail the table; one inserted line moves nothing."""
    lines = text.splitlines(keepends=True)
    header = re.compile(r"^\s*\[\s*repos\s*\.\s*(?:" + re.escape(name) + r'|"' + re.escape(name) + r'")\s*\]')
    url = re.compile(r"^\s*url\s*=")
    inside = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("["):
            inside = bool(header.match(line))
        elif inside and url.match(line):
            value = tomlkit.item(ref).as_string()
            newline = "" if line.endswith("\n") else "\n"
            return "".join(lines[:i + 1]) + newline + f"ref = {value}\n" + "".join(lines[i + 1:])
    return None
