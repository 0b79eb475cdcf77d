"""Does the lock's `ref` still name its `commit` in the cache? Read offline with one plain `git` call.

`sync` checks the ref at the source; `status` and `trace` only ask the cache, so a hand-edited commit, or
a ref that moved since the last sync, is said before a result is read as being "at v0.84.3". Plain
subprocess (no GitPython) keeps a warm trace's start-up light.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from analyzer.lock import RepoPin
from analyzer.paths import checkout_dir


def cached_tag_commit(git_dir: Path, ref: str) -> str | None:
    """The commit the cached tag `ref` peels to, or None (no such tag, no cache)."""
    if not (git_dir / ".git").exists():
        return None
    full = ref if ref.startswith("refs/tags/") else f"refs/tags/{ref}"
    done = subprocess.run(["git", "-C", str(git_dir), "rev-parse", "--verify", "--quiet", f"{full}^{{commit}}"],
                          capture_output=True, text=True)
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def ref_mismatch(pin: RepoPin, cache_dir: Path) -> str | None:
    """A sentence when the cached tag `pin.ref` points elsewhere than `pin.commit`, else None."""
    if not pin.ref:
        return None
    tagged = cached_tag_commit(checkout_dir(cache_dir, pin.name), pin.ref)
    if tagged is None or tagged == pin.commit:
        return None
    return (f"{pin.name}: ref {pin.ref} points to {tagged[:12]} in the cache, but the lock pins {pin.commit[:12]}; "
            f"results are at {pin.commit[:12]}, not at {pin.ref} (run 'analyze pin {pin.name} {pin.ref}' to move "
            f"the pin to the tag, or 'analyze sync {pin.name}' to check the tag at the source)")
