"""`analyze pin NAME REF`: resolve REF at the source, fetch it, then move the pin in the lock.

The cache is updated first (so the new commit is known to exist) and the lock is rewritten last, in
one atomic step: any failure before that leaves the lock untouched.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from analyzer.lock import Lock
from analyzer.paths import checkout_dir
from analyzer.sources.errors import RefNotFound, UnreachableSource
from analyzer.sources.gitrun import GitFailure, ProgressSink, run_git
from analyzer.sources.lockedit import rewrite_pin
from analyzer.sources.refs import record_verified, resolve_ref
from analyzer.sources.sync import cache_repo, fetch_commit, normalize_url, set_origin


@dataclass(frozen=True)
class PinChange:
    """A pin before and after `pin_ref`."""

    name: str
    kind: str                # "tag", "branch", "ref" or "commit"
    old_ref: str | None
    old_commit: str
    ref: str | None
    commit: str
    url: str
    lock: Path

    @property
    def changed(self) -> bool:
        return (self.old_ref, self.old_commit) != (self.ref, self.commit)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["lock"] = str(self.lock)
        data["changed"] = self.changed
        return data


def pin_ref(lock: Lock, name: str, ref: str, cache_dir: Path, *, url: str | None = None,
            progress: ProgressSink | None = None) -> PinChange:
    """Point `[repos.NAME]` at what `ref` (tag, branch or sha) names at the source.

    A tag or branch is written as `ref` plus its (peeled) commit; a bare sha drops `ref`.
    """
    pin = lock.get(name)
    url = normalize_url(url or pin.url)
    with cache_repo(checkout_dir(cache_dir, name), name) as (repo, _fresh):
        set_origin(repo, url)
        try:
            resolved = resolve_ref(repo, ref)
        except GitFailure as exc:
            raise UnreachableSource(name, url, exc.reason) from None
        if resolved is None:
            raise RefNotFound(name, url, ref)
        refspecs = [resolved.fetch_refspec] if resolved.fetch_refspec else []
        fetch_commit(repo, name, url, resolved.commit, refspecs, progress)
        commit = run_git(repo, ["rev-parse", "--verify", f"{resolved.commit}^{{commit}}"]).strip()
        new_ref = None if resolved.kind == "commit" else ref
        if new_ref is not None:
            record_verified(repo, new_ref, commit)
    change = PinChange(name, resolved.kind, pin.ref, pin.commit, new_ref, commit, url, lock.path)
    if change.changed:
        rewrite_pin(lock.path, name, new_ref, commit)
    return change
