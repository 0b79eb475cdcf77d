"""Where an app's request text comes from: a literal lookup over the app's own repo at the commit it was
installed from, so the prefix analysis can say which line of code wrote the text where two requests part."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.analysis import Workspace
    from analyzer.apps.install import InstalledApp

Lookup = Callable[[str], list[Any]]


def app_literal_lookup(workspace: Workspace, app: InstalledApp) -> tuple[Lookup | None, str]:
    """(lookup, note): the lookup over the indexed repo (test files left out: a test that repeats the app's
    prompt text is not what wrote the request), or None with the reason when the install has no commit or
    its repo cannot be indexed."""
    from analyzer.index.build import index_repo
    from analyzer.index.cache import FactsCache
    from analyzer.index.testcode import is_test_path
    from analyzer.lock import RepoPin
    from analyzer.prefix.source_lookup import SourceLookup
    from analyzer.sources.workspace import open_repo

    if not app.commit:
        return None, "no commit behind this install (--version): the divergence is not traced to code"
    try:
        pin = workspace.lock.get(app.profile.repo)
        repo = open_repo(workspace, RepoPin(pin.name, pin.url, app.commit, None, pin.aliases), fetch=False)
        with FactsCache(workspace.cache_dir) as cache:
            index = index_repo(repo, app.commit, repo_name=pin.name, cache=cache)
    except AnalyzerError as exc:
        return None, f"the divergence is not traced to code ({exc})"
    literals = SourceLookup([index], {pin.name: repo}, keep=lambda path: not is_test_path(path))
    return literals, f"literals looked up in {index.name} @ {index.commit[:12]} (test files left out)"
