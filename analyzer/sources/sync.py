"""Bring one pinned upstream into the cache, at exactly its commit, detached.

Order of checks: a dirty cached work tree is refused before anything is touched; when the commit is
already cached and the ref was verified before, nothing touches the network; otherwise the source is
asked once (`ls-remote`) what the ref means, a moved tag is refused, and only the pinned commit is
fetched (`--depth 1`), falling back to a full fetch for servers that refuse unadvertised shas.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import git

from analyzer.cachelock import cache_writer
from analyzer.lock import RepoPin
from analyzer.paths import checkout_dir
from analyzer.sources.errors import (
    BrokenCache,
    DirtyWorkTree,
    MissingCommit,
    MovedTag,
    RefNotFound,
    SourceError,
    UnreachableSource,
)
from analyzer.sources.gitrun import GitFailure, ProgressSink, has_commit, is_shallow, run_git
from analyzer.sources.refs import ResolvedRef, check_reachable, record_verified, resolve_ref, verified_offline
from analyzer.sources.repair import repair


@dataclass(frozen=True)
class SyncResult:
    """What `sync_pin` did for one upstream."""

    name: str
    path: Path
    commit: str
    ref: str | None
    url: str
    action: str              # "unchanged", "checked out", "fetched (shallow)", "fetched (full)", "verified"
    network: bool            # whether the source was contacted
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["path"] = str(self.path)
        data["notes"] = list(self.notes)
        return data


def normalize_url(url: str) -> str:
    """Existing local paths become absolute (git runs inside the cache); anything else passes through
    unchanged, so git's `url.<base>.insteadOf` rewriting still applies."""
    if "://" in url:
        return url
    path = Path(url).expanduser()
    return str(path.resolve()) if path.exists() else url


def sync_pin(pin: RepoPin, cache_dir: Path, *, url: str | None = None,
             progress: ProgressSink | None = None) -> SyncResult:
    """Make `checkout_dir(cache_dir, pin.name)` a clean work tree detached at `pin.commit`.

    `url` replaces `pin.url` for this run (a `--source` override). Raises a `SourceError` subclass for
    a dirty cache, an unreachable source, a moved tag, an unknown ref or a commit the source lacks.
    """
    url = normalize_url(url or pin.url)
    dest = checkout_dir(cache_dir, pin.name)
    notes: list[str] = []
    with cache_repo(dest, pin.name) as (repo, fresh):
        if not fresh:
            refuse_dirty(repo, pin.name, dest)
        if not fresh and has_commit(repo, pin.commit) and verified_offline(repo, pin.ref, pin.commit):
            network, fetched = False, None
        else:
            network = True
            set_origin(repo, url)
            resolved = verify_at_source(repo, pin, url, notes)
            keep = [resolved.fetch_refspec] if resolved and resolved.fetch_refspec and \
                resolved.commit == pin.commit else []
            fetched = fetch_commit(repo, pin.name, url, pin.commit, keep, progress)
            if pin.ref is not None:
                record_verified(repo, pin.ref, pin.commit)
        try:
            moved = checkout(repo, pin.commit, progress)
        except GitFailure as exc:
            raise SourceError(f"{pin.name}: cannot check out {pin.commit} in {dest}: {exc.reason}; delete {dest} "
                              f"and run 'analyze sync {pin.name}' again") from None
        head = head_commit(repo)
        if head != pin.commit:
            raise SourceError(f"{pin.name}: {dest} is at {head} after checkout, not {pin.commit}; "
                              f"delete {dest} and run 'analyze sync {pin.name}' again")
    action = f"fetched ({fetched})" if fetched else "checked out" if moved else "unchanged"
    return SyncResult(pin.name, dest, pin.commit, pin.ref, url, action, network, tuple(notes))


@contextmanager
def cache_repo(dest: Path, name: str) -> Iterator[tuple[git.Repo, bool]]:
    """The cached repo for `name` and whether it is new. A new one is built in a hidden sibling and
    moved into place only when the caller succeeds, so a failed first sync leaves nothing behind.

    The cache's writer lock is held throughout, so two runs never build or update the same entry at once
    (the second waits, then finds the first one's checkout)."""
    with cache_writer(dest.parent.parent):
        with _cache_repo(dest, name) as found:
            yield found


@contextmanager
def _cache_repo(dest: Path, name: str) -> Iterator[tuple[git.Repo, bool]]:
    repair(dest, name)  # a damaged checkout (truncated HEAD, index, pack…) is set aside and fetched again
    if dest.is_dir() and not any(dest.iterdir()):
        dest.rmdir()
    if dest.exists() or dest.is_symlink():
        repo = open_cached(dest, name)
        try:
            yield repo, False
        finally:
            repo.close()
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=dest.parent))
    try:
        repo = git.Repo.init(tmp)
        try:
            yield repo, True
        finally:
            repo.close()
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def open_cached(dest: Path, name: str) -> git.Repo:
    """Open an existing cache entry, refusing anything that is not a plain git work tree."""
    try:
        repo = git.Repo(dest)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise BrokenCache(name, dest, "exists but is not a git repository") from None
    if repo.bare or Path(repo.working_tree_dir or "").resolve() != dest.resolve():
        repo.close()
        raise BrokenCache(name, dest, "is not the top of a git work tree")
    return repo


def changed_paths(repo: git.Repo) -> list[str]:
    """Modified, staged and untracked paths (ignored files do not count)."""
    out = run_git(repo, ["status", "--porcelain", "--untracked-files=normal"])
    return [line[3:] for line in out.splitlines() if line.strip()]


def refuse_dirty(repo: git.Repo, name: str, dest: Path) -> None:
    changed = changed_paths(repo)
    if changed:
        raise DirtyWorkTree(name, dest, changed)


def set_origin(repo: git.Repo, url: str) -> None:
    """Point `origin` at this run's URL (as given: git applies insteadOf when it connects)."""
    if any(r.name == "origin" for r in repo.remotes):
        run_git(repo, ["remote", "set-url", "origin", url])
    else:
        run_git(repo, ["remote", "add", "origin", url])


def verify_at_source(repo: git.Repo, pin: RepoPin, url: str, notes: list[str]) -> ResolvedRef | None:
    """Check the source is reachable and that `pin.ref` still names `pin.commit` there."""
    try:
        if pin.ref is None:
            check_reachable(repo)
            return None
        resolved = resolve_ref(repo, pin.ref)
    except GitFailure as exc:
        raise UnreachableSource(pin.name, url, exc.reason) from None
    if resolved is None:
        raise RefNotFound(pin.name, url, pin.ref)
    if resolved.kind == "commit":
        if not pin.commit.startswith(resolved.commit):
            raise SourceError(f"{pin.name}: ref {pin.ref} is a sha that is not commit {pin.commit}; make ref and "
                              f"commit agree in repos.lock, or run 'analyze pin {pin.name} REF'")
    elif resolved.commit != pin.commit:
        if resolved.kind == "tag":
            raise MovedTag(pin.name, url, pin.ref, pin.commit, resolved.commit)
        notes.append(f"{pin.name}: {resolved.kind} {pin.ref} at {url} is now at {resolved.commit[:12]}; syncing the "
                     f"pinned {pin.commit[:12]} (run 'analyze pin {pin.name} {pin.ref}' to move the pin)")
    return resolved


def fetch_commit(repo: git.Repo, name: str, url: str, commit: str, refspecs: list[str],
                 progress: ProgressSink | None = None) -> str | None:
    """Get `commit` (and `refspecs`) from origin: only that commit when the server allows it, else
    everything. Returns "shallow", "full", or None when only refs were needed."""
    flag = ["--progress"] if progress else []
    if has_commit(repo, commit):
        if refspecs:
            # In a shallow cache --depth 1 keeps git from pulling the ref's history; a full one needs nothing.
            depth = ["--depth", "1"] if is_shallow(repo) else []
            try:
                run_git(repo, ["fetch", "--no-tags", *depth, *flag, "origin", *refspecs], network=True,
                        progress=progress)
            except GitFailure as exc:
                raise UnreachableSource(name, url, exc.reason) from None
        return None
    if set(commit) == {"0"}:
        raise MissingCommit(name, url, commit)  # git's null id names no object anywhere: no fetch can find it
    method = "full"
    if len(commit) == 40:
        try:
            run_git(repo, ["fetch", "--no-tags", "--depth", "1", *flag, "origin", commit, *refspecs],
                    network=True, progress=progress)
            method = "shallow"
        except GitFailure:
            pass  # the server refuses unadvertised shas (or lacks it): the full fetch below decides
    if method == "full":
        unshallow = ["--unshallow"] if is_shallow(repo) else []
        try:
            run_git(repo, ["fetch", "--tags", *unshallow, *flag, "origin", "+refs/heads/*:refs/remotes/origin/*",
                           *refspecs], network=True, progress=progress)
        except GitFailure as exc:
            if not _reachable(repo):
                raise UnreachableSource(name, url, exc.reason) from None
            # the server answers but refuses the fetch of a commit it lacks ("possible repository corruption")
    if not has_commit(repo, commit):
        raise MissingCommit(name, url, commit)
    return method


def _reachable(repo: git.Repo) -> bool:
    """True when origin answers a plain ref listing (so a failed fetch was about the commit, not the server)."""
    try:
        run_git(repo, ["ls-remote", "--heads", "origin"], network=True)
    except GitFailure:
        return False
    return True


def head_commit(repo: git.Repo) -> str | None:
    """HEAD's commit, or None in a repo with nothing checked out yet."""
    try:
        return run_git(repo, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).strip() or None
    except GitFailure:
        return None


def checkout(repo: git.Repo, commit: str, progress: ProgressSink | None = None) -> bool:
    """Detach the work tree at `commit`; False when it already was."""
    if head_commit(repo) == commit and repo.head.is_detached:
        return False
    noise = ["--progress"] if progress else ["--quiet"]
    run_git(repo, ["-c", "advice.detachedHead=false", "checkout", "--detach", *noise, commit], progress=progress)
    return True
