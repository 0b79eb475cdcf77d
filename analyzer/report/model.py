"""The report as plain data: the trace plus, per hop, the permalink, the source excerpt and the note.

Markdown, HTML and JSON all render this one structure (`analyzer.report/1`, additions only):
{ "schema", "from", "to", "pins", "found", "mode", "confidence", "mermaid",
  "trace": <analyzer.trace/1 dict>,
  "hops": [{ "index", "id", "node", "symbol", "repo", "path", "line", "end_line", "kind", "branch",
             "permalink", "commit", "language",
             "incoming": edge|null,            # how the previous hop calls this one (kind, rule, evidence…)
             "calls": [line, …],               # call lines in this hop's body that lead to the next hops
             "excerpt": [{"line", "text", "mark"} | {"gap": true}], "excerpt_error": str|null,
             "note": <Anchored.as_json()>|null,
             "hazards": [{"id", "category", "line", "why", "summary"}] }],   # `analyze report` only
  "hazards": {"available", "reason", "findings", "marked"},   # set by `analyze report` (analyzer.hazards.report)
  "other_notes": [<Anchored.as_json()>, …],   # notes on symbols that are not on this path
  "notes_file": {"path", "why", "found", "count", "message"} | null   # which notes file was read, or looked for
}
"""

from __future__ import annotations

from typing import Any

from analyzer.annotations import Anchored, Note, anchor_note, note_body_diff
from analyzer.graph.protocol import CallGraph
from analyzer.report.source import SourceReader, permalink
from analyzer.trace.render import render_mermaid

SCHEMA = "analyzer.report/1"
FULL_BODY_LINES = 40  # bodies up to this long are quoted whole
CONTEXT = 3  # lines kept around each marked call line in longer bodies
HEAD_LINES = 3  # a long body's first lines (the signature)


def _language(path: str) -> str:
    return "tsx" if path.endswith((".tsx", ".jsx")) else "typescript" if path.endswith((".ts", ".mts", ".cts")) \
        else "javascript"


def excerpt_lines(start: int, end: int, marks: list[int]) -> list[int | None]:
    """Which lines of a definition to quote: all when short, else head + windows around the marked call lines
    + the last line; None stands for a gap."""
    end = max(end, start)
    if end - start + 1 <= FULL_BODY_LINES:
        keep = set(range(start, end + 1))
    else:
        keep = set(range(start, min(start + HEAD_LINES, end + 1))) | {end}
        for m in marks:
            keep |= {n for n in range(m - CONTEXT, m + CONTEXT + 1) if start <= n <= end}
    out: list[int | None] = []
    prev = None
    for n in sorted(keep):
        if prev is not None and n != prev + 1:
            out.append(None)
        out.append(n)
        prev = n
    return out


def _excerpt(reader: SourceReader, hop: dict[str, Any], commit: str, marks: list[int]) -> tuple[list, str | None]:
    text = reader.text(hop["repo"], commit, hop["path"])
    if text is None:
        return [], (f"{hop['path']} could not be read at {commit[:10]} from the cache; run 'analyze sync "
                    f"{hop['repo']}'")
    lines = text.splitlines()
    out: list[dict[str, Any]] = []
    for n in excerpt_lines(hop["line"], hop.get("end_line") or hop["line"], marks):
        if n is None:
            out.append({"gap": True})
        elif 1 <= n <= len(lines):
            out.append({"line": n, "text": lines[n - 1], "mark": n in marks})
    return out, None


def build_report(trace: dict[str, Any], g: CallGraph, reader: SourceReader,
                 notes: list[Note] | None = None, notes_file: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything the three report files show, from a trace result at the pins of `g`."""
    pins = trace["pins"]
    notes = list(notes or [])
    anchored = [anchor_note(g, n) for n in notes]
    for a in anchored:
        if a.status == "stale" and a.note.repo in pins:
            note_body_diff(reader, a, pins[a.note.repo]["commit"])
    by_node: dict[str, Anchored] = {a.node: a for a in anchored if a.node}
    edges = trace["edges"]
    hops = []
    used: set[str] = set()
    for i, hop in enumerate(trace["hops"]):
        pin = pins.get(hop["repo"], {})
        commit = pin.get("commit", "")
        calls = sorted({e["call_line"] for e in edges if e["source"] == hop["node"] and e.get("call_line")})
        excerpt, error = _excerpt(reader, hop, commit, calls) if commit else ([], f"{hop['repo']} is not pinned")
        note = by_node.get(hop["node"])
        if note is not None:
            used.add(hop["node"])
        hops.append({
            "index": i + 1, "id": f"hop-{i + 1}", "node": hop["node"], "symbol": hop["symbol"],
            "repo": hop["repo"], "path": hop["path"], "line": hop["line"], "end_line": hop["end_line"],
            "kind": hop["kind"], "branch": hop["branch"], "commit": commit, "language": _language(hop["path"]),
            "permalink": permalink(pin.get("url", ""), commit, hop["path"], hop["line"], hop["end_line"]),
            "incoming": edges[hop["via"]] if hop["via"] is not None else None,
            "calls": calls, "excerpt": excerpt, "excerpt_error": error,
            "note": note.as_json() if note is not None else None,
        })
    others = [a.as_json() for a in anchored if a.node not in used]
    return {"schema": SCHEMA, "from": trace["from"], "to": trace["to"], "pins": pins, "found": trace["found"],
            "mode": trace["mode"], "confidence": trace["confidence"],
            "mermaid": render_mermaid(trace) if trace["found"] else "", "trace": trace, "hops": hops,
            "other_notes": others, "reader_errors": list(reader.errors), "notes_file": notes_file}


def report_dirname(pins: dict[str, dict[str, Any]]) -> str:
    """`<dsh-short>_<pi-short>`: the pinned commits' short shas in lock order."""
    return "_".join(p["commit"][:10] for p in pins.values())
