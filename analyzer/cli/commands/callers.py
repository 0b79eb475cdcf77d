"""`analyze callers SYMBOL` / `analyze callees SYMBOL`: one step of the graph, with edge kinds and evidence."""

from __future__ import annotations

from typing import Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_at_option, load_analysis

NAME = "callers"
HELP = "who calls SYMBOL (edge kind, call site, evidence)"
ORDER = 22
DIRECTION = "in"


def add_arguments(parser: Any) -> None:
    parser.add_argument("symbol", help="name, Class.method, Class, or repo:path:Qualified.name")
    parser.add_argument("--allow-guesses", action="store_true", help="include `name` (guessed) edges")
    add_at_option(parser)


def run(args: Any, ctx: CliContext, direction: str = DIRECTION) -> int:
    from rich.markup import escape

    from analyzer.graph.queries import edges_in, edges_out, resolve_symbol
    from analyzer.trace.render import KIND_STYLE

    g = load_analysis(ctx, args).view
    allow = None if args.allow_guesses else {"direct", "method", "interface", "dispatch"}
    out = []
    for match in resolve_symbol(g, args.symbol):
        for node in match.endpoints:
            pairs = edges_in(g, node, allow) if direction == "in" else edges_out(g, node, allow)
            for other, d in pairs:
                caller, callee = (other, node) if direction == "in" else (node, other)
                out.append({"caller": caller, "callee": callee, "kind": d["kind"], "rule": d.get("rule"),
                            "possible": d.get("possible", False), "call_path": d["path"], "call_line": d["line"],
                            "nested": d.get("nested", 0), "evidence": d.get("evidence", [])})
    if ctx.json:
        ctx.emit_json({"symbol": args.symbol, "direction": "callers" if direction == "in" else "callees",
                       "edges": out})
        return 0
    if not out:
        ctx.out.print(f"no {'callers' if direction == 'in' else 'callees'} of {args.symbol} in the graph")
    for e in out:
        other = e["caller"] if direction == "in" else e["callee"]
        style = KIND_STYLE.get(e["kind"], "white")
        tag = e["kind"] + (f":{e['rule']}" if e["rule"] else "") + (" possible" if e["possible"] else "")
        ctx.out.print(f"[{style}]{escape(tag)}[/] {escape(other)}  [dim]call at {escape(e['call_path'])}:"
                      f"{e['call_line']}[/]")
        if ctx.verbose:
            for ev in e["evidence"]:
                ctx.out.print(f"    [dim]{escape(ev)}[/]")
    return 0
