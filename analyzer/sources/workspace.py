"""Read access to a pinned upstream for the rest of the tool (indexer, tracer, re-checks).

Readers go through git objects at the pinned commit (`repo.commit(sha).tree`), never through the work
tree, so a different commit (`--at`, a re-check) can be read from the same cache without a checkout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import git

from analyzer.cachelock import cache_writer
from analyzer.lock import RepoPin
from analyzer.paths import checkout_dir
from analyzer.sources.errors import MissingCommit, SourceError
from analyzer.sources.gitrun import GitFailure, ProgressSink, has_commit, run_git
from analyzer.sources.repair import quick_damage, repair
from analyzer.sources.sync import fetch_commit, normalize_url, open_cached, sync_pin


class HasCache(Protocol):
    """What `open_repo` needs from a `CliContext`."""

    @property
    def cache_dir(self) -> Path: ...

    def source_for(self, name: str, default_url: str) -> str: ...


def open_repo(where: HasCache | Path | str, pin: RepoPin, *, fetch: bool = True,
              progress: ProgressSink | None = None) -> git.Repo:
    """The cached git repo of `pin.name`, guaranteed to contain the commit object `pin.commit`.

    `where` is a `CliContext` (its cache dir and `--source`/`ANALYZER_SOURCE_*` overrides apply) or a
    cache directory. With `fetch` (default) a missing cache entry is synced and a missing commit is
    fetched; without it either raises a one-line error saying to run `analyze sync NAME`.
    """
    if isinstance(where, (str, Path)):
        cache_dir, url = Path(where), pin.url
    else:
        cache_dir, url = where.cache_dir, where.source_for(pin.name, pin.url)
    dest = checkout_dir(cache_dir, pin.name)
    if fetch and quick_damage(dest) is not None:
        with cache_writer(cache_dir):
            repair(dest, pin.name)  # set aside; synced again just below
    if not (dest / ".git").exists():
        if not fetch:
            raise SourceError(f"{pin.name}: not in the cache ({dest}); run 'analyze sync {pin.name}'")
        sync_pin(pin, cache_dir, url=url, progress=progress)
    repo = open_cached(dest, pin.name)
    if fetch and not has_commit(repo, pin.commit):
        with cache_writer(cache_dir):  # fetching writes the cached repo: one writer at a time
            ensure_commit(repo, pin.commit, name=pin.name, url=url, progress=progress)
    else:
        ensure_commit(repo, pin.commit, name=pin.name, url=url if fetch else None, progress=progress)
    return repo


def ensure_commit(repo: git.Repo, sha: str, *, name: str | None = None, url: str | None = None,
                  progress: ProgressSink | None = None) -> git.Commit:
    """The commit `sha` from `repo`, fetched first (only that commit when possible) if it is missing.

    `url` is where to fetch from (default: the repo's `origin`); pass `url=None` and a repo without an
    origin to forbid fetching. Raises `MissingCommit`/`UnreachableSource`/`SourceError`, never GitPython's
    own exceptions.
    """
    label = name or Path(repo.working_tree_dir or repo.git_dir).name
    if not has_commit(repo, sha):
        origin = next((r for r in repo.remotes if r.name == "origin"), None)
        if url is None and origin is None:
            raise SourceError(f"{label}: commit {sha} is not in {repo.working_tree_dir or repo.git_dir} and there is "
                              f"no origin to fetch it from; run 'analyze sync {label}'")
        if url is not None:
            target = normalize_url(url)
            verb = "set-url" if origin is not None else "add"
            run_git(repo, ["remote", verb, "origin", target])
        else:
            target = next(iter(origin.urls), "origin") if origin is not None else "origin"
        fetch_commit(repo, label, target, sha, [], progress)
    try:
        return repo.commit(sha)
    except (ValueError, git.BadName, GitFailure):
        raise MissingCommit(label, "the cache", sha) from None

