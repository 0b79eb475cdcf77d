"""Render a hazards result (see `analyzer.hazards.model`) as text, in the style of `trace`."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

WRITERS_SHOWN = 8  # writers of a stored record field printed without -v


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
    console.print(f"{len(values)} value finding(s), {len(structural)} structural; {result['near_miss_count']} "
                  f"near-miss(es) dismissed{'' if result['near_misses'] else ' (--all lists them)'}   "
                  f"[dim]{st['roots']} source functions, {st['functions']} functions read, "
                  f"{st['files_parsed']} files parsed[/]")
    by_effect: dict[str, int] = {}
    for h in result.get("hazards", []):
        by_effect[h["effect"] or "unknown"] = by_effect.get(h["effect"] or "unknown", 0) + 1
    if by_effect:
        console.print(f"{len(result['hazards'])} hazard(s) by effect: "
                      + ", ".join(f"{k} {v}" for k, v in by_effect.items()))
    by_id = {f["id"]: f for f in findings}
    for i, h in enumerate(result.get("hazards", []), 1):
        branches = [by_id[b] for b in h["branches"] if b in by_id]
        if h["category"] == "structural":
            _structural(console, i, branches[0], verbose)
            continue
        _hazard(console, i, h, branches, verbose)
    if result["near_misses"]:
        console.print("\n[bold]near-misses[/] (a volatile value that does not reach a request part)")
        for m in result["near_misses"]:
            effect = f" [{escape(m['effect'])}]" if m.get("effect") else ""
            console.print(f"  - {escape(m['kind'])}{effect} {escape(_where(m['source']))} "
                          f"[dim]{escape(m['source']['text'])}[/]"
                          f" — {escape(m['reason'])} [dim]({escape(m['dismissed_by'])}, "
                          f"{escape(_where(m['sink']))})[/]")
    cut = result.get("cut_flows")
    if cut and (result["near_misses"] or verbose):
        reasons = ", ".join(f"{n} at {cut['reasons'][r]} ({r})" for r, n in cut["by_reason"].items() if n)
        console.print(f"\n[bold]cut flows[/]: {cut['total']} volatile flow(s) stopped where the analysis "
                      f"could not follow them{': ' + escape(reasons) if reasons else ''}")
        for p in cut["places"][: None if verbose else 5]:
            console.print(f"  - {p['flows']} at {escape(_where(p))} "
                          f"[dim]{escape(p['text'])} ({escape(p['reason'])})[/]")
    if verbose:
        console.print("\n[bold]what this analysis cannot see[/]")
        for lim in result["limits"]:
            console.print(f"  - {escape(lim)}")


def _structural(console: Console, i: int, f: dict[str, Any], verbose: int) -> None:
    console.print(f"\n[bold]{i}. {escape(f['effect'])} · [red]structural[/] {escape(f['rule'])}[/] → "
                  f"{escape(f['sink']['part'])}  [dim]{escape(_where(f['sink']))} "
                  f"{escape(f['sink']['function'].split(':', 2)[-1])}[/]")
    console.print(f"   {escape(f['description'])}")
    for ev in f["evidence"][: None if verbose else 3]:
        console.print(f"   [dim]because {escape(ev)}[/]")


def _hazard(console: Console, i: int, h: dict[str, Any], branches: list[dict[str, Any]], verbose: int) -> None:
    """One hazard: its effect and where it lands, the first branch's chain, the other branches' sources."""
    tpl = f" via template {escape(_where(h['template']))}" if h.get("template") else ""
    more = f"; {len(branches)} branches" if len(branches) > 1 else ""
    console.print(f"\n[bold]{i}. {escape(h['effect'] or '?')}[/] · {escape(', '.join(h['kinds']))} → "
                  f"[bold]{escape(h['part'] or '')}[/]  [dim](granularity {escape(h['granularity'] or '?')}; "
                  f"effect rule {escape(h['effect_rule'] or '-')}{more}; hazard {h['id']})[/]{tpl}")
    first = branches[0]
    if first.get("effect_reason"):
        console.print(f"   [dim]{escape(first['effect_reason'])}[/]")
    for j, f in enumerate(branches):
        if j == 0 or verbose:
            _value(console, f, verbose)
        else:
            src = f["source"]
            console.print(f"   also   {escape(_where(src))}  [bold]{escape(src['text'])}[/]  "
                          f"[dim]({escape(f['kind'])}, "
                          f"{escape(f['granularity'])} by {escape(f['granularity_rule'])}; id {f['id']})[/]")


def _value(console: Console, f: dict[str, Any], verbose: int) -> None:
    src, sink = f["source"], f["sink"]
    possible = " [yellow]possible[/]" if f["possible"] else ""
    if f.get("condition"):
        possible += f" [yellow]({escape(f['condition'])})[/]"
    console.print(f"   source {escape(_where(src))}  [bold]{escape(src['text'])}[/]  "
                  f"[dim]in {escape(src['function'].split(':', 2)[-1])} ({escape(f['kind'])}; "
                  f"{escape(f['granularity'])} "
                  f"by rule {escape(f['granularity_rule'])}; id {f['id']})[/]{possible}")
    for b in (f.get("control") or {}).get("branches", []):
        console.print(f"   branch {escape(_where(b))}  [dim]{escape(b['text'])}[/]")
    writers = f.get("writers", [])  # who writes the stored record field the source reads
    for w in writers if verbose else writers[:WRITERS_SHOWN]:
        via = f"  [dim]via {escape(' → '.join(w['via']))}[/]" if w["via"] and verbose else ""
        console.print(f"   writer {escape(_where(w))}  [dim]{escape(w['text'])} → {escape(f['writers_of'])}[/]{via}")
    if len(writers) > WRITERS_SHOWN and not verbose:
        console.print(f"   [dim]… {len(writers) - WRITERS_SHOWN} more writer(s) (-v lists them with their calls)[/]")
    steps = f["steps"]
    shown = steps if verbose else _compact(steps)
    for s in shown:
        if s is None:
            console.print("     [dim]…[/]")
            continue
        rule = f"  [dim](rule {escape(s['rule'])})[/]" if s.get("rule") and verbose else ""
        console.print(f"     ↳ {escape(s['repo'])}:{escape(s['path'])}:{s['line']}  {escape(s['why'])}{rule}")
    seen = f.get("observed")
    if seen:
        what = (f"seen in {seen['differed']} of {seen['requests']} varied request(s), "
                f"{seen['cached_tokens_lost']:,} cached token(s) lost" if seen["observed"]
                else f"not seen in {seen['requests']} varied request(s)")
        console.print(f"   observed  varying {escape(str(seen['factor']))}: {what} ({escape(seen['record'])})")
    if sink.get("position"):
        where = ", ".join(f"{k} {v}" for k, v in sink["position"].items())
        console.print(f"   lands  {escape(sink['part'])} entry {escape(where)}")
    if sink.get("message"):
        said = {"new": "new in this request",
                "re-rendered": f"re-rendered by {(sink.get('replay') or {}).get('function', 'the replay')} at "
                               "every request"}.get(sink["message"], "replayed from the stored history")
        console.print(f"   message  {said}")
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
