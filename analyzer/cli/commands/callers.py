"""`analyze callers SYMBOL...` / `analyze callees SYMBOL...`: one step of the graph, with edge kinds and evidence.

Several symbols in one call share one graph load (`analyze callees A B C --json`). A symbol that names
several definitions is reported as ambiguous, each definition with its own edges, never merged.
"""

from __future__ import annotations

from typing import Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_at_option, session_for

NAME = "callers"
HELP = "who calls SYMBOL (edge kind, call site, evidence); several symbols share one graph load"
ORDER = 22
DIRECTION = "in"


def add_arguments(parser: Any) -> None:
    parser.add_argument("symbol", nargs="+", help="name, Class.method, Class, or repo:path:Qualified.name")
    parser.add_argument("--allow-guesses", action="store_true", help="include `name` (guessed) edges")
    parser.add_argument("--include-tests", action="store_true",
                        help="include definitions, callers and callees in test code")
    add_at_option(parser)


def run(args: Any, ctx: CliContext, direction: str = DIRECTION) -> int:
    from analyzer.api.neighbours import NeighbourOptions, callees, callers

    step = callers if direction == "in" else callees
    with session_for(ctx) as session:
        done = step(session, args.symbol, NeighbourOptions(args.allow_guesses, args.include_tests), at=args.at)
    results = done.results
    if ctx.json:
        payload: dict[str, Any] = {"direction": done.direction}
        if len(results) == 1:
            payload.update(results[0])
        else:
            payload["results"] = results
        ctx.emit_json(payload)
    else:
        for i, r in enumerate(results):
            if i:
                ctx.out.print()
            _print_text(ctx, r, direction)
    return 3 if done.failed else 0


def _print_text(ctx: CliContext, r: dict[str, Any], direction: str) -> None:
    from rich.markup import escape

    from analyzer.trace.render import KIND_STYLE

    what = "callers" if direction == "in" else "callees"
    if "error" in r:
        ctx.err.print(f"error: {r['error']}", markup=False)
        return
    defs = r["definitions"]
    if r["ambiguous"]:
        places = ", ".join(f"{d['repo']}:{d['path']}:{d['line']}" for d in defs)
        ctx.out.print(f"[yellow]note:[/] {escape(r['symbol'])} is ambiguous ({len(defs)} definitions: "
                      f"{escape(places)}); each is listed separately (pass repo:path:Name for one)")
    for dfn in defs:
        header = f"{what} of {dfn['symbol']} ({dfn['kind']}{'' if dfn['has_body'] else ', no body'}) " \
                 f"{dfn['repo']}:{dfn['path']}:{dfn['line']}" + (" [test]" if dfn["test"] else "")
        ctx.out.print(f"[bold]{escape(header)}[/]")
        if not dfn["edges"]:
            ctx.out.print(f"  no {what} in the graph")
        for e in dfn["edges"]:
            other = e["caller"] if direction == "in" else e["callee"]
            style = KIND_STYLE.get(e["kind"], "white")
            tag = e["kind"] + (f":{e['rule']}" if e["rule"] else "") + (" possible" if e["possible"] else "")
            test = " [test]" if e["test"] else ""
            ctx.out.print(f"  [{style}]{escape(tag)}[/] {escape(other)}{escape(test)}  "
                          f"[dim]call at {escape(e['call_path'])}:{e['call_line']}[/]")
            if ctx.verbose:
                for ev in e["evidence"]:
                    ctx.out.print(f"      [dim]{escape(ev)}[/]")
    hidden = r["hidden"]
    notes = []
    if hidden["guesses"]:
        notes.append(f"{hidden['guesses']} guessed (`name`) edge(s) hidden; --allow-guesses shows them")
    if hidden.get("test_definitions"):
        notes.append(f"{hidden['test_definitions']} definition(s) in test code hidden; --include-tests shows them")
    if hidden["tests"]:
        notes.append(f"{hidden['tests']} edge(s) with test code hidden; --include-tests shows them")
    for note in notes:
        ctx.out.print(f"[dim]{escape(note)}[/]")
