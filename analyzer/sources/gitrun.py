"""Running git for the source cache: captured errors, optional progress, never a credential prompt.

GitPython's `Repo.git` runs the commands (so `url.<base>.insteadOf` and the user's other git settings
apply unchanged); this module adds what the sync needs on top: stderr read as it arrives so a progress
bar can follow it, and git's own reason for a failure reduced to one line a user can act on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Protocol

import git

# Never stop to ask for a user name on a terminal: an unreachable source must fail with git's reason.
NETWORK_ENV = {"GIT_TERMINAL_PROMPT": "0"}
_SPLIT_RE = re.compile(r"[\r\n]+")


class ProgressSink(Protocol):
    """Receives git's progress lines (`Receiving objects:  42% (420/1000)`) as they arrive."""

    def line(self, text: str) -> None: ...


class GitFailure(Exception):
    """A git command failed; `reason` is git's own explanation in one line."""

    def __init__(self, command: Sequence[str], status: int, stderr: str) -> None:
        self.command = list(command)
        self.status = status
        self.stderr = stderr
        super().__init__(f"git {' '.join(self.command)} exited {status}: {self.reason}")

    @property
    def reason(self) -> str:
        return git_reason(self.stderr)


def git_reason(stderr: str) -> str:
    """The most telling line of git's stderr: the first `fatal:`, else `error:`, else the last line."""
    lines = [ln.strip() for ln in _SPLIT_RE.split(stderr) if ln.strip()]
    for prefix in ("fatal:", "error:"):
        for ln in lines:
            if ln.startswith(prefix):
                return ln[len(prefix):].strip()
    return lines[-1] if lines else "no message from git"


def run_git(repo: git.Repo, args: Sequence[str], *, network: bool = False,
            progress: ProgressSink | None = None) -> str:
    """Run `git ARGS` in `repo`; return stdout, raise `GitFailure` with stderr on a non-zero exit.

    With `progress`, stderr is read chunk by chunk and each `\\r`/`\\n`-terminated line is handed on, so
    long transfers can be shown while they happen.
    """
    env = dict(NETWORK_ENV) if network else None
    if progress is None:
        status, out, err = repo.git.execute(["git", *args], with_extended_output=True, with_exceptions=False,
                                            env=env, strip_newline_in_stdout=False)
        if status != 0:
            raise GitFailure(args, int(status), str(err))
        return str(out)
    proc = repo.git.execute(["git", *args], as_process=True, env=env)
    popen = proc.proc
    assert popen is not None and popen.stderr is not None and popen.stdout is not None
    err_text: list[str] = []
    pending = ""
    fd = popen.stderr.fileno()
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        pending += chunk.decode("utf-8", "replace")
        *complete, pending = _SPLIT_RE.split(pending)
        for ln in complete:
            err_text.append(ln)
            progress.line(ln)
    if pending:
        err_text.append(pending)
        progress.line(pending)
    out_bytes = popen.stdout.read()
    status = popen.wait()
    if status != 0:
        raise GitFailure(args, status, "\n".join(err_text))
    return out_bytes.decode("utf-8", "replace")


def has_commit(repo: git.Repo, sha: str) -> bool:
    """True when the commit object is in `repo` (a shallow clone counts: its tree is complete)."""
    try:
        run_git(repo, ["cat-file", "-e", f"{sha}^{{commit}}"])
    except GitFailure:
        return False
    return True


def is_shallow(repo: git.Repo) -> bool:
    return os.path.exists(os.path.join(repo.git_dir, "shallow"))
