"""Damaged checkouts in the cache (a killed fetch, a full disk, a truncated file): found, set aside, re-synced.

A checkout in the cache is ours to rebuild — except a symlink (someone's own clone), a folder without
`.git` (maybe someone's files) and a work tree with local edits (refused by `sync`, never deleted).
The cheap check runs whenever a checkout is opened for writing or indexing: git must open it and
resolve HEAD, and `git fsck --connectivity-only` (tens of milliseconds on the real snapshots) must find
every reachable object and a sound index. A failure while reading blobs later asks the full `git fsck`
before anything is discarded.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

Warn = Callable[[str], None]


def _env(dest: Path) -> dict[str, str]:
    return dict(os.environ, GIT_DIR=str(dest / ".git"), GIT_WORK_TREE=str(dest), GIT_TERMINAL_PROMPT="0", LC_ALL="C")


def _git(dest: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git on exactly this checkout (no discovery upwards into an enclosing repository)."""
    return subprocess.run(["git", *args], cwd=dest, capture_output=True, text=True, env=_env(dest))


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0] if lines else "git failed"


def quick_damage(dest: Path) -> str | None:
    """Why the checkout at `dest` is unusable, or None. Cheap: a few git calls, no object walk."""
    if not (dest / ".git").is_dir():
        return None  # not a checkout at all (maybe someone's files): sync refuses it, nothing is deleted
    found = _git(dest, "rev-parse", "--git-dir")
    if found.returncode != 0:
        return _first_line(found.stderr)
    head = _git(dest, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if head.returncode != 0 and head.stderr.strip():
        return _first_line(head.stderr)  # (silent failure: nothing checked out yet, which is fine)
    # every object reachable from refs and the index is present, and the index itself is sound
    linked = _git(dest, "fsck", "--connectivity-only", "--no-dangling", "--no-progress")
    return _first_line(linked.stderr or linked.stdout) if linked.returncode != 0 else None


def deep_damage(dest: Path) -> str | None:
    """Like `quick_damage`, then `git fsck` over every object (for failures while reading blobs)."""
    found = quick_damage(dest)
    if found:
        return found
    done = _git(dest, "fsck", "--no-dangling", "--no-progress")
    return _first_line(done.stderr or done.stdout) if done.returncode != 0 else None


def _say(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()


def discard(dest: Path, name: str, why: str, warn: Warn | None = None) -> None:
    """Move the damaged checkout aside (one rename, so no reader sees half of it) and delete it."""
    aside = dest.with_name(f".{dest.name}.damaged-{time.strftime('%Y%m%d%H%M%S')}-{id(dest):x}")
    dest.rename(aside)
    (warn or _say)(f"{name}: the cached checkout {dest} is damaged ({why}); discarded it, syncing again")
    shutil.rmtree(aside, ignore_errors=True)


def repair(dest: Path, name: str, *, deep: bool = False, warn: Warn | None = None) -> bool:
    """Discard `dest` when it is a damaged checkout of ours; True when it did."""
    if dest.is_symlink() or not dest.is_dir() or not any(dest.iterdir()):
        return False
    why = deep_damage(dest) if deep else quick_damage(dest)
    if why is None:
        return False
    discard(dest, name, why, warn)
    return True


class DeepCheck:
    """`repair(dest, deep=True)` split in two: the cheap checks and the start of the full `git fsck` now,
    the verdict later. A cold graph build starts one per checkout before indexing the first, so the
    checks run side by side and each overlaps the indexing of the repos before it; every checkout is
    still verified before its own files are read and cached."""

    def __init__(self, dest: Path, name: str) -> None:
        self.dest, self.name = dest, name
        self.skip = dest.is_symlink() or not dest.is_dir() or not any(dest.iterdir())
        self.why = None if self.skip else quick_damage(dest)
        self.proc: subprocess.Popen[str] | None = None
        if not self.skip and self.why is None:
            self.proc = subprocess.Popen(["git", "fsck", "--no-dangling", "--no-progress"], cwd=self.dest,
                                         env=_env(self.dest), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True)

    def finish(self, warn: Warn | None = None) -> bool:
        """Wait for the verdict; discard the checkout when it is damaged (True when it did)."""
        if self.proc is not None:
            out, err = self.proc.communicate()
            if self.proc.returncode != 0:
                self.why = _first_line(err or out)
            self.proc = None
        if self.skip or self.why is None:
            return False
        discard(self.dest, self.name, self.why, warn)
        return True

    def cancel(self) -> None:
        """Stop a check whose verdict is no longer wanted (the build failed or was interrupted)."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.communicate()
            self.proc = None
