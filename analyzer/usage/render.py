"""The ledger as text: per route and hop, each number, what it is, and the upstream line that produced it;
then the numbers on which the routes disagree and why, and any layer that could not be replayed."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from analyzer.records import sentences
from analyzer.usage.routes import ROUTE_OUTPUT_RECORD, load_routes
from analyzer.usage.wording import FEATURE, comparison_lines, comparison_summary, missing_line, value_text

MARK = {True: "[green]✓[/green]", False: "[red]✗[/red]", None: "[dim]–[/dim]"}
_value = value_text


def render_document(doc: dict[str, Any], out: Console) -> None:
    """Every route's ledger, the comparison (two routes) and the missing layers."""
    sc = doc["scenario"]
    out.print(f"[bold]Usage reconciliation[/bold] — {escape(sc['name'])}: {escape(sc['title'])}")
    ups = ", ".join(f"{name}@{u['commit'][:10]}" for name, u in doc["upstreams"].items())
    out.print(f"replayed by executing the pinned upstream functions ({ups}) in analyzer's TypeScript evaluator")
    for name, ledger in doc["routes"].items():
        out.print()
        out.print(f"[bold]route {escape(name)}[/bold]: {escape(ledger['title'])}")
        render_ledger(ledger, out, header=False)
    s = sentences(FEATURE, "en")
    if doc.get("comparison"):
        cmp = doc["comparison"]
        out.print()
        out.print(f"[bold]{escape(s.format('compare.title', a=cmp['routes'][0], b=cmp['routes'][1]))}[/bold]")
        for agree, line in comparison_lines(cmp):
            mark = "=" if agree else ("?" if agree is None else "[yellow]≠[/yellow]")
            out.print(f"  {mark} {escape(line)}")
        out.print("  " + comparison_summary(cmp))
    if doc.get("missing"):
        out.print()
        out.print(f"[bold red]{escape(s['missing.title'])}[/bold red]")
        for m in doc["missing"]:
            out.print(f"  ✗ {escape(missing_line(m))}")
    out.print()
    if doc["missing"]:
        out.print("[red]some layers could not be replayed (above); the numbers shown are the ones that could[/red]")
    elif doc["ok"]:
        out.print("all invariants hold")
    else:
        out.print("[red]some invariants fail (✗ above)[/red]")


def render_ledger(ledger: dict[str, Any], out: Console, header: bool = True) -> None:
    sc = ledger["scenario"]
    book = load_routes()
    route = book.routes.get(ledger.get("route", book.recheck_route))
    layers = route.layers() if route is not None else [("dsh TokenUsage", ROUTE_OUTPUT_RECORD)]
    if header:
        out.print(f"[bold]Usage reconciliation[/bold] — {escape(sc['name'])}: {escape(sc['title'])}")
        ups = ", ".join(f"{name}@{u['commit'][:10]}" for name, u in ledger["upstreams"].items())
        out.print(f"replayed by executing the pinned upstream functions ({ups}) in analyzer's TypeScript evaluator")
    for f in ledger["functions"].values():
        out.print(f"  {escape(f['name'])} — {escape(f['role'])} — {escape(f['site'])}")
    for m in ledger.get("missing", []):
        out.print(f"  [red]✗[/red] {escape(missing_line(m))}")
    p = ledger.get("prices")
    if p:
        out.print(f"prices (USD per 1M tokens) from the {p['source']}: cache hit {p['cache_hit']}, cache miss "
                  f"{p['cache_miss']}, output {p['output']}, cache write {p['cache_write']} — "
                  f"{escape(str(p['as_of']))} ({escape(p['site'])})")
        if p.get("reference"):
            out.print(f"  source: {escape(p['reference'])}")
        if p.get("note"):
            out.print(f"  {escape(p['note'])}")
    else:
        out.print("no cost: this route's adapter computes none")
    n = 0
    for req in ledger["requests"]:
        out.print()
        out.print(f"[bold]request turn {req['turn']} step {req['step']}[/bold]")
        out.print(f"  1. provider raw usage ({escape(sc['path'])})")
        for f in req["provider"]:
            read = "" if f["read"] else f"   [yellow]not read by {f['reader']}[/yellow]"
            out.print(f"       {f['name']:<44} {_value(f['value']):>12}{read}")
        n = 1
        for title, record in layers:
            n += 1
            out.print(f"  {n}. {escape(title)}")
            _fields(out, req.get(record))
        for layer, fields in req["dropped"].items():
            if fields:
                out.print(f"     dropped {escape(layer)}: {escape(', '.join(fields))}")
        for c in req["checks"]:
            out.print(f"     {MARK[c['holds']]} {escape(c['name'])}: {escape(c['detail'])}")
    out.print()
    out.print(f"[bold]{n + 1}. dsh token-meter buckets[/bold] (tokenUsage projection after all requests; "
              f"{escape(ledger['meter_input'])})")
    _fields(out, ledger["meter"])
    hit = ledger["cache_hit_percent"]
    if hit is None:
        out.print(f"[bold]{n + 2}. dsh cache-hit %[/bold] (cacheHitPercent): [red]not replayed[/red]")
    else:
        out.print(f"[bold]{n + 2}. dsh cache-hit %[/bold] (cacheHitPercent): {_value(hit['value'])}   "
                  f"← {escape(hit['site'])}")
    for c in ledger["checks"]:
        out.print(f"     {MARK[c['holds']]} {escape(c['name'])}: {escape(c['detail'])}")
    if header:
        out.print()
        out.print("all invariants hold" if ledger["ok"] else "[red]some invariants fail (✗ above)[/red]")


def _fields(out: Console, fields: list[dict[str, Any]] | None) -> None:
    if fields is None:
        out.print("       [red]not replayed[/red] (a function this layer needs could not be located)")
        return
    for f in fields:
        site = f"   ← {escape(f['site'])}" if f["site"] else ""
        out.print(f"       {f['name']:<44} {_value(f['value']):>12}{site}")
