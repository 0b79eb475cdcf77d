"""`analyze symbols PATTERN`: definitions whose qualified name matches, across both repos."""

from __future__ import annotations

from typing import Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_at_option

NAME = "symbols"
HELP = "list definitions matching a glob or substring (e.g. '*Usage*')"
ORDER = 21
DESCRIPTION = HELP + (". Exit 0 when something matches, 1 when nothing does (the pattern is said on stderr), "
                      "3 bad input.")


def add_arguments(parser: Any) -> None:
    parser.add_argument("pattern")
    parser.add_argument("--kind", action="append", help="only these kinds (function, method, class, …)")
    parser.add_argument("--limit", type=int, default=200, metavar="N", help="print at most N matches")
    add_at_option(parser)


def run(args: Any, ctx: CliContext) -> int:
    from rich.markup import escape

    from analyzer.cli.graphload import load_analysis
    from analyzer.graph.neighbours import definition_row
    from analyzer.graph.queries import find_symbols

    g = load_analysis(ctx, args).view
    nodes = find_symbols(g, args.pattern, args.kind)
    rows = [definition_row(g, n) for n in nodes[: args.limit]]  # has_body: False for signatures
    if ctx.json:
        ctx.emit_json({"pattern": args.pattern, "count": len(nodes), "symbols": rows})
        return 0
    for r in rows:
        where = escape(f"{r['repo']}:{r['path']}:{r['line']}")
        kind = r["kind"] + ("" if r["has_body"] else ", no body") + (", test" if r["test"] else "")
        ctx.out.print(f"{escape(r['symbol'])}  [dim]{escape(kind)}  {where}[/]")
    if len(nodes) > args.limit:
        ctx.out.print(f"… {len(nodes) - args.limit} more (use --limit)")
    if not nodes:
        ctx.err.print(f"no symbol matches {args.pattern!r}")
        return 1
    return 0
