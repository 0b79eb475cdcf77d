"""Find the request path from FROM to TO in the call graph.

Either FROM reaches TO through calls (a plain best path), or — the usual case for a request pipeline —
neither calls the other, and the path is anchored at the lowest common caller C: C calls towards FROM at
one call site and towards TO at a *later* call site of its own body (source order). A caller that reaches
TO's branch before FROM's branch is not a valid anchor.

"Best" means highest confidence first, then fewest hops: an edge costs -log(confidence) plus a small
per-hop term, so Dijkstra orders paths the way the user expects.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from analyzer.resolve.edges import EDGE_KINDS, KIND_CONFIDENCE
from analyzer.trace.defaults import DEFAULT_MAX_DEPTH

if TYPE_CHECKING:
    import networkx as nx  # annotations only: queries run on networkx graphs and LazyGraph views

HOP_COST = 0.001
LOCALITY_STEP = 0.0001


@dataclass(frozen=True)
class Step:
    """One call: `source` calls `target` at `line` of source's file, with the edge's attributes."""

    source: str
    target: str
    key: int
    attrs: dict = field(hash=False, compare=False)

    @property
    def order(self) -> tuple[int, int]:
        return self.attrs.get("line", 0), self.attrs.get("column", 0)


@dataclass
class TracePath:
    mode: str  # "direct" | "common-caller"
    anchor: str | None
    from_branch: list[Step]  # anchor → … → FROM (empty for direct)
    to_branch: list[Step]  # anchor → … → TO, or FROM → … → TO for direct
    cost: float

    @property
    def confidence(self) -> float:
        return math.exp(-sum(_edge_cost(s.attrs) - HOP_COST for s in (*self.from_branch, *self.to_branch)))

    @property
    def steps(self) -> list[Step]:
        return [*self.from_branch, *self.to_branch]


def allowed_kinds(allow_guesses: bool) -> set[str]:
    return {k for k in EDGE_KINDS if allow_guesses or k != "name"}


def _edge_cost(attrs: dict) -> float:
    conf = attrs.get("confidence") or KIND_CONFIDENCE.get(attrs.get("kind", "name"), 0.1)
    return -math.log(max(conf, 1e-6)) + HOP_COST


class EdgePicker:
    """The cheapest allowed call site between two nodes, looked up lazily (a trace touches few nodes)."""

    def __init__(self, g: nx.MultiDiGraph, kinds: set[str], include_tests: bool) -> None:
        self.g = g
        self.kinds = kinds
        self.include_tests = include_tests
        self._cache: dict[tuple[str, str], list[Step]] = {}

    def usable(self, node: str) -> bool:
        return self.include_tests or not self.g.nodes[node].get("test", False)

    def locality(self, u: str, v: str) -> float:
        """A tie-breaker far below any kind difference: among equally certain calls prefer the callee in
        the same file, then the same package folder (deterministic, and usually the code's own route)."""
        pu, pv = self.g.nodes[u].get("path", ""), self.g.nodes[v].get("path", "")
        if pu == pv:
            return 0.0
        same_pkg = pu.split("/src/")[0] == pv.split("/src/")[0]
        return LOCALITY_STEP if same_pkg else 2 * LOCALITY_STEP

    def steps(self, u: str, v: str) -> list[Step]:
        key = (u, v)
        found = self._cache.get(key)
        if found is None:
            found = sorted((Step(u, v, k, d) for k, d in self.g[u][v].items() if d.get("kind") in self.kinds),
                           key=lambda s: (_edge_cost(s.attrs), s.order))
            self._cache[key] = found
        return found


def _dijkstra_to(g: nx.MultiDiGraph, targets: Iterable[str], pick: EdgePicker,
                 max_depth: int) -> dict[str, tuple[float, int, Step | None]]:
    """For every node that reaches a target: (cost, hops, first step of the best path)."""
    dist: dict[str, tuple[float, int, Step | None]] = {}
    counter = itertools.count()
    heap: list[tuple[float, int, int, str, Step | None]] = [(0.0, 0, next(counter), t, None) for t in targets]
    heapq.heapify(heap)
    while heap:
        cost, hops, _, node, step = heapq.heappop(heap)
        if node in dist:
            continue
        dist[node] = (cost, hops, step)
        if hops >= max_depth:
            continue
        for pred in g.predecessors(node):
            if pred in dist or not pick.usable(pred):
                continue
            steps = pick.steps(pred, node)
            if steps:
                s = steps[0]
                step_cost = _edge_cost(s.attrs) + pick.locality(pred, node)
                heapq.heappush(heap, (cost + step_cost, hops + 1, next(counter), pred, s))
    return dist


def _walk(start: str, dist: dict[str, tuple[float, int, Step | None]]) -> list[Step]:
    path: list[Step] = []
    node = start
    seen = set()
    while True:
        _, _, step = dist[node]
        if step is None or node in seen:
            return path
        seen.add(node)
        path.append(step)
        node = step.target


def find_paths(g: nx.MultiDiGraph, sources: list[str], targets: list[str], *, allow_guesses: bool = False,
               max_depth: int = DEFAULT_MAX_DEPTH, k: int = 1, include_tests: bool = False) -> list[TracePath]:
    """Up to `k` best paths, direct reach first; empty when no valid path exists. Test code (marked on
    the nodes) is not traversed unless `include_tests`."""
    pick = EdgePicker(g, allowed_kinds(allow_guesses), include_tests)
    to_target = _dijkstra_to(g, targets, pick, max_depth)
    results: list[TracePath] = []
    direct = [(to_target[s][0], s) for s in sources if s in to_target and s not in targets]
    for cost, s in sorted(direct):
        results.append(TracePath("direct", None, [], _walk(s, to_target), cost))
    if results and k == 1:
        return results[:1]
    to_source = _dijkstra_to(g, sources, pick, max_depth)
    candidates: list[TracePath] = []
    for anchor in set(to_source) & set(to_target):
        if anchor in sources or anchor in targets:
            continue
        candidate = _anchored(g, anchor, pick, to_source, to_target, max_depth)
        if candidate is not None:
            candidates.append(candidate)
    candidates.sort(key=lambda p: (p.cost, len(p.steps), p.anchor))
    results.extend(candidates)
    return results[:k]


def _anchored(g: nx.MultiDiGraph, anchor: str, pick: EdgePicker,
              to_source: dict, to_target: dict, max_depth: int) -> TracePath | None:
    """Best (FROM-branch call site, later TO-branch call site) pair in the anchor's own body."""
    outs: list[Step] = []
    for succ in g.successors(anchor):
        if succ in to_source or succ in to_target:
            outs.extend(pick.steps(anchor, succ))
    outs.sort(key=lambda s: s.order)
    best_from: tuple[float, Step] | None = None
    best_pair: tuple[float, Step, Step] | None = None
    for s in outs:
        if s.target in to_target and (best_from is not None):
            cost_to = _edge_cost(s.attrs) + to_target[s.target][0]
            hops = 1 + to_target[s.target][1]
            if hops <= max_depth and best_from[1].order < s.order:
                total = best_from[0] + cost_to
                if best_pair is None or total < best_pair[0]:
                    best_pair = (total, best_from[1], s)
        if s.target in to_source:
            cost_from = _edge_cost(s.attrs) + to_source[s.target][0]
            if 1 + to_source[s.target][1] <= max_depth and (best_from is None or cost_from < best_from[0]):
                best_from = (cost_from, s)
    if best_pair is None:
        return None
    total, s_from, s_to = best_pair
    return TracePath("common-caller", anchor, [s_from, *_walk(s_from.target, to_source)],
                     [s_to, *_walk(s_to.target, to_target)], total)


def seam_alternatives(g: nx.MultiDiGraph, step: Step, include_tests: bool = True) -> list[str]:
    """Other live targets of the dynamic seam a step goes through (same call site or same seam id)."""
    kind = step.attrs.get("kind")
    if kind not in ("interface", "dispatch"):
        return []
    seam = step.attrs.get("seam")
    out = set()
    for _, v, d in g.out_edges(step.source, data=True):
        if v == step.target or d.get("kind") not in ("interface", "dispatch"):
            continue
        if not include_tests and g.nodes[v].get("test", False):
            continue
        same_site = d.get("line") == step.attrs.get("line") and d.get("path") == step.attrs.get("path") \
            and d.get("column", 0) == step.attrs.get("column", 0)
        if (seam and d.get("seam") == seam) or same_site:
            out.add(v)
    return sorted(out)


def reaching_set(g: nx.MultiDiGraph, endpoints: list[str], *, include_tests: bool = False,
                 max_depth: int = DEFAULT_MAX_DEPTH) -> set[str]:
    """Every node with a call path to one of `endpoints` (guessed edges excluded)."""
    return set(_dijkstra_to(g, endpoints, EdgePicker(g, allowed_kinds(False), include_tests), max_depth))


def anchor_level(g: nx.MultiDiGraph, nodes: list[str], reach: set[str], levels: int = 2) -> float | None:
    """How many caller levels above `nodes` the nearest valid anchor is: a caller that calls towards
    `nodes` at one line and, at a later line, calls a node of `reach`. None when there is none that near."""
    frontier = {n: n for n in nodes}  # node → the entry into `nodes` it leads to (for the order check)
    seen = set(nodes)
    for depth in range(1, levels + 1):
        upper: dict[str, str] = {}
        for node in frontier:
            for caller, _, d in g.in_edges(node, data=True):
                order = (d.get("line", 0), d.get("column", 0))
                later = any((d2.get("line", 0), d2.get("column", 0)) > order and v in reach
                            for _, v, d2 in g.out_edges(caller, data=True))
                if later:
                    return float(depth)
                if caller not in seen:
                    seen.add(caller)
                    upper[caller] = node
        frontier = upper
    return None
