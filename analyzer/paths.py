"""Where things live on disk: the lock file and the cache directory."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "ANALYZER_CACHE_DIR"
PACKAGE_LOCK = Path(__file__).resolve().parent.parent / "repos.lock"


def user_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/analyzer`, else `~/.cache/analyzer`: the user's, whatever `$ANALYZER_CACHE_DIR` says."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "analyzer"


def default_cache_dir() -> Path:
    """`$ANALYZER_CACHE_DIR`, else `user_cache_dir()`."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else user_cache_dir()


def default_lock_path() -> Path:
    """`repos.lock` in the current directory, then the one shipped beside the package."""
    here = Path.cwd() / "repos.lock"
    if here.exists():
        return here
    return PACKAGE_LOCK


def checkout_dir(cache_dir: Path, name: str) -> Path:
    """The cached work tree of one upstream."""
    return cache_dir / "repos" / name
