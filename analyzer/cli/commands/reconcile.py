"""`analyze reconcile [SCENARIO]`: replay provider usage through the pinned Pi and dsh usage code."""

from __future__ import annotations

import argparse
from typing import Any

from analyzer.cli.context import CliContext
from analyzer.errors import AnalyzerError

NAME = "reconcile"
ORDER = 40
HELP = "replay a usage scenario through the pinned upstream code (provider → Pi → dsh) and check invariants"
DESCRIPTION = (
    "Executes the pinned upstream usage functions (Pi parseChunkUsage, dsh mapUsage, the token-meter fold, "
    "cacheHitPercent) in analyzer's own TypeScript-subset evaluator — never in Node — on a scenario's provider "
    "usage, and prints every number with the upstream line that produced it, the fields each layer drops, and "
    "the invariants (✓/✗). Exit 0 when all invariants hold, 1 when some fail."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", nargs="?", default=None, metavar="SCENARIO",
                        help="a shipped scenario name or a TOML path (default: deepseek-10k; --list shows them)")
    parser.add_argument("--list", action="store_true", help="list the shipped scenarios and exit")
    parser.add_argument("--at", action="append", default=[], metavar="NAME=SHA",
                        help="replay NAME at another commit (or tag) without editing the lock (repeatable)")
    parser.add_argument("--repo-dir", action="append", default=[], metavar="NAME=GITDIR",
                        help="read NAME from this git dir or clone instead of the synced cache (repeatable)")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.usage.ledger import HOPS, reconcile
    from analyzer.usage.render import render_ledger
    from analyzer.usage.repos import parse_assignments
    from analyzer.usage.scenarios import load_scenario, shipped_names

    repos = sorted({h.repo for h in HOPS})
    if args.list:
        names = shipped_names()
        if ctx.json:
            ctx.emit_json({"scenarios": names})
        else:
            for name in names:
                ctx.out.print(name, markup=False)
        return 0
    scenario = load_scenario(args.scenario)
    at = parse_assignments(args.at, "--at", "pi=b4f293684bba718d59cc1157679bcf6157b3a7f5")
    dirs = parse_assignments(args.repo_dir, "--repo-dir", "pi=/srv/mirrors/pi.git")
    for name in [*at, *dirs]:
        if name not in repos:
            raise AnalyzerError(f"unknown upstream {name!r} in --at/--repo-dir; reconcile reads {', '.join(repos)}")
    locators = {name: _locator(ctx, name, at.get(name), dirs.get(name)) for name in repos}
    ledger = reconcile(scenario, locators)
    if ctx.json:
        ctx.emit_json(ledger)
    else:
        render_ledger(ledger, ctx.out)
    return 0 if ledger["ok"] else 1


def _locator(ctx: CliContext, name: str, rev: str | None, git_dir: str | None) -> Any:
    from analyzer.usage.pins import locator_for

    return locator_for(ctx, ctx.lock.get(name), rev, git_dir)
