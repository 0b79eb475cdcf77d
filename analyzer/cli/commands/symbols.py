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

    from analyzer.api.symbols import symbols
    from analyzer.cli.graphload import session_for

    with session_for(ctx) as session:
        found = symbols(session, args.pattern, kinds=args.kind, limit=args.limit, at=args.at)
    rows, count = found.rows, found.count  # has_body: False for signatures
    if ctx.json:
        ctx.emit_json({"pattern": args.pattern, "count": count, "symbols": rows})
        return 0
    for r in rows:
        where = escape(f"{r['repo']}:{r['path']}:{r['line']}")
        kind = r["kind"] + ("" if r["has_body"] else ", no body") + (", test" if r["test"] else "")
        ctx.out.print(f"{escape(r['symbol'])}  [dim]{escape(kind)}  {where}[/]")
    if count > args.limit:
        ctx.out.print(f"… {count - args.limit} more (use --limit)")
    if not count:
        ctx.err.print(f"no symbol matches {args.pattern!r}")
        return 1
    return 0
