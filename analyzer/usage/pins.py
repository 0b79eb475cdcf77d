"""Build the replay's locators from pins: the link between `analyze reconcile`, re-checks and the cache."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analyzer.lock import RepoPin
from analyzer.usage.indexed import IndexedFunctionLocator
from analyzer.usage.ledger import HOPS, reconcile
from analyzer.usage.repos import open_git_dir, resolve_commit
from analyzer.usage.scenarios import Scenario, load_scenario

if TYPE_CHECKING:
    from analyzer.analysis import Workspace

REPLAYED_REPOS = sorted({h.repo for h in HOPS})


def locator_for(ctx: Workspace, pin: RepoPin, rev: str | None = None,
                git_dir: str | None = None) -> IndexedFunctionLocator:
    """The pinned repo (synced cache, or `git_dir`) at `rev` (default: the pin's commit), located through the
    index kept in `ctx.cache_dir`."""
    if git_dir is not None:
        repo = open_git_dir(git_dir)
    else:
        from analyzer.sources import open_repo

        target = pin if rev is None or len(rev) != 40 else RepoPin(pin.name, pin.url, rev, None, pin.aliases)
        repo = open_repo(ctx, target)
    return IndexedFunctionLocator(repo, resolve_commit(repo, pin.name, rev or pin.commit), pin.name, ctx.cache_dir)


def ledger_for_pins(ctx: Workspace, pins: list[RepoPin], scenario: Scenario | None = None) -> dict[str, Any]:
    """The reconciliation ledger (default scenario) replayed at these pins; used by `analyze recheck`."""
    by_name = {p.name: p for p in pins}
    missing = [name for name in REPLAYED_REPOS if name not in by_name]
    if missing:
        raise ValueError(f"the replay needs pins for {', '.join(missing)}")
    locators = {name: locator_for(ctx, by_name[name]) for name in REPLAYED_REPOS}
    return reconcile(scenario or load_scenario(None), locators)
