"""Pinned upstream sources: sync into the cache, verify refs, move pins, and open repos for reading.

Public API:
- `sync_pin(pin, cache_dir, url=None, progress=None) -> SyncResult`: cache work tree detached at the pin.
- `open_repo(ctx_or_cache_dir, pin, fetch=True) -> git.Repo`: a cached repo that holds `pin.commit`.
- `ensure_commit(repo, sha, ...) -> git.Commit`: the commit object, fetched first if missing.
- `resolve_ref(repo, ref) -> ResolvedRef | None`: what a tag/branch/sha names at the repo's origin.
- `pin_ref(lock, name, ref, cache_dir, url=None) -> PinChange`: move a pin and rewrite the lock.
- `pin_status(pin, cache_dir, source=None) -> PinStatus`: what the cache knows, offline.
"""

from __future__ import annotations

from analyzer.sources.errors import (
    BrokenCache,
    DirtyWorkTree,
    MissingCommit,
    MovedTag,
    RefNotFound,
    SourceError,
    UnreachableSource,
)
from analyzer.sources.info import PinStatus, pin_status
from analyzer.sources.pinning import PinChange, pin_ref
from analyzer.sources.progress import git_progress
from analyzer.sources.refs import ResolvedRef, resolve_ref
from analyzer.sources.sync import SyncResult, sync_pin
from analyzer.sources.workspace import ensure_commit, open_repo

__all__ = [
    "BrokenCache", "DirtyWorkTree", "MissingCommit", "MovedTag", "RefNotFound", "SourceError",
    "UnreachableSource", "PinStatus", "pin_status", "PinChange", "pin_ref", "git_progress", "ResolvedRef",
    "resolve_ref", "SyncResult", "sync_pin", "ensure_commit", "open_repo",
]
