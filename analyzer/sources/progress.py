"""A rich progress bar that follows git's own progress lines, shown only on a terminal.

Git prints `Receiving objects:  42% (420/1000), 1.2 MiB | 3 MiB/s` with carriage returns; each distinct
phase ("Receiving objects", "Resolving deltas", "Updating files", …) becomes one bar. In a pipe the
factory yields None, git is not asked for progress at all, and the output stays quiet.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TaskProgressColumn, TextColumn

from analyzer.sources.gitrun import ProgressSink

_LINE_RE = re.compile(r"^(?:remote:\s*)?(?P<phase>[A-Za-z][A-Za-z ]+):\s+(?:\d+%\s+)?\((?P<cur>\d+)/(?P<max>\d+)\)"
                      r"(?P<rest>[^\r\n]*)")


class RichGitProgress:
    """Turns git progress lines into rich tasks, one per phase."""

    def __init__(self, progress: Progress, label: str) -> None:
        self.progress = progress
        self.label = label
        self.tasks: dict[str, TaskID] = {}

    def line(self, text: str) -> None:
        m = _LINE_RE.match(text.strip())
        if not m:
            return
        phase, cur, total = m.group("phase").strip(), int(m.group("cur")), int(m.group("max"))
        rest = m.group("rest").strip(" ,").split(", done")[0]
        if phase not in self.tasks:
            self.tasks[phase] = self.progress.add_task(f"{self.label}: {phase.lower()}", total=total, detail="")
        self.progress.update(self.tasks[phase], completed=cur, total=total, detail=rest)


def parse_progress_line(text: str) -> tuple[str, int, int] | None:
    """(phase, current, total) for a git progress line, else None (exposed for tests)."""
    m = _LINE_RE.match(text.strip())
    return (m.group("phase").strip(), int(m.group("cur")), int(m.group("max"))) if m else None


@contextmanager
def git_progress(console: Console, label: str, enabled: bool) -> Iterator[ProgressSink | None]:
    """A progress sink drawing on `console` while the block runs, or None when `enabled` is false."""
    if not enabled:
        yield None
        return
    bars = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                    TextColumn("{task.fields[detail]}"), console=console, transient=True)
    with bars:
        yield RichGitProgress(bars, label)
