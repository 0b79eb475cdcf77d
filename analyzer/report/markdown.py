"""`trace.md`: pins, a Mermaid diagram, then one section per hop with permalink, excerpt, edge and note."""

from __future__ import annotations

from typing import Any

BRANCH_LABEL = {"anchor": "lowest common caller", "from": "branch to FROM", "to": "branch to TO", "path": "path"}


def _fence(lines: list[str]) -> str:
    """A backtick fence longer than any run of backticks in the quoted code."""
    run = 3
    for line in lines:
        count = 0
        for ch in line:
            count = count + 1 if ch == "`" else 0
            run = max(run, count + 1)
    return "`" * run


def _edge_md(e: dict[str, Any]) -> list[str]:
    kind = f"`{e['kind']}`" + (f" (rule `{e['rule']}`)" if e.get("rule") else "") + \
        (" — one of several possible targets" if e.get("possible") else "")
    out = [f"Called from `{e['source'].split(':', 2)[2]}` at `{e.get('call_path')}:{e.get('call_line')}`"
           + (f" (`{e['call_text']}`)" if e.get("call_text") else "") + f" — edge {kind}, confidence "
           f"{e.get('confidence')}", ""]
    if e.get("evidence"):
        out.append("Evidence:")
        out.extend(f"- {ev}" for ev in e["evidence"])
        out.append("")
    if e.get("alternatives"):
        out.append("Other live targets at this seam: " + ", ".join(
            f"`{a.split(':', 2)[2]}` ({a.split(':', 2)[0]}:{a.split(':', 2)[1]})" for a in e["alternatives"]))
        out.append("")
    return out


def note_md(note: dict[str, Any] | None) -> list[str]:
    if note is None:
        return ["_No note yet — add one with `analyze annotate SYMBOL \"text\"`._", ""]
    status = {"ok": "current", "stale": "**STALE** — the body changed since the note was written",
              "orphaned": "**ORPHANED** — the symbol is gone", "not-pinned": "repo not analysed"}[note["status"]]
    moved = f"; moved from `{note['path_hint']}` to `{note['path']}`" if note.get("moved") else ""
    out = [f"**Note** ({note['repo']}:`{note['symbol']}`, written at `{note['commit'][:10]}`; {status}{moved}):", ""]
    out.extend("> " + line if line else ">" for line in note["text"].splitlines())
    out.append("")
    if note.get("diff"):
        out += ["Body diff since the note was written:", "", "```diff", *note["diff"], "```", ""]
    elif note.get("diff_error"):
        out += [f"_Body diff unavailable: {note['diff_error']}_", ""]
    return out


def render_markdown(report: dict[str, Any]) -> str:
    out = [f"# Request path: `{report['from']}` → `{report['to']}`", "",
           "Generated locally by `analyze report`. It quotes upstream code: keep it out of git.", "",
           "| repo | commit | ref | source |", "| --- | --- | --- | --- |"]
    for name, p in report["pins"].items():
        out.append(f"| {name} | `{p['commit']}` | {p.get('ref') or '-'} | {p.get('url', '')} |")
    out.append("")
    if report.get("notes_file"):
        out += [f"_{report['notes_file']['message']}_", ""]
    hazards = hazards_sentence(report)
    if hazards:
        out += [hazards, ""]
    if not report["found"]:
        out += ["**No request path found at these pins.**", ""]
    else:
        mode = "lowest common caller" if report["mode"] == "common-caller" else "direct calls"
        out += [f"Mode: {mode}; confidence {report['confidence']}.", "", "```mermaid",
                report["mermaid"].rstrip("\n"), "```", "", "## Hops", ""]
        for hop in report["hops"]:
            out.append(f"{hop['index']}. [`{hop['symbol']}`](#{hop['id']}) — {hop['repo']} "
                       f"`{hop['path']}:{hop['line']}` ({BRANCH_LABEL.get(hop['branch'], hop['branch'])})")
        out.append("")
    for hop in report["hops"]:
        out += [f'<a id="{hop["id"]}"></a>', "",
                f"## {hop['index']}. `{hop['symbol']}` ({BRANCH_LABEL.get(hop['branch'], hop['branch'])})", ""]
        where = f"{hop['repo']} `{hop['path']}` lines {hop['line']}–{hop['end_line']} at `{hop['commit'][:10]}`"
        out += [f"[{where}]({hop['permalink']})" if hop["permalink"] else where, ""]
        if hop["incoming"]:
            out += _edge_md(hop["incoming"])
        if hop["excerpt"]:
            width = len(str(max(x["line"] for x in hop["excerpt"] if "line" in x)))
            code = [("  " + "⋮") if x.get("gap") else
                    f"{'>' if x['mark'] else ' '} {x['line']:>{width}} │ {x['text']}" for x in hop["excerpt"]]
            fence = _fence(code)
            calls = ", ".join(str(c) for c in hop["calls"])
            out += ([f"Call line{'s' if len(hop['calls']) > 1 else ''} marked `>`: {calls}", ""] if calls else [])
            out += [f"{fence}{hop['language']}", *code, fence, ""]
        elif hop["excerpt_error"]:
            out += [f"_Source unavailable: {hop['excerpt_error']}_", ""]
        for hz in hop.get("hazards") or []:  # `analyze hazards`: where a volatile value enters the path
            out += [f"**Hazard enters here** (line {hz['line']}, `{hz['id']}`): {hz['summary']} — {hz['why']}", ""]
        out += note_md(hop["note"])
    if report["other_notes"]:
        out += ["## Notes not on this path", ""]
        for note in report["other_notes"]:
            out += [f"### {note['repo']}:`{note['symbol']}`", "", *note_md(note)]
    return "\n".join(out).rstrip("\n") + "\n"


def hazards_sentence(report: dict[str, Any]) -> str:
    """How many hazard findings were checked against the path and how many enter it — said also when none
    does, so a reader can tell "none on the path" from "not checked" (`--no-hazards`: no sentence)."""
    hz = report.get("hazards")
    if not hz:
        return ""
    if not hz.get("available"):
        return f"Hazards: not checked ({hz.get('reason')})."
    found, marked = hz.get("findings", 0), hz.get("marked", 0)
    where = f"{marked:,} enter the path (marked at their hops)" if marked else "none of them is on this path"
    return f"Hazards: {found:,} finding(s) of `analyze hazards` checked against the path; {where}."
