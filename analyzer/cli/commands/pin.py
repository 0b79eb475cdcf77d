"""`analyze pin NAME REF`: move one pin to what REF names at the source, rewriting repos.lock."""

from __future__ import annotations

import argparse

from analyzer.cli.commands.sync import check_source_names
from analyzer.cli.context import CliContext

NAME = "pin"
HELP = "pin NAME to a tag, branch or sha (resolved at the source) and rewrite repos.lock"
ORDER = 13
DESCRIPTION = (
    "Resolve REF (a tag, branch or sha) at NAME's source, fetch that commit into the cache, and rewrite "
    "only that table's ref/commit in the lock (comments and key order kept, written atomically). On any "
    "failure the lock is left unchanged."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="the upstream, as named in the lock")
    parser.add_argument("ref", metavar="REF", help="tag, branch or commit sha")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.sources import git_progress, pin_ref

    lock = ctx.lock
    pin = lock.get(args.name)
    check_source_names(ctx)
    with git_progress(ctx.err, pin.name, ctx.interactive) as sink:
        change = pin_ref(lock, pin.name, args.ref, ctx.cache_dir, url=ctx.source_for(pin.name, pin.url),
                         progress=sink)
    if ctx.json:
        ctx.emit_json(change.as_json())
    elif change.changed:
        ctx.out.print(f"{change.name}: {change.old_ref or '-'} {change.old_commit[:12]} -> {change.ref or '-'} "
                      f"{change.commit[:12]} ({change.kind}) in {change.lock}; run 'analyze sync {change.name}' "
                      "to check it out", markup=False)
    else:
        ctx.out.print(f"{change.name}: already pinned to {change.ref or '-'} {change.commit[:12]}; {change.lock} "
                      "unchanged", markup=False)
    if change.changed:
        check_trace_ends(ctx, change.name, change.commit)
    return 0


def check_trace_ends(ctx: CliContext, name: str, commit: str) -> None:
    """Warn when `[trace] from`/`to` name nothing at the new pins (the next trace would fail on them).
    Builds the graph at the new pins, which the next trace reuses; a build that fails is said, not fatal."""
    from dataclasses import replace

    from analyzer.api import open_analysis
    from analyzer.errors import AnalyzerError
    from analyzer.graph.queries import resolve_symbol
    from analyzer.lock import load_lock

    lock = load_lock(ctx.lock.path)  # as just rewritten
    ends = [(side, spec) for side, spec in (("from", lock.trace_from), ("to", lock.trace_to)) if spec]
    if not ends:
        return
    try:
        g = open_analysis(replace(ctx.session(), lock=lock), pins=list(lock.repos.values())).view
    except AnalyzerError as exc:
        ctx.warn(f"could not check [trace] from/to at {name} {commit[:12]}: {exc}")
        return
    for side, spec in ends:
        try:
            resolve_symbol(g, spec)
        except AnalyzerError as exc:
            ctx.warn(f"[trace] {side} = {spec!r} no longer exists at {name} {commit[:12]}: {exc}; update the "
                     f"[trace] table in {lock.path.name} or pass FROM TO to trace")
