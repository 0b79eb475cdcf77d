"""What every command gets: the global options, resolved once, plus the output consoles."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from rich.console import Console

from analyzer.api.session import Progress, Session, source_key
from analyzer.api.session import source_overrides as parse_source_overrides
from analyzer.lock import Lock, load_lock
from analyzer.paths import default_cache_dir, default_lock_path


@dataclass
class CliContext:
    """Global options shared by all commands (`--lock`, `--cache-dir`, `--source`, `--json`, `-v`)."""

    lock_path: Path | None = None
    cache_dir_option: Path | None = None
    source_options: list[str] = field(default_factory=list)
    json: bool = False
    verbose: int = 0
    # emoji=False: rich would render `path:100:` as the 💯 emoji (its `:name:` codes)
    out: Console = field(default_factory=lambda: Console(highlight=False, soft_wrap=True, emoji=False))
    err: Console = field(default_factory=lambda: Console(stderr=True, highlight=False, soft_wrap=True, emoji=False))

    @cached_property
    def lock(self) -> Lock:
        return load_lock(self.lock_path or default_lock_path())

    @property
    def cache_dir(self) -> Path:
        return self.cache_dir_option or default_cache_dir()

    def source_overrides(self) -> dict[str, str]:
        """Per-run URL replacements: `--source NAME=URL` beats `ANALYZER_SOURCE_<NAME>`."""
        return parse_source_overrides(self.source_options)

    def source_for(self, name: str, default_url: str) -> str:
        """The URL to fetch `name` from in this run."""
        return self.source_overrides().get(source_key(name), default_url)

    def session(self, progress: Progress | None = None) -> Session:
        """What the library needs from this run: lock, cache, sources, and where warnings go."""
        return Session(self.lock, self.cache_dir, self.source_overrides(), self.warn, self.notify, progress)

    def emit_json(self, payload: Any) -> None:
        """Print machine-readable output on stdout (no colour, no wrapping)."""
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=False) + "\n")

    def warn(self, message: str) -> None:
        """A one-line warning on stderr (the run goes on)."""
        self.err.print(f"warning: {message}", markup=False)

    def notify(self, message: str) -> None:
        """A notice on stderr (waiting for another run's cache lock)."""
        self.err.print(message, markup=False)

    @property
    def interactive(self) -> bool:
        """True when progress bars make sense (stderr is a terminal)."""
        return self.err.is_terminal
