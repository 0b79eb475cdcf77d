"""`analyze index`: build (or load) the cross-repo call graph and report what it contains."""

from __future__ import annotations

from typing import Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_at_option, load_analysis
from analyzer.numbers import count, seconds, value

NAME = "index"
HELP = "index the pinned repos and build the call graph (--stats for figures)"
ORDER = 20


def add_arguments(parser: Any) -> None:
    parser.add_argument("--stats", action="store_true", help="print files, parse errors, nodes, edges by kind…")
    parser.add_argument("--rebuild", action="store_true", help="ignore the stored graph (per-file cache still used)")
    add_at_option(parser)


def run(args: Any, ctx: CliContext) -> int:
    analysis = load_analysis(ctx, args, rebuild=args.rebuild)
    g = analysis.view  # graph attributes only: the full graph is not needed
    stats = dict(g.graph.get("stats", {}))
    payload = {"pins": analysis.pins_json(), "from_cache": analysis.from_cache,
               "seconds": {k: round(v, 3) for k, v in analysis.seconds.items()}, "stats": stats,
               "index": g.graph.get("index_stats", {})}
    if ctx.json:
        ctx.emit_json(payload)
        return 0
    pins = ", ".join(f"{p.name} {p.commit[:10]}" for p in analysis.pins)
    source = "loaded from cache" if analysis.from_cache else "built"
    ctx.out.print(f"graph {source}: {count(stats.get('nodes', 0))} nodes, {count(stats.get('edges', 0))} edges "
                  f"({pins})")
    if args.stats:
        from rich.table import Table

        table = Table(show_header=False, box=None)
        for key in ("files", "files_with_parse_errors", "nodes", "edges", "unresolved_calls", "external_calls",
                    "unresolved_imports", "external_imports", "external_packages"):
            table.add_row(key.replace("_", " "), value(stats.get(key)))
        for kind, n in sorted(stats.get("edges_by_kind", {}).items()):
            table.add_row(f"edges: {kind}", count(n))
        for rule, n in sorted(stats.get("rule_matches", {}).items()):
            table.add_row(f"rule {rule}", f"{count(n)} matches")
        for name, st in payload["index"].items():
            for k, v in st.items():
                table.add_row(f"{name}: {k}", seconds(v) if k.endswith("seconds") else value(v, digits=1))
        for k, v in payload["seconds"].items():
            table.add_row(f"time {k}", seconds(v))
        if not analysis.from_cache:  # what this build ran on (`analyze native build` compiles it)
            from analyzer.native.loader import native_state

            native = native_state()
            table.add_row("compiled indexer", "yes (mypyc)" if native.loaded else f"no: {native.reason}")
        ctx.out.print(table)
    return 0
