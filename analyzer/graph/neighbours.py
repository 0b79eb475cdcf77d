"""One step of the graph for `callers` / `callees`: the edges of every definition a symbol names.

A symbol may name several definitions (`renderPrompt` in two packages); the result keeps them apart and
says so instead of merging their edges. Guessed (`name`) edges and edges into or out of test code are
left out unless asked for, as traces do, and the result counts what it left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analyzer.graph.queries import edges_in, edges_out, production_first, resolve_symbol

if TYPE_CHECKING:
    from analyzer.graph.protocol import CallGraph  # the stored view and networkx graphs alike

CONFIDENT_KINDS = frozenset({"direct", "method", "interface", "dispatch"})


def definition_row(g: CallGraph, node: str) -> dict[str, Any]:
    a = g.nodes[node]
    return {"node": node, "repo": a.get("repo"), "path": a.get("path"), "line": a.get("line"),
            "symbol": a.get("qualname"), "kind": a.get("kind"), "has_body": a.get("has_body", True),
            "test": bool(a.get("test", False))}


def neighbours(g: CallGraph, spec: str, direction: str, *, allow_guesses: bool = False,
               include_tests: bool = False) -> dict[str, Any]:
    """Edges into (`direction="in"`) or out of every definition `spec` names. Raises AnalyzerError (with
    the closest names) for an unknown symbol."""
    every = resolve_symbol(g, spec)
    matches = production_first(g, every, include_tests)
    hidden = {"guesses": 0, "tests": 0, "test_definitions": len(every) - len(matches)}
    definitions = []
    for match in matches:
        row = definition_row(g, match.node)
        edges = []
        for node in match.endpoints:
            pairs = edges_in(g, node) if direction == "in" else edges_out(g, node)
            for other, d in pairs:
                if not allow_guesses and d["kind"] not in CONFIDENT_KINDS:
                    hidden["guesses"] += 1
                    continue
                other_test = bool(g.nodes[other].get("test", False))
                if other_test and not include_tests and not row["test"]:
                    hidden["tests"] += 1
                    continue
                caller, callee = (other, node) if direction == "in" else (node, other)
                edges.append({"caller": caller, "callee": callee, "kind": d["kind"], "rule": d.get("rule"),
                              "possible": d.get("possible", False), "call_path": d["path"], "call_line": d["line"],
                              "nested": d.get("nested", 0), "test": other_test,
                              "evidence": list(d.get("evidence", []))})
        row["edges"] = edges
        definitions.append(row)
    return {"symbol": spec, "direction": "callers" if direction == "in" else "callees",
            "ambiguous": len(definitions) > 1, "definitions": definitions,
            "edges": [e for dfn in definitions for e in dfn["edges"]], "hidden": hidden}
