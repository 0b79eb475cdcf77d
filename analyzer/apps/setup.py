"""An app ready to run for a workspace: installed at the version its pin names, and the endpoint to point it at.

Shared by `analyze app` and `analyze observe`'s app experiments, so both install and pick the base URL the
same way; `ctx` is the `Workspace` (a CLI context or an api session).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from analyzer.analysis import Workspace
from analyzer.errors import AnalyzerError


def install_app(ctx: Workspace, name: str, at: list[str] | None, *, version: str | None = None,
                say: Callable[[str], None]) -> Any:
    """The installed app `name` (profile): at the version its pinned commit names, or `version` by hand;
    `say` hears the progress lines of a long install or build."""
    from analyzer.apps.install import ensure_app, ensure_npm_app
    from analyzer.apps.pins import pinned_repo
    from analyzer.apps.profile import load_profile

    profile = load_profile(name)
    if version is not None:
        if at:
            raise AnalyzerError("give --version or --at, not both: --at follows a commit's own version")
        return ensure_npm_app(ctx.cache_dir, profile, version, say=say)
    git_dir, commit = pinned_repo(ctx, profile.repo, at)
    return ensure_app(ctx.cache_dir, profile, git_dir, commit, say=say)


def default_base_url(ctx: Workspace) -> str:
    """The running local engine's base URL; an error that says what to do when none runs."""
    from analyzer.engine.state import running_base_url

    url = running_base_url(ctx.cache_dir)
    if url:
        return url
    raise AnalyzerError("no base URL: pass --base-url URL, or start the local engine first (`analyze engine start`)")
