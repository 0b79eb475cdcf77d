"""Which commit an app follows: the lock's pin for its repo, or `--at NAME=SHA` for this run."""

from __future__ import annotations

from analyzer.analysis import Workspace, apply_at


def pinned_repo(ctx: Workspace, repo: str, at: list[str] | None) -> tuple[str, str]:
    """(git dir, full commit) of `repo` at its pin; the checkout is synced or fetched when missing."""
    from analyzer.sources import open_repo

    pins = {p.name: p for p in apply_at(ctx.lock, at)}
    pin = pins[repo]
    git_repo = open_repo(ctx, pin)
    commit = git_repo.git.rev_parse(f"{pin.commit}^{{commit}}").strip()
    return str(git_repo.git_dir), commit
