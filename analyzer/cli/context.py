"""What every command gets: the global options, resolved once, plus the output consoles."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from rich.console import Console

from analyzer.errors import AnalyzerError
from analyzer.lock import Lock, load_lock
from analyzer.paths import default_cache_dir, default_lock_path

SOURCE_ENV_PREFIX = "ANALYZER_SOURCE_"


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
        overrides: dict[str, str] = {}
        for key, value in os.environ.items():
            if key.startswith(SOURCE_ENV_PREFIX) and value:
                overrides[key[len(SOURCE_ENV_PREFIX):].lower().replace("-", "_")] = value
        for item in self.source_options:
            name, sep, url = item.partition("=")
            if not sep or not name or not url:
                raise AnalyzerError(f"--source {item!r}: expected NAME=URL_OR_PATH, e.g. --source dsh=/srv/mirror/dsh")
            overrides[name.lower().replace("-", "_")] = url
        return overrides

    def source_for(self, name: str, default_url: str) -> str:
        """The URL to fetch `name` from in this run."""
        return self.source_overrides().get(name.lower().replace("-", "_"), default_url)

    def emit_json(self, payload: Any) -> None:
        """Print machine-readable output on stdout (no colour, no wrapping)."""
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=False) + "\n")

    def warn(self, message: str) -> None:
        """A one-line warning on stderr (the run goes on)."""
        self.err.print(f"warning: {message}", markup=False)

    @property
    def interactive(self) -> bool:
        """True when progress bars make sense (stderr is a terminal)."""
        return self.err.is_terminal
