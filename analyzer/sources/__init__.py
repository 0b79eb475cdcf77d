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

from analyzer.lazyexports import lazy_exports

# Exported name → the submodule that defines it. Loaded on first use (PEP 562), so importing one light
# submodule (`analyzer.sources.refcheck`, asked by every warm `trace`) does not pull in GitPython.
_EXPORTS = {
    "BrokenCache": "errors", "DirtyWorkTree": "errors", "MissingCommit": "errors", "MovedTag": "errors",
    "RefNotFound": "errors", "SourceError": "errors", "UnreachableSource": "errors",
    "PinStatus": "info", "pin_status": "info", "PinChange": "pinning", "pin_ref": "pinning",
    "git_progress": "progress", "ResolvedRef": "refs", "resolve_ref": "refs", "SyncResult": "sync",
    "sync_pin": "sync", "ensure_commit": "workspace", "open_repo": "workspace",
}

__all__ = list(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())
