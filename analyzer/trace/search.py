"""The one trace: resolve FROM and TO, search the request path, shape the result.

`trace`, `report`, `recheck` and the usage records all call `trace_graph`, so they resolve symbols the
same way and cannot disagree about a path. A name with several definitions is not an error: every
definition is a candidate endpoint, the path search picks the one a request path runs through, and
the result lists the candidates (`candidates`) so each caller can say which one it used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.graph.protocol import CallGraph
from analyzer.graph.queries import SymbolMatch, resolve_symbol
from analyzer.trace.defaults import DEFAULT_MAX_DEPTH
from analyzer.trace.pathfinding import anchor_level, find_paths, reaching_set
from analyzer.trace.result import trace_result

SIDES = ("from", "to")


@dataclass(frozen=True)
class PathOptions:
    """How far and through what a path may run; `alternatives` > 1 also lists that many runners-up."""

    max_depth: int = DEFAULT_MAX_DEPTH
    allow_guesses: bool = False
    include_tests: bool = False
    alternatives: int = 1

    @property
    def k(self) -> int:
        """Paths to ask the search for (the best one plus the alternatives shown)."""
        return max(1, self.alternatives + (1 if self.alternatives > 1 else 0))


@dataclass
class TraceRun:
    """What one trace found. `document` is the `analyzer.trace/1` result (None when FROM or TO named
    nothing); `errors` says, per side, why a name resolved to nothing (with the closest names)."""

    document: dict[str, Any] | None
    matches: dict[str, list[SymbolMatch]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def used(self, side: str) -> str | None:
        """The definition of `side` the result stands for: the one the path runs through, else (no path)
        the first candidate; None when the name resolved to nothing."""
        matches = self.matches.get(side)
        if not matches:
            return None
        end = path_endpoint(self.document, side) if self.document else None
        for m in matches:
            if end is not None and end in m.endpoints:
                return m.node
        return matches[0].node


def path_endpoint(document: dict[str, Any], side: str) -> str | None:
    """The node the found path starts (FROM) or ends (TO) at."""
    hops = document.get("hops") or []
    if not hops:
        return None
    if side == "to":
        return str(hops[-1]["node"])
    from_hops = [h for h in hops if h["branch"] == "from"]
    return str((from_hops[-1] if from_hops else hops[0])["node"])


def trace_graph(g: CallGraph, spec_from: str, spec_to: str, pins: dict[str, dict[str, Any]],
                options: PathOptions = PathOptions(), *, strict: bool = True) -> TraceRun:
    """Resolve both names (suggestions ranked by how near they stand to the other end) and search.

    `strict`: an unknown name raises AnalyzerError (FROM first), as `analyze trace` reports it;
    otherwise it is recorded in `errors` and the other side is still resolved (a re-check asks what
    exists at each pin set)."""
    run = TraceRun(None)
    for side, spec, other in (("from", spec_from, spec_to), ("to", spec_to, spec_from)):
        connected = _lazily(_nearness, g, other, backwards=side == "to", options=options)
        try:
            run.matches[side] = resolve_symbol(g, spec, connected=connected)
        except AnalyzerError as exc:
            if strict:
                raise
            run.errors[side] = str(exc)
    if run.errors:
        return run
    sources = [n for m in run.matches["from"] for n in m.endpoints]
    targets = [n for m in run.matches["to"] for n in m.endpoints]
    paths = find_paths(g, sources, targets, allow_guesses=options.allow_guesses, max_depth=options.max_depth,
                       k=options.k, include_tests=options.include_tests)
    candidates = {side: [m.node for m in run.matches[side]] for side in SIDES}
    run.document = trace_result(g, spec_from, spec_to, paths, pins, candidates)
    return run


def ambiguity_notes(document: dict[str, Any]) -> list[str]:
    """One plain line per name with several definitions, and which one the path uses (the trace's note)."""
    found = bool(document.get("found"))
    return [ambiguity_note(document[side], cands, path_endpoint(document, side) if found else None, on_path=found)
            for side in SIDES if len(cands := document.get("candidates", {}).get(side, [])) > 1]


def ambiguity_note(spec: str, candidates: list[str], used: str | None, *, on_path: bool) -> str:
    """`renderPrompt is ambiguous (2 definitions: …); the path uses …` (no path: which one stands for it)."""
    listed = "; ".join(c.split(":", 1)[1] for c in candidates)
    head = f"{spec} is ambiguous ({len(candidates)} definitions: {listed})"
    if used is None:
        return head
    return head + (f"; the path uses {used}" if on_path else f"; no path runs through any, {used} is compared")


Nearness = Callable[[str], float | None]


def _lazily(make: Callable[..., Nearness], *args: Any, **kwargs: Any) -> Nearness:
    """`make(*args, **kwargs)`, prepared on the first question: only an unknown name (suggestions) asks it."""
    made: list[Nearness] = []

    def ask(candidate: str) -> float | None:
        if not made:
            made.append(make(*args, **kwargs))
        return made[0](candidate)
    return ask


def _nearness(g: CallGraph, other: str, *, backwards: bool, options: PathOptions) -> Nearness:
    """For suggestions: how near a candidate stands to a request path with the other endpoint — the
    number of caller levels (1–2) up to an anchor that calls it before calling towards the other end,
    or None. Cheap enough to ask of every name that shares a word with the unknown one."""
    try:
        others = [n for m in resolve_symbol(g, other) for n in m.endpoints]
    except AnalyzerError:
        return lambda _candidate: None
    if backwards:
        return lambda _candidate: None  # an unknown TO: rank by name only
    reach = reaching_set(g, others, include_tests=options.include_tests, max_depth=options.max_depth)
    children: dict[str, list[str]] = {}
    by_name: dict[str, list[str]] = {}
    for node, attrs in g.nodes(data=True):
        by_name.setdefault(attrs.get("qualname", ""), []).append(node)
        if attrs.get("parent"):
            children.setdefault(attrs["parent"], []).append(node)

    other_repos = {n.split(":", 1)[0] for n in others}

    def level(candidate: str) -> float | None:
        nodes = [n for q in by_name.get(candidate, []) for n in (q, *children.get(q, []))]
        near = anchor_level(g, nodes, reach, levels=2)
        if near is None:
            return 3.0 if any(n in reach for n in nodes) else None
        # a sibling step of the request, like the missing name; the start of a cross-repo request
        # usually lives on the application side, not in the repo of the other end
        return near if any(n.split(":", 1)[0] not in other_repos for n in nodes) else 2.5
    return level
