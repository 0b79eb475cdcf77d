"""`sync` / `status`: the pinned upstreams in the session's cache, fetched from the session's sources.

Thin over `analyzer.sources` (which knows git): these take the session, so the per-run source overrides
and the cache dir come from one place, for the command line and for Python alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analyzer.api.session import Session

if TYPE_CHECKING:
    from analyzer.sources import PinStatus, SyncResult
    from analyzer.sources.gitrun import ProgressSink


@dataclass(frozen=True)
class RepoStatus:
    """One upstream as the cache knows it (offline), and whether its ref still names the pinned commit."""

    status: PinStatus
    ref_mismatch: str | None  # "NAME: ref R points to X in the cache, but the lock pins Y …", or None

    def as_json(self) -> dict[str, Any]:
        return dict(self.status.as_json(), ref_mismatch=self.ref_mismatch)


def status(session: Session, names: list[str] | None = None) -> list[RepoStatus]:
    """Each pin (all, or `names`), described from the cache alone: no network."""
    from analyzer.sources import pin_status
    from analyzer.sources.refcheck import ref_mismatch

    return [RepoStatus(pin_status(pin, session.cache_dir, session.source_for(pin.name, pin.url)),
                       ref_mismatch(pin, session.cache_dir))
            for pin in session.lock.select(names or [])]


def sync(session: Session, name: str, *, progress: ProgressSink | None = None) -> SyncResult:
    """Make the cached work tree of pin `name` clean and detached at its commit, fetching from the session's
    source for it only when the commit is missing (a `SourceError`, an `AnalyzerError`, says why not)."""
    from analyzer.sources import sync_pin

    pin = session.lock.get(name)
    return sync_pin(pin, session.cache_dir, url=session.source_for(pin.name, pin.url), progress=progress)
