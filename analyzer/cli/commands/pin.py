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
    return 0
