"""The ledger as text: per hop, each number, what it is, and the upstream line that produced it."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from analyzer.usage.values import number_to_string

MARK = {True: "[green]✓[/green]", False: "[red]✗[/red]", None: "[dim]–[/dim]"}


def _value(v: Any) -> str:
    """Numbers as JavaScript prints them (ints stay ints, 1e-05 is 0.00001)."""
    if isinstance(v, float):
        return number_to_string(v)
    return "null" if v is None else (f"{v!r}" if isinstance(v, str) else str(v))


def render_ledger(ledger: dict[str, Any], out: Console) -> None:
    sc = ledger["scenario"]
    out.print(f"[bold]Usage reconciliation[/bold] — {escape(sc['name'])}: {escape(sc['title'])}")
    ups = ", ".join(f"{name}@{u['commit'][:10]}" for name, u in ledger["upstreams"].items())
    out.print(f"replayed by executing the pinned upstream functions ({ups}) in analyzer's TypeScript evaluator")
    for f in ledger["functions"].values():
        out.print(f"  {escape(f['name'])} — {escape(f['role'])} — {escape(f['site'])}")
    p = ledger["prices"]
    out.print(f"prices (USD per 1M tokens) from the {p['source']}: cache hit {p['cache_hit']}, cache miss "
              f"{p['cache_miss']}, output {p['output']}, cache write {p['cache_write']} — {escape(str(p['as_of']))} "
              f"({escape(p['site'])})")
    if p.get("reference"):
        out.print(f"  source: {escape(p['reference'])}")
    if p.get("note"):
        out.print(f"  {escape(p['note'])}")
    for req in ledger["requests"]:
        out.print()
        out.print(f"[bold]request turn {req['turn']} step {req['step']}[/bold]")
        out.print(f"  1. provider raw usage ({escape(sc['path'])})")
        for f in req["provider"]:
            read = "" if f["read_by_pi"] else "   [yellow]not read by Pi[/yellow]"
            out.print(f"       {f['name']:<44} {_value(f['value']):>12}{read}")
        out.print("  2. Pi Usage (parseChunkUsage, cost by calculateCost)")
        _fields(out, req["pi_usage"])
        out.print("  3. dsh TokenUsage (llm-pi-ai mapUsage)")
        _fields(out, req["dsh_usage"])
        for layer, fields in req["dropped"].items():
            if fields:
                out.print(f"     dropped {escape(layer)}: {escape(', '.join(fields))}")
        for c in req["checks"]:
            out.print(f"     {MARK[c['holds']]} {escape(c['name'])}: {escape(c['detail'])}")
    out.print()
    out.print("[bold]4. dsh token-meter buckets[/bold] (tokenUsage projection after all requests; "
              f"{escape(ledger['meter_input'])})")
    _fields(out, ledger["meter"])
    hit = ledger["cache_hit_percent"]
    out.print(f"[bold]5. dsh cache-hit %[/bold] (cacheHitPercent): {_value(hit['value'])}   ← {escape(hit['site'])}")
    for c in ledger["checks"]:
        out.print(f"     {MARK[c['holds']]} {escape(c['name'])}: {escape(c['detail'])}")
    out.print()
    out.print("all invariants hold" if ledger["ok"] else "[red]some invariants fail (✗ above)[/red]")


def _fields(out: Console, fields: list[dict[str, Any]]) -> None:
    for f in fields:
        site = f"   ← {escape(f['site'])}" if f["site"] else ""
        out.print(f"       {f['name']:<44} {_value(f['value']):>12}{site}")
