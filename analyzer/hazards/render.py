"""Render a hazards result (see `analyzer.hazards.model`) as text, in the style of `trace`."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape


def _where(p: dict[str, Any]) -> str:
    return f"{p['repo']}:{p['path']}:{p['line']}"


def render_text(result: dict[str, Any], console: Console, *, verbose: int = 0) -> None:
    pins = ", ".join(f"{r} {p['commit'][:10]}" + (f" ({p['ref']})" if p.get("ref") else "")
                     for r, p in result["pins"].items())
    findings = result["findings"]
    values = [f for f in findings if f["category"] == "value"]
    structural = [f for f in findings if f["category"] == "structural"]
    console.print(f"[bold]hazards[/]   [dim]pins: {escape(pins)}[/]")
    st = result["stats"]
    console.print(f"{len(values)} value hazard(s), {len(structural)} structural; {result['near_miss_count']} "
                  f"near-miss(es) dismissed{'' if result['near_misses'] else ' (--all lists them)'}   "
                  f"[dim]{st['roots']} source functions, {st['functions']} functions read, "
                  f"{st['files_parsed']} files parsed[/]")
    for i, f in enumerate(values, 1):
        _value(console, i, f, verbose)
    for i, f in enumerate(structural, len(values) + 1):
        console.print(f"\n[bold]{i}. [red]structural[/] {escape(f['rule'])}[/] → {escape(f['sink']['part'])}  "
                      f"[dim]{escape(_where(f['sink']))} {escape(f['sink']['function'].split(':', 2)[-1])}[/]")
        console.print(f"   {escape(f['description'])}")
        for ev in f["evidence"][: None if verbose else 3]:
            console.print(f"   [dim]because {escape(ev)}[/]")
    if result["near_misses"]:
        console.print("\n[bold]near-misses[/] (a volatile value that does not reach a request part)")
        for m in result["near_misses"]:
            console.print(f"  - {escape(m['kind'])} {escape(_where(m['source']))} [dim]{escape(m['source']['text'])}[/]"
                          f" — {escape(m['reason'])} [dim]({escape(m['dismissed_by'])}, "
                          f"{escape(_where(m['sink']))})[/]")
    if verbose:
        console.print("\n[bold]what this analysis cannot see[/]")
        for lim in result["limits"]:
            console.print(f"  - {escape(lim)}")


def _value(console: Console, i: int, f: dict[str, Any], verbose: int) -> None:
    src, sink = f["source"], f["sink"]
    possible = " [yellow]possible[/]" if f["possible"] else ""
    console.print(f"\n[bold]{i}. {escape(f['kind'])}[/] → [bold]{escape(sink['part'])}[/]  "
                  f"[dim]({escape(f['granularity'])}; rule {escape(src['rule'])}; id {f['id']})[/]{possible}")
    console.print(f"   source {escape(_where(src))}  [bold]{escape(src['text'])}[/]  "
                  f"[dim]in {escape(src['function'].split(':', 2)[-1])}[/]")
    steps = f["steps"]
    shown = steps if verbose else _compact(steps)
    for s in shown:
        if s is None:
            console.print("     [dim]…[/]")
            continue
        console.print(f"     ↳ {escape(s['repo'])}:{escape(s['path'])}:{s['line']}  {escape(s['why'])}")
    console.print(f"   sink   {escape(_where(sink))}  [dim]{escape(sink['text'])}[/]  "
                  f"[dim]in {escape(sink['function'].split(':', 2)[-1])} ({escape(sink['rule'])})[/]")
    console.print(f"   [green]neutralise:[/] {escape(f['neutralised_by'])}")


def _compact(steps: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """Without -v: every step that crosses a function or file, plus the first and last."""
    out: list[dict[str, Any] | None] = []
    for i, s in enumerate(steps):
        if i == 0:
            continue  # the source line, printed above
        keep = i == len(steps) - 1 or "→" in s["why"] or "returned by" in s["why"] or "read from" in s["why"]
        if keep:
            out.append(s)
        elif out and out[-1] is not None:
            out.append(None)
    return out
