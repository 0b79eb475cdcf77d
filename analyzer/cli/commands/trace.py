"""`analyze trace [FROM TO]`: the request path between two symbols (defaults: repos.lock [trace])."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_at_option, add_path_arguments, load_analysis
from analyzer.errors import EXIT_USAGE, AnalyzerError

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


def compute_trace(ctx: CliContext, args: Any, analysis: Any = None) -> dict[str, Any]:
    from analyzer.graph.queries import resolve_symbol
    from analyzer.trace.paths import anchor_level, find_paths, reaching_set
    from analyzer.trace.result import trace_result

    spec_from = args.from_symbol or ctx.lock.trace_from
    spec_to = args.to_symbol or ctx.lock.trace_to
    if not spec_from or not spec_to:
        raise AnalyzerError("trace needs FROM and TO (or a [trace] table with from/to in repos.lock)")
    analysis = analysis or load_analysis(ctx, args)
    g = analysis.view  # lazily loaded: a trace reads the adjacency of a few hundred nodes
    include_tests = getattr(args, "include_tests", False)

    def reaches(other: str, backwards: bool) -> Callable[[str], float | None]:
        """For suggestions: how near a candidate stands to a request path with the other endpoint — the
        number of caller levels (1–2) up to an anchor that calls it before calling towards the other end,
        or None. Cheap enough to ask of every name that shares a word with the unknown one."""
        try:
            others = [n for m in resolve_symbol(g, other) for n in m.endpoints]
        except AnalyzerError:
            return lambda _candidate: None
        if backwards:
            return lambda _candidate: None  # an unknown TO: rank by name only
        reach = reaching_set(g, others, include_tests=include_tests, max_depth=args.max_depth)
        children: dict[str, list[str]] = {}
        by_name: dict[str, list[str]] = {}
        for node, attrs in g.nodes(data=True):
            by_name.setdefault(attrs.get("qualname", ""), []).append(node)
            if attrs.get("parent"):
                children.setdefault(attrs["parent"], []).append(node)

        other_repos = {n.split(":", 1)[0] for n in others}

        def level(candidate: str) -> float | None:
            nodes = [n for q in by_name.get(candidate, []) for n in (q, *children.get(q, []))]
            near = anchor_level(g, nodes, reach, levels=2)
            if near is None:
                return 3.0 if any(n in reach for n in nodes) else None
            # a sibling step of the request, like the missing name; the start of a cross-repo request
            # usually lives on the application side, not in the repo of the other end
            return near if any(n.split(":", 1)[0] not in other_repos for n in nodes) else 2.5
        return level

    def lazily(other: str, backwards: bool) -> Callable[[str], float | None]:
        """`reaches`, prepared on the first question: only an unknown name (suggestions) asks it."""
        made: list[Callable[[str], float | None]] = []

        def ask(candidate: str) -> float | None:
            if not made:
                made.append(reaches(other, backwards))
            return made[0](candidate)
        return ask

    sources = resolve_symbol(g, spec_from, connected=lazily(spec_to, backwards=False))
    targets = resolve_symbol(g, spec_to, connected=lazily(spec_from, backwards=True))
    k = max(1, (args.all or 1) + (1 if args.all and args.all > 1 else 0))
    paths = find_paths(g, [n for m in sources for n in m.endpoints], [n for m in targets for n in m.endpoints],
                       allow_guesses=args.allow_guesses, max_depth=args.max_depth, k=k,
                       include_tests=include_tests)
    candidates = {"from": [m.node for m in sources], "to": [m.node for m in targets]}
    return trace_result(g, spec_from, spec_to, paths, analysis.pins_json(), candidates)


def run(args: Any, ctx: CliContext) -> int:
    from analyzer.trace.render import render_mermaid, render_text

    if ctx.json and args.mermaid:
        raise AnalyzerError("--json and --mermaid both choose the output; give one of them", exit_code=EXIT_USAGE)
    result = compute_trace(ctx, args)
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
