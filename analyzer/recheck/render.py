"""The re-check as Markdown (`reports/recheck_<old>_<new>.md`) and as a short console summary."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from analyzer.numbers import count, value
from analyzer.recheck.verdict import counts as verdict_counts

VERDICT_MEANING = {
    "unchanged": "the same hops in the same order, no body changed",
    "changed bodies": "the same hops, some bodies changed",
    "rerouted": "a path still exists, through other hops",
    "broken": "no path at the new pins",
}


def verdict_line(r: dict[str, Any]) -> str:
    """`rerouted — exit 1: a path still exists, through other hops`."""
    meaning = VERDICT_MEANING[r["path_change"]]
    if r["path_change"] == "rerouted" and not r["old_path"]["found"]:
        meaning = "a path exists at the new pins, and there was none at the old pins"
    elif r["path_change"] == "broken" and not r["old_path"]["found"]:
        meaning = "no path at either pin set"
    return f"{r['path_change']} — exit {r['exit_code']}: {meaning}"


def side_by_side_md(r: dict[str, Any]) -> list[str]:
    """Old and new hops in two columns; the rows where they differ are marked, the seam is said first."""
    sbs = r.get("side_by_side")
    if not sbs:
        return []
    out = ["## Old and new path side by side", ""]
    seam = sbs["seam"]
    if seam:
        parts = f"after {seam['parts_after']}" if seam["parts_after"] else "from the first hop"
        rejoin = f" and rejoin at {seam['rejoins_at']}" if seam["rejoins_at"] else " and do not rejoin"
        out += [f"The paths part {parts}{rejoin}.", ""]
    out += ["| | old path | new path |", "| --- | --- | --- |"]
    for row in sbs["rows"]:
        cells = [f"{h['repo']}:`{h['symbol']}` `{h['path']}:{h['line']}`" if h else "—"
                 for h in (row["old"], row["new"])]
        out.append(f"| {'' if row['same'] else '≠'} | {cells[0]} | {cells[1]} |")
    return out + [""]


def _pins_md(side: dict[str, Any]) -> list[str]:
    return [f"- {name}: `{p['commit']}`" + (f" ({p['ref']})" if p.get("ref") else "") for name, p in
            side["pins"].items()]


def _loc(x: dict[str, Any] | None) -> str:
    return "—" if x is None else f"`{x['path']}:{x['line']}`"


def render_recheck_markdown(r: dict[str, Any]) -> str:
    out = [f"# Re-check `{r['from']}` → `{r['to']}`", "",
           f"**Verdict: {verdict_line(r)}.**", "",
           f"Old pins ({r['old']['origin']}):", *_pins_md(r["old"]), "",
           f"New pins ({r['new']['origin']}):", *_pins_md(r["new"]), ""]
    if r["broken"]["at_new"]:
        out += [f"**Where the path broke:** {r['broken']['where']}", ""]
    if r.get("cause"):
        out += [f"**First cause:** {r['cause']['text']}", ""]
        if r["cause"].get("aliases_fix") and r["cause"].get("pins", "new") == "new":
            title = "Fix in the lock:" if r["cause"].get("fix_restores_edge") else "To try in the lock:"
            out += [title, "", "```toml", f"[repos.{r['cause']['repo']}]", r["cause"]["aliases_fix"], "```", ""]
    out += side_by_side_md(r)
    if r.get("old_break"):
        out += [f"At the old pins the path was already broken: {r['old_break']}", ""]
    out += ["## FROM and TO", ""]
    for side in ("from", "to"):
        ep = r["endpoints"][side]
        out += [f"- **{side.upper()}** `{ep['spec']}`: {ep['status']} (old {_loc(ep['old'])}, new {_loc(ep['new'])})"]
    out += [f"- note: {note}" for note in r.get("notes", [])]
    out.append("")
    for side in ("from", "to"):
        ep = r["endpoints"][side]
        if ep["diff"]:
            out += [f"### Body diff of {side.upper()} `{ep['spec']}`", "", "```diff", *ep["diff"], "```", ""]
    out += ["## Hops", "", "| hop | old | new | on path (old/new) | what happened |", "| --- | --- | --- | --- | --- |"]
    found_old, found_new = r["old_path"]["found"], r["new_path"]["found"]
    for h in r["hops"]:
        onp = (f"{('yes' if h['on_old_path'] else 'no') if found_old else '—'}/"
               f"{('yes' if h['on_new_path'] else 'no') if found_new else '—'}")
        out.append(f"| {h['repo']}:`{h['symbol']}` | {_loc(h['old'])} | {_loc(h['new'])} | {onp} | {h['status']} |")
    out.append("")
    groups = {
        "Added to the path": [h for h in r["hops"] if h["membership"] == "added"],
        "Removed from the path": [h for h in r["hops"] if h["membership"] == "removed"],
        "Moved": [h for h in r["hops"] if {"moved-file", "moved-line"} & set(h["changes"])],
        "Bodies changed": [h for h in r["hops"] if "body-changed" in h["changes"]],
    }
    missing = {"Added to the path": None if found_old else "no path at the old pins",
               "Removed from the path": None if found_new else "no path at the new pins"}
    for title, items in groups.items():
        out += [f"### {title}", ""]
        out += [f"- {h['repo']}:`{h['symbol']}` — {h['status']}" for h in items] or \
            [f"- none ({missing[title]})" if missing.get(title) else "- none"]
        out.append("")
    for h in groups["Bodies changed"]:
        if h["diff"]:
            out += [f"#### Body diff of {h['repo']}:`{h['symbol']}`", "", "```diff", *h["diff"], "```", ""]
    out += ["## Edges of the old path at the new pins", ""]
    if r["edges"]:
        for c in r["edges"]:
            state = "ok" if c["ok"] else f"**missing** — {c['reason']}"
            extra = f"; {c['changed']}" if c.get("changed") else ""
            out.append(f"{c['index']}. {c['edge']} ({c['kind']}{'/' + c['rule'] if c.get('rule') else ''}, "
                       f"call at `{c['call']}`): {state}{extra}")
    else:
        out.append("- (no path at the old pins)")
    out += ["", "## Dispatch rules that stopped matching", ""]
    out += [f"- `{x['rule']}`: {x['old_matches']} matches → 0" + (" (used on the path)" if x["on_path"] else "")
            for x in r["rules_stopped"]] or ["- none"]
    out += ["", "## Annotations", ""]
    if not r["annotations"]:
        out.append("- no notes")
    for a in r["annotations"]:
        flag = " (new)" if a["newly"] else ""
        out.append(f"- {a['repo']}:`{a['symbol']}`: {a['old_status']} → **{a['status']}**{flag}"
                   + (f" at `{a['path']}:{a['line']}`" if a.get("path") else ""))
        if a.get("diff"):
            out += ["", "  ```diff", *("  " + d for d in a["diff"]), "  ```", ""]
    rec = r["reconciliation"]
    out += ["", "## Reconciliation deltas", ""]
    if not rec["available"]:
        out.append(f"- not available: {rec['reason']}")
    else:
        out += [f"- `{d['key']}`: {value(d['old'])} → {value(d['new'])}" for d in rec["deltas"]] \
            or ["- no value changed"]
    out += hazards_md(r.get("hazards"))
    if _parsed(r):
        out += ["", f"Index at the new pins: {_parsed(r)} (the rest came from the per-blob cache; a graph "
                    "already built for these pins parses nothing)."]
    out += ["", "## Why this verdict", ""]
    out += [f"- {x}" for x in r["reasons"]] or ["- nothing on the path changed"]
    return "\n".join(out) + "\n"


def print_summary(r: dict[str, Any], console: Console, report_path: str | None = None) -> None:
    code = r["exit_code"]
    style = {0: "green", 1: "yellow", 2: "red"}[code]
    console.print(f"[bold]recheck[/] {escape(r['from'])} → {escape(r['to'])}: [{style}]{escape(verdict_line(r))}[/]")
    console.print(f"  old: {escape(r['old']['label'])} ({escape(r['old']['origin'])})")
    console.print(f"  new: {escape(r['new']['label'])} ({escape(r['new']['origin'])})")
    for side in ("from", "to"):
        ep = r["endpoints"][side]
        console.print(f"  {side.upper()} {escape(ep['spec'])}: {escape(ep['status'])}")
    for note in r.get("notes", []):
        console.print(f"  [yellow]note:[/] {escape(note)}")
    if r["broken"]["at_new"]:
        console.print(f"  [red]broken:[/] {escape(r['broken']['where'] or '')}")
    if r.get("cause"):
        console.print(f"  [bold]cause:[/] {escape(r['cause']['text'])}")
        if r["cause"].get("aliases_fix") and r["cause"].get("pins", "new") == "new":  # not for the old pins
            label = "fix" if r["cause"].get("fix_restores_edge") else "try"
            console.print(f"  {label}: " + escape(f"in [repos.{r['cause']['repo']}] of the lock set "
                                             f"{r['cause']['aliases_fix']}"))
    seam = (r.get("side_by_side") or {}).get("seam")
    if seam:
        console.print(f"  seam: the paths part after {escape(seam['parts_after'] or 'the start')}; old "
                      f"{escape(', '.join(seam['old']) or '—')} / new {escape(', '.join(seam['new']) or '—')}"
                      + (f"; rejoin at {escape(seam['rejoins_at'])}" if seam["rejoins_at"] else ""))
    if r.get("old_break"):
        console.print(f"  old pins: {escape(r['old_break'])}")
    counts = verdict_counts(r)
    console.print("  " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
    for reason in r["reasons"][:12]:
        console.print(f"  - {escape(reason)}")
    if len(r["reasons"]) > 12:
        console.print(f"  … {len(r['reasons']) - 12} more in the report")
    parsed = _parsed(r)
    if parsed:
        console.print(f"  index: {escape(parsed)}")
    if report_path:
        console.print(f"  report: {escape(report_path)}")


def hazards_md(h: dict[str, Any] | None) -> list[str]:
    """The `## Hazards` section: findings of `analyze hazards` new and gone between the two pin sets."""
    from analyzer.hazards.compare import describe

    out = ["", "## Hazards", ""]
    if not h:
        return out + ["- not computed"]
    if not h["available"]:
        return out + [f"- not available: {h['reason']}"]
    out.append(f"{h['old_count']} finding(s) at the old pins, {h['new_count']} at the new pins.")
    out.append("")
    out += [f"- **new** `{f['id']}`: {describe(f)}" for f in h["new"]]
    out += [f"- gone `{f['id']}`: {describe(f)}" for f in h["gone"]]
    if not h["new"] and not h["gone"]:
        out.append("- no hazard appeared or went away")
    return out


def _parsed(r: dict[str, Any]) -> str:
    """`dsh 0/5120 parsed, pi 37/2210 parsed` for the new pins (files not parsed came from the blob cache)."""
    stats = (r.get("index") or {}).get("new") or {}
    return ", ".join(f"{name} {count(s.get('parsed', 0))}/{count(s.get('files', 0))} files parsed"
                     for name, s in stats.items())
