"""Reading rule files: the TOML files shipped in a rules package plus a user's extra files.

Dispatch rules (`analyzer.resolve.rules`) and hazard rules (`analyzer.hazards.rules`) are read the same
way — file order, one digest over their text for cache keys, a malformed file as one line naming it — so
the reading lives here once and each loader only interprets the tables.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from analyzer.errors import AnalyzerError


@dataclass
class RuleFile:
    name: str  # shown in errors and provenance: `analyzer/rules/x.toml` or the user's path
    data: dict[str, Any]


def read_rule_files(package: str, extra: Iterable[Path] = (), *, what: str = "rule file",
                    skip: Iterable[str] = ()) -> tuple[list[RuleFile], str]:
    """The package's `*.toml` files (sorted by name, those named in `skip` left out: data files of another
    reader), then `extra`, parsed; and a 16-hex digest of their text."""
    texts: list[tuple[str, str]] = []
    shown = package.replace(".", "/")
    skipped = set(skip)
    for entry in sorted(resources.files(package).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml") and entry.name not in skipped:
            texts.append((f"{shown}/{entry.name}", entry.read_text(encoding="utf-8")))
    for path in extra:
        texts.append((str(path), Path(path).read_text(encoding="utf-8")))
    digest = hashlib.sha1()
    files: list[RuleFile] = []
    for name, text in texts:
        digest.update(text.encode())
        try:
            files.append(RuleFile(name, tomllib.loads(text)))
        except tomllib.TOMLDecodeError as exc:
            raise AnalyzerError(f"{name}: malformed {what} ({exc}); fix the TOML syntax") from None
    return files, digest.hexdigest()[:16]
