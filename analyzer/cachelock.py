"""One writer at a time per cache dir: a file lock (`filelock`) around syncing, fetching and indexing.

Readers never take it: stored graphs, the index database and checkouts are replaced atomically, so a
reader sees the old state or the new one. A process that must wait says so once on stderr and then
proceeds; the lock is reentrant within a process (one `FileLock` object per cache dir), so nested
writers (indexing that syncs a missing checkout) do not deadlock. The OS drops the lock when its holder
dies, so a killed run never blocks the next one.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

LOCK_NAME = ".writer.lock"
_LOCKS: dict[str, FileLock] = {}


def _lock_options() -> dict[str, Any]:
    """Plain `flock` on a lock file that stays in place: filelock 4's default (unlink the file on release,
    fall back to a soft lock where it guesses flock is missing) once let two first runs on a new cache
    both proceed. Older filelock versions only have the plain behaviour, so pass what this one knows."""
    wanted: dict[str, Any] = {"thread_local": False, "mode": 0o644, "fallback_to_soft": False,
                                 "preserve_lock_file": True}
    known = inspect.signature(FileLock.__init__).parameters
    return {k: v for k, v in wanted.items() if k in known}


_LOCK_OPTIONS = _lock_options()


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def lock_path(cache_dir: Path) -> Path:
    return Path(cache_dir) / LOCK_NAME


@contextmanager
def cache_writer(cache_dir: Path, *, notify: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the writer lock of `cache_dir`; if another process holds it, print one waiting line first."""
    path = lock_path(cache_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(path)
    lock = _LOCKS.get(key)
    if lock is None:
        lock = _LOCKS[key] = FileLock(key, **_LOCK_OPTIONS)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        (notify or _say)(f"waiting for another analyze on {Path(cache_dir)}…")
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def held(cache_dir: Path) -> bool:
    """Whether this process holds the writer lock of `cache_dir` (for assertions and tests)."""
    lock = _LOCKS.get(os.path.realpath(lock_path(cache_dir)))
    return bool(lock and lock.is_locked)
