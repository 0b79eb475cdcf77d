"""Where a library call reads from and reports to: the lock, the cache, per-run sources, callbacks.

A `Session` is what the command line's context used to be for the library, without a console or parsed
arguments: `open_session(lock_path)` and every `analyzer.api` function works from Python. Warnings
(a damaged cache file discarded, a hazards section that could not be computed) go to `warn`; notices
(waiting for another process's cache lock) to `notify`; indexing progress to `progress`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from analyzer.errors import AnalyzerError
from analyzer.lock import Lock, load_lock
from analyzer.paths import default_cache_dir, default_lock_path

SOURCE_ENV_PREFIX = "ANALYZER_SOURCE_"
Sink = Callable[[str], None]
Progress = Callable[[str, int, "int | None"], None]
_log = logging.getLogger("analyzer")


def _log_warning(message: str) -> None:
    _log.warning("%s", message)


def _log_info(message: str) -> None:
    _log.info("%s", message)


def source_key(name: str) -> str:
    """Source overrides are matched case-insensitively, `-` and `_` alike (env variable names)."""
    return name.lower().replace("-", "_")


def source_overrides(options: list[str] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Per-run URL replacements: `NAME=URL` items (`--source`) beat `ANALYZER_SOURCE_<NAME>` variables."""
    overrides: dict[str, str] = {}
    for key, value in (os.environ if environ is None else environ).items():
        if key.startswith(SOURCE_ENV_PREFIX) and value:
            overrides[source_key(key[len(SOURCE_ENV_PREFIX):])] = value
    for item in options or []:
        name, sep, url = item.partition("=")
        if not sep or not name or not url:
            raise AnalyzerError(f"--source {item!r}: expected NAME=URL_OR_PATH, e.g. --source dsh=/srv/mirror/dsh")
        overrides[source_key(name)] = url
    return overrides


@dataclass(frozen=True)
class Session:
    """The lock and cache one run works on (satisfies `analyzer.analysis.Workspace`)."""

    lock: Lock
    cache_dir: Path
    sources: Mapping[str, str] = field(default_factory=dict)  # repo name → URL or path for this run
    on_warning: Sink = _log_warning
    on_notice: Sink = _log_info
    progress: Progress | None = None

    def source_for(self, name: str, default_url: str) -> str:
        """The URL to fetch `name` from in this run."""
        return self.sources.get(source_key(name), default_url)

    def warn(self, message: str) -> None:
        self.on_warning(message)

    def notify(self, message: str) -> None:
        self.on_notice(message)

    def with_sources(self, extra: Mapping[str, str]) -> Session:
        """This session with more source overrides (they win over the ones it had)."""
        return replace(self, sources={**self.sources, **{source_key(k): v for k, v in extra.items()}})


def open_session(lock: Lock | Path | str | None = None, *, cache_dir: Path | str | None = None,
                 sources: Mapping[str, str] | None = None, warn: Sink | None = None, notify: Sink | None = None,
                 progress: Progress | None = None, environ: Mapping[str, str] | None = None) -> Session:
    """A session over `lock` (a path, default ./repos.lock then the package's) and `cache_dir` (default
    $ANALYZER_CACHE_DIR or the user cache). `sources` (name → URL or path) beat ANALYZER_SOURCE_<NAME>
    from `environ` (default the process environment). Warnings and notices go to the logger `analyzer`
    unless `warn`/`notify` take them."""
    loaded = lock if isinstance(lock, Lock) else load_lock(Path(lock) if lock is not None else default_lock_path())
    merged = source_overrides([], environ)
    merged.update({source_key(k): v for k, v in (sources or {}).items()})
    return Session(loaded, Path(cache_dir) if cache_dir is not None else default_cache_dir(), merged,
                   warn or _log_warning, notify or _log_info, progress)
