"""`analyze trace [FROM TO]`: the request path between two symbols (defaults: repos.lock [trace])."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_at_option, add_path_arguments, session_for
from analyzer.errors import EXIT_USAGE, AnalyzerError

if TYPE_CHECKING:
    from analyzer.api import TraceOptions

NAME = "trace"
HELP = "print the request path from FROM to TO (lowest common caller when neither calls the other)"
ORDER = 25
DESCRIPTION = (HELP + ". Symbols: a function, Class.method, a class (any of its methods) or repo:path:Name. "
               "Exit 0 when a path is found, 1 when none is.")


def add_arguments(parser: Any) -> None:
    add_path_arguments(parser)
    parser.add_argument("--all", nargs="?", type=int, const=5, default=1, metavar="K",
                        help="also list the K best alternatives (K is 5 when --all has no number; "
                             "default: only the best path)")
    parser.add_argument("--mermaid", action="store_true", help="print a Mermaid flowchart instead of text")
    add_at_option(parser)


def trace_options(args: Any) -> TraceOptions:
    """The path options as parsed (shared with `report`)."""
    from analyzer.api import TraceOptions

    return TraceOptions(args.from_symbol, args.to_symbol, max_depth=args.max_depth, allow_guesses=args.allow_guesses,
                        include_tests=getattr(args, "include_tests", False),
                        alternatives=getattr(args, "all", 1) or 1)


def run(args: Any, ctx: CliContext) -> int:
    from analyzer.api import trace
    from analyzer.sources.refcheck import ref_mismatch
    from analyzer.trace.render import render_mermaid, render_text

    if ctx.json and args.mermaid:
        raise AnalyzerError("--json and --mermaid both choose the output; give one of them", exit_code=EXIT_USAGE)

    moved = {at.partition("=")[0] for at in args.at or []}  # --at pins a bare commit: no ref to disagree with
    for pin in ctx.lock.repos.values():
        said = ref_mismatch(pin, ctx.cache_dir) if pin.name not in moved else None
        if said:
            ctx.warn(said)
    with session_for(ctx) as session:
        result = trace(session, trace_options(args), at=args.at).document
    if ctx.json:
        ctx.emit_json(result)
    elif args.mermaid and not result["found"]:
        ctx.err.print(f"no request path from {result['from']} to {result['to']}, so no flowchart to draw (try "
                      "--allow-guesses or a larger --max-depth; plain 'analyze trace' says more)", markup=False)
    elif args.mermaid:
        ctx.out.print(render_mermaid(result), markup=False, end="")
    else:
        render_text(result, ctx.out, verbose=ctx.verbose)
    return 0 if result["found"] else 1
