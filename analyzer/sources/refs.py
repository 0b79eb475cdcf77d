"""What a ref (tag, branch or sha) means at the source and in the cache.

Tags are compared by the commit they peel to, so an annotated tag and a lightweight tag on the same
commit are the same pin; a tag whose peeled commit differs from the lock has been moved upstream.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import git

from analyzer.sources.gitrun import GitFailure, run_git

HEX_RE = re.compile(r"^[0-9a-fA-F]{4,40}$")
VERIFIED_KEY = "analyzer.verifiedref"


@dataclass(frozen=True)
class ResolvedRef:
    """A ref as the source reports it."""

    name: str            # as the user wrote it
    full: str | None     # refs/tags/NAME or refs/heads/NAME; None for a bare sha
    kind: str            # "tag", "branch" or "commit"
    commit: str          # the commit it points to (tags peeled); a prefix when kind == "commit"
    annotated: bool = False

    @property
    def fetch_refspec(self) -> str | None:
        """Where the cache keeps this ref, so later runs can verify it without the network."""
        if self.kind == "tag":
            return f"+{self.full}:{self.full}"
        if self.kind == "branch" and self.full:
            return f"+{self.full}:refs/remotes/origin/{self.full.removeprefix('refs/heads/')}"
        return None


def looks_like_sha(ref: str) -> bool:
    return bool(HEX_RE.match(ref))


def _candidates(ref: str) -> list[str]:
    """Full ref names to try, in git's own precedence (tags before branches)."""
    if ref.startswith("refs/"):
        return [ref]
    return [f"refs/tags/{ref}", f"refs/heads/{ref}"]


def resolve_ref(repo: git.Repo, ref: str, remote: str = "origin") -> ResolvedRef | None:
    """Ask `remote` (one `git ls-remote`) what `ref` points to; None when it has no such tag or branch.

    A ref that is not a tag or branch but looks like a sha comes back as kind "commit" with the sha as
    written (it is checked when fetched). Raises `GitFailure` when the source cannot be reached.
    """
    names = _candidates(ref)
    patterns = [p for n in names for p in (n, f"{n}^{{}}")]
    listing = run_git(repo, ["ls-remote", remote, *patterns], network=True)
    found: dict[str, str] = {}
    for line in listing.splitlines():
        sha, _, name = line.partition("\t")
        if name:
            found[name.strip()] = sha.strip()
    for full in names:
        if full in found:
            peeled = found.get(f"{full}^{{}}")
            kind = "tag" if full.startswith("refs/tags/") else "branch" if full.startswith("refs/heads/") else "ref"
            return ResolvedRef(ref, full, kind, peeled or found[full], annotated=peeled is not None)
    if looks_like_sha(ref):
        return ResolvedRef(ref, None, "commit", ref.lower())
    return None


def check_reachable(repo: git.Repo, remote: str = "origin") -> None:
    """One cheap round trip that fails with git's reason when the source cannot be reached."""
    run_git(repo, ["ls-remote", remote, "HEAD"], network=True)


def local_tag_commit(repo: git.Repo, ref: str) -> str | None:
    """The commit a tag in the cache peels to, or None when the cache has no such tag."""
    full = ref if ref.startswith("refs/tags/") else f"refs/tags/{ref}"
    try:
        return run_git(repo, ["rev-parse", "--verify", "--quiet", f"{full}^{{commit}}"]).strip() or None
    except GitFailure:
        return None


def record_verified(repo: git.Repo, ref: str, commit: str) -> None:
    """Remember that the source showed `ref` at `commit`, so a re-sync needs no network to trust it."""
    run_git(repo, ["config", VERIFIED_KEY, f"{ref} {commit}"])


def verified_offline(repo: git.Repo, ref: str | None, commit: str) -> bool:
    """True when the cache alone proves `ref` still names `commit` (as last seen at the source)."""
    if ref is None:
        return True
    if looks_like_sha(ref) and commit.startswith(ref.lower()):
        return True
    tagged = local_tag_commit(repo, ref)
    if tagged is not None:
        return tagged == commit
    try:
        recorded = run_git(repo, ["config", "--get", VERIFIED_KEY]).strip()
    except GitFailure:
        return False
    return recorded == f"{ref} {commit}"
