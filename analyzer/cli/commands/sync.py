"""`analyze sync [NAME ...]`: bring the pinned upstreams into the cache, exactly at their commits."""

from __future__ import annotations

import argparse
from typing import Any

from analyzer.cli.context import CliContext
from analyzer.errors import AnalyzerError

NAME = "sync"
HELP = "fetch the pinned upstreams into the cache, detached at their commits"
ORDER = 12
DESCRIPTION = (
    "Fetch each pinned upstream (all, or the NAMEs given) into the cache dir, detached at exactly the "
    "pinned commit. Only that commit is fetched when the server allows it; a second run with the commit "
    "present touches no network. A moved tag or a dirty cached work tree is refused."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME", help="upstreams to sync (default: every one in the lock)")


def check_source_names(ctx: CliContext) -> None:
    """A `--source` for an upstream the lock does not have is a typo, not a no-op."""
    known = {n.lower().replace("-", "_"): n for n in ctx.lock.repos}
    ctx.source_overrides()  # validates NAME=URL syntax
    for item in ctx.source_options:
        name = item.partition("=")[0]
        if name.lower().replace("-", "_") not in known:
            names = ", ".join(known.values())
            raise AnalyzerError(f"--source {item}: the lock has no upstream {name!r} (known: {names}); "
                                "use one of those names")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.api.sources import sync
    from analyzer.sources import git_progress

    pins = ctx.lock.select(args.names)
    check_source_names(ctx)
    session = ctx.session()
    results: list[dict[str, Any]] = []
    status = 0
    for pin in pins:
        try:
            with git_progress(ctx.err, pin.name, ctx.interactive) as sink:
                result = sync(session, pin.name, progress=sink)
        except AnalyzerError as exc:
            status = max(status, exc.exit_code)
            ctx.err.print(f"error: {exc}", markup=False)
            results.append({"name": pin.name, "commit": pin.commit, "error": str(exc)})
            continue
        for note in result.notes:
            ctx.err.print(f"note: {note}", markup=False)
        results.append(result.as_json())
        if not ctx.json:
            source = f" from {result.url}" if result.network else ""
            ctx.out.print(f"{pin.name}: {result.action} {pin.commit[:12]}{source} -> {result.path}", markup=False)
    if ctx.json:
        ctx.emit_json(results)
    return status
