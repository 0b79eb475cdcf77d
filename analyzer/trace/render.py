"""Render a trace result (see `analyzer.trace.result`) as text or as a Mermaid flowchart."""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.markup import escape

from analyzer.trace.search import ambiguity_notes

KIND_STYLE = {"direct": "green", "method": "green", "interface": "yellow", "dispatch": "magenta", "name": "red"}


def render_text(result: dict[str, Any], console: Console, *, verbose: int = 0) -> None:
    pins = ", ".join(f"{r} {p['commit'][:10]}" + (f" ({p['ref']})" if p.get("ref") else "")
                     for r, p in result["pins"].items())
    console.print(f"[bold]trace[/] {escape(result['from'])} → {escape(result['to'])}   [dim]pins: {escape(pins)}[/]")
    if not result["found"]:
        console.print("no request path found (try --allow-guesses, a larger --max-depth, or check the symbols "
                      "with 'analyze callers'/'analyze callees')")
        return
    for note in ambiguity_notes(result):  # the same note recheck and the library give
        console.print(f"[yellow]note:[/] {escape(note)}")
    mode = result["mode"]
    if mode == "common-caller":
        console.print(f"neither calls the other; anchored at the lowest common caller "
                      f"(confidence {result['confidence']:.2f})")
    else:
        console.print(f"{escape(result['from'])} reaches {escape(result['to'])} through calls "
                      f"(confidence {result['confidence']:.2f})")
    edges = result["edges"]
    branch_title = {"from": "branch to FROM", "to": "branch to TO (a later call site in the anchor)"}
    current = None
    for hop in result["hops"]:
        if hop["branch"] in branch_title and hop["branch"] != current:
            current = hop["branch"]
            console.print(f"  [bold]{branch_title[current]}[/]")
        where = f"{hop['repo']}:{hop['path']}:{hop['line']}"
        if hop["via"] is None:
            label = "anchor" if hop["branch"] == "anchor" else "start"
            console.print(f"  [bold]{escape(hop['symbol'])}[/] [dim]{escape(where)}[/] ({label})")
            continue
        e = edges[hop["via"]]
        style = KIND_STYLE.get(e["kind"], "white")
        tag = e["kind"] + (f":{e['rule']}" if e.get("rule") else "") + (" possible" if e.get("possible") else "")
        nested = f" nested {e['nested']}" if e.get("nested") else ""
        console.print(f"    ↳ line {e['call_line']}{nested} [{style}]{escape(tag)}[/] → "
                      f"[bold]{escape(hop['symbol'])}[/] [dim]{escape(where)}[/]")
        shown = e["evidence"][1:] if verbose == 0 else e["evidence"]
        if e["kind"] in ("dispatch", "interface", "name") or verbose:
            for ev in shown[: (None if verbose else 2)]:
                console.print(f"        [dim]because {escape(ev)}[/]")
        if e.get("test_alternatives"):
            shown_tests = len(e["test_alternatives"])
        else:
            shown_tests = 0
        if e["alternatives"] or shown_tests:
            alts = ", ".join(a.split(":", 2)[2] + " (" + a.split(":", 2)[1] + ")" for a in e["alternatives"][:6])
            more = f" +{len(e['alternatives']) - 6} more" if len(e["alternatives"]) > 6 else ""
            tests = f" (+{shown_tests} in test code)" if shown_tests else ""
            alts = alts or "none in product code"
            console.print(f"        [yellow]other live targets at this seam:[/] {escape(alts)}{more}{tests}")
    for i, alt in enumerate(result["alternatives"], 1):
        render_alternative(console, i, alt)


def _short(node: str) -> str:
    return node.split(":", 2)[2]


def render_alternative(console: Console, i: int, alt: dict[str, Any]) -> None:
    """One alternative as its own branch: the anchor, then the FROM side and the TO side from it."""
    console.print(f"  [bold]alternative {i}[/] ({alt['mode']}, confidence {alt['confidence']:.2f})")
    if alt["mode"] != "common-caller" or not alt.get("anchor"):
        console.print("    path    " + escape(" → ".join(_short(n) for n in alt["hops"])))
        return
    anchor = alt["anchor"]
    console.print(f"    anchor  [bold]{escape(_short(anchor))}[/] [dim]{escape(anchor.rsplit(':', 1)[0])}[/]")
    for label, key in (("FROM", "from_branch"), ("TO", "to_branch")):
        console.print(f"    {label:<7} " + escape(" → ".join(_short(n) for n in [anchor, *alt.get(key, [])])))


def _mermaid_id(node: str, ids: dict[str, str]) -> str:
    if node not in ids:
        ids[node] = f"n{len(ids)}"
    return ids[node]


def _mermaid_label(text: str) -> str:
    return re.sub(r'["<>{}\[\]|]', "", text).replace("`", "'")


def render_mermaid(result: dict[str, Any]) -> str:
    """A `flowchart TD` that GitHub renders; edge labels carry the call line and edge kind."""
    lines = ["flowchart TD"]
    ids: dict[str, str] = {}
    for hop in result["hops"]:
        nid = _mermaid_id(hop["node"], ids)
        label = _mermaid_label(f"{hop['symbol']}<br/>{hop['repo']}:{hop['path']}:{hop['line']}".replace(
            "<br/>", "\n")).replace("\n", "<br/>")
        shape = f'{nid}(["{label}"])' if hop["branch"] == "anchor" else f'{nid}["{label}"]'
        lines.append(f"  {shape}")
    for e in result["edges"]:
        label = _mermaid_label(f"L{e['call_line']} {e['kind']}" + (f" {e['rule']}" if e.get("rule") else ""))
        arrow = "-.->" if e["kind"] in ("interface", "dispatch", "name") else "-->"
        lines.append(f"  {_mermaid_id(e['source'], ids)} {arrow}|{label}| {_mermaid_id(e['target'], ids)}")
    return "\n".join(lines) + "\n"


MERMAID_NODE_RE = re.compile(r'^  (n\d+)(\(\["[^"]*"\]\)|\["[^"]*"\])$')
MERMAID_EDGE_RE = re.compile(r"^  (n\d+) (-->|-\.->)\|[^|]*\| (n\d+)$")


def validate_mermaid(text: str) -> list[str]:
    """Check the structure we emit: header, node declarations before use, well-formed edges."""
    lines = text.rstrip("\n").split("\n")
    problems = [] if lines and lines[0] == "flowchart TD" else ["first line must be 'flowchart TD'"]
    declared: set[str] = set()
    for i, line in enumerate(lines[1:], 2):
        if m := MERMAID_NODE_RE.match(line):
            declared.add(m.group(1))
        elif m := MERMAID_EDGE_RE.match(line):
            for nid in (m.group(1), m.group(3)):
                if nid not in declared:
                    problems.append(f"line {i}: {nid} used before it is declared")
        else:
            problems.append(f"line {i}: not a node or edge: {line!r}")
    return problems
