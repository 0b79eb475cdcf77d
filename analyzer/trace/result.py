"""The trace result as plain data: the one structure text, JSON, Mermaid and reports all render.

JSON schema `analyzer.trace/1` (stable; additions only):
{
  "schema": "analyzer.trace/1",
  "from": spec, "to": spec,
  "pins": {repo: {"commit": sha, "ref": ref|null, "url": url}},
  "found": bool,
  "mode": "direct" | "common-caller" | null,
  "anchor": node|null,               # the lowest common caller (common-caller mode)
  "confidence": float,               # product of edge confidences
  "hops": [hop, …],                  # in reading order (see below)
  "edges": [edge, …],                # the edges between consecutive hops, with evidence
  "alternatives": [{"mode", "anchor", "confidence", "hops": [node, …],
                    "from_branch": [node, …],   # after the anchor, down to FROM (empty for direct)
                    "to_branch": [node, …]}, …],  # after the anchor (or FROM, direct), down to TO
  "candidates": {"from": [node, …], "to": [node, …]}   # every definition the names matched
}
hop  = {"node", "repo", "path", "line", "end_line", "symbol", "kind", "branch": "anchor"|"from"|"to"|"path",
        "via": edge index into "edges" or null}
edge = {"source", "target", "kind", "confidence", "possible", "call_path", "call_line", "call_text",
        "rule", "evidence": [str], "nested",
        "alternatives": [node, …],       # other live targets of the same seam (product code)
        "test_alternatives": [node, …]}  # … and those in test code
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analyzer.trace.pathfinding import Step, TracePath, seam_alternatives

if TYPE_CHECKING:
    from analyzer.graph.protocol import CallGraph  # the stored view and networkx graphs alike

SCHEMA = "analyzer.trace/1"


def _hop(g: CallGraph, node: str, branch: str, via: int | None) -> dict[str, Any]:
    a = g.nodes[node]
    return {"node": node, "repo": a["repo"], "path": a["path"], "line": a["line"], "end_line": a["end_line"],
            "symbol": a["qualname"], "kind": a["kind"], "branch": branch, "via": via}


def _edge(g: CallGraph, step: Step) -> dict[str, Any]:
    d = step.attrs
    every = seam_alternatives(g, step)
    tests = [n for n in every if g.nodes[n].get("test", False)]
    return {"source": step.source, "target": step.target, "kind": d["kind"], "confidence": d.get("confidence"),
            "possible": d.get("possible", False), "call_path": d.get("path"), "call_line": d.get("line"),
            "call_text": d.get("call_text", ""), "rule": d.get("rule"), "evidence": list(d.get("evidence", [])),
            "nested": d.get("nested", 0), "alternatives": [n for n in every if n not in tests],
            "test_alternatives": tests}


def trace_result(g: CallGraph, spec_from: str, spec_to: str, paths: list[TracePath],
                 pins: dict[str, dict[str, Any]], candidates: dict[str, list[str]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"schema": SCHEMA, "from": spec_from, "to": spec_to, "pins": pins,
                           "candidates": candidates or {"from": [], "to": []},
                           "found": bool(paths), "mode": None, "anchor": None, "confidence": 0.0,
                           "hops": [], "edges": [], "alternatives": []}
    if not paths:
        return out
    best = paths[0]
    out.update(mode=best.mode, anchor=best.anchor, confidence=round(best.confidence, 4))
    hops, edges = out["hops"], out["edges"]
    if best.mode == "direct":
        hops.append(_hop(g, best.to_branch[0].source, "path", None))
        for step in best.to_branch:
            edges.append(_edge(g, step))
            hops.append(_hop(g, step.target, "path", len(edges) - 1))
    else:
        assert best.anchor is not None
        hops.append(_hop(g, best.anchor, "anchor", None))
        for branch, steps in (("from", best.from_branch), ("to", best.to_branch)):
            for step in steps:
                edges.append(_edge(g, step))
                hops.append(_hop(g, step.target, branch, len(edges) - 1))
    for alt in paths[1:]:
        nodes = ([alt.anchor] if alt.anchor else [alt.to_branch[0].source]) + [s.target for s in alt.steps]
        out["alternatives"].append({"mode": alt.mode, "anchor": alt.anchor,
                                    "confidence": round(alt.confidence, 4), "hops": nodes,
                                    "from_branch": [s.target for s in alt.from_branch],
                                    "to_branch": [s.target for s in alt.to_branch]})
    return out


def validate_trace_json(data: dict[str, Any]) -> list[str]:
    """Structural check of a trace document (used by tests and by readers of saved JSON)."""
    problems = []
    for key, kind in (("schema", str), ("from", str), ("to", str), ("pins", dict), ("found", bool),
                      ("hops", list), ("edges", list), ("alternatives", list)):
        if not isinstance(data.get(key), kind):
            problems.append(f"{key}: expected {kind.__name__}")
    if data.get("schema") != SCHEMA:
        problems.append(f"schema: expected {SCHEMA}")
    n_edges = len(data.get("edges", []))
    for i, hop in enumerate(data.get("hops", [])):
        for key in ("node", "repo", "path", "line", "symbol", "kind", "branch"):
            if key not in hop:
                problems.append(f"hops[{i}].{key}: missing")
        via = hop.get("via")
        if via is not None and not (0 <= via < n_edges):
            problems.append(f"hops[{i}].via: {via} is not an edge index")
    for i, e in enumerate(data.get("edges", [])):
        for key in ("source", "target", "kind", "call_line", "evidence", "alternatives"):
            if key not in e:
                problems.append(f"edges[{i}].{key}: missing")
    return problems
