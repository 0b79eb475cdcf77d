"""Which notes file a command reads, and a sentence saying so — or that none was found and where it looked.

A report run with a lock outside the checkout looks beside *that* lock; without this line a user sees
"No note yet" on every hop and cannot tell the notes file was simply somewhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analyzer.annotations.store import annotations_path
from analyzer.errors import AnalyzerError


@dataclass(frozen=True)
class NotesFile:
    """The notes file chosen for this run, why that one, and whether it exists."""

    path: Path
    why: str
    exists: bool

    def describe(self, count: int) -> str:
        if self.exists:
            return f"notes: {count} read from {self.path} ({self.why})"
        return (f"notes: no notes file found; looked for {self.path} ({self.why}); pass --annotations FILE "
                "to read another (the checkout ships reports/annotations.toml)")

    def as_json(self, count: int) -> dict[str, Any]:
        return {"path": str(self.path), "why": self.why, "found": self.exists, "count": count,
                "message": self.describe(count)}


def locate_notes(lock_path: Path, override: Path | None = None, *, must_exist: bool = False) -> NotesFile:
    """Where the notes are read from. With `must_exist` (commands that only read notes) a file named with
    --annotations must exist: a typo must not read as "no notes"; only the default file may be absent."""
    path = annotations_path(lock_path, override)
    if must_exist and override is not None and not path.is_file():
        raise AnalyzerError(f"--annotations {override}: the file is missing; check the path, or leave the option "
                            f"out to use {annotations_path(lock_path)}")
    why = "from --annotations" if override is not None else f"beside the lock file {lock_path.resolve()}"
    return NotesFile(path, why, path.is_file())
