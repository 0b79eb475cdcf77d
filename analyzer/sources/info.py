"""What the cache knows about each pin, read locally (status never touches the network)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import git

from analyzer.lock import RepoPin
from analyzer.paths import checkout_dir
from analyzer.sources.gitrun import has_commit
from analyzer.sources.sync import head_commit


@dataclass(frozen=True)
class PinStatus:
    """One upstream as `analyze status` reports it."""

    name: str
    url: str
    source: str | None      # the URL this run would fetch from, when overridden
    ref: str | None
    commit: str
    path: Path
    present: bool            # the cache holds the commit object
    checked_out: bool        # the cached work tree is at the commit
    date: str | None         # committer date, ISO 8601 with offset
    subject: str | None

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["path"] = str(self.path)
        return data


def pin_status(pin: RepoPin, cache_dir: Path, source: str | None = None) -> PinStatus:
    """Describe `pin` from the cache alone; a missing or broken cache entry reads as not present."""
    dest = checkout_dir(cache_dir, pin.name)
    present = checked_out = False
    date = subject = None
    if (dest / ".git").exists():
        try:
            repo = git.Repo(dest)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            repo = None
        if repo is not None:
            with repo:
                present = has_commit(repo, pin.commit)
                if present:
                    commit = repo.commit(pin.commit)
                    date = commit.committed_datetime.isoformat()
                    subject = str(commit.summary)
                    checked_out = head_commit(repo) == pin.commit
    return PinStatus(pin.name, pin.url, source if source and source != pin.url else None, pin.ref, pin.commit,
                     dest, present, checked_out, date, subject)
