"""Which git repo (and commit) each upstream of a reconciliation is read from.

Default: the synced cache (`analyzer.sources.open_repo`) at the lock's pin, or at `--at NAME=SHA`.
`--repo-dir NAME=GITDIR` points at any git dir instead (a mirror, a bare snapshot, another clone).
"""

from __future__ import annotations

from pathlib import Path

import git

from analyzer.errors import AnalyzerError


def open_git_dir(path: str | Path) -> git.Repo:
    """Open a work tree or a git dir, including a bare snapshot without a `config` file.

    Git cannot discover a bare directory that lacks `config`, so GitPython's commands would run against
    the parent directory; pinning GIT_DIR makes every command read the directory that was named.
    """
    p = Path(path).expanduser()
    try:
        repo = git.Repo(p)
    except (git.NoSuchPathError, git.InvalidGitRepositoryError):
        raise AnalyzerError(f"{p}: not a git repository; pass --repo-dir NAME=GITDIR with a clone or git dir") from None
    if not (p / ".git").exists():
        repo.git.update_environment(GIT_DIR=str(p.resolve()))
    return repo


def parse_assignments(items: list[str] | None, option: str, example: str) -> dict[str, str]:
    """`NAME=VALUE` options → dict, with a one-line error for a malformed item."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise AnalyzerError(f"{option} {item!r}: expected NAME=VALUE, e.g. {option} {example}")
        out[name] = value
    return out


def resolve_commit(repo: git.Repo, name: str, rev: str) -> str:
    """A full sha for `rev` (sha, tag or branch) in `repo`, or a one-line error."""
    try:
        return repo.commit(rev).hexsha
    except (ValueError, git.BadName, git.GitCommandError):
        raise AnalyzerError(f"{name}: {rev} is not a commit in {repo.git_dir}; fetch it ('analyze sync {name}') "
                            f"or pass --repo-dir {name}=GITDIR that has it") from None
