"""Find the request path from FROM to TO in the call graph.

Either FROM reaches TO through calls (a plain best path), or — the usual case for a request pipeline —
neither calls the other, and the path is anchored at the lowest common caller C: C calls towards FROM at
one call site and towards TO at a *later* call site of its own body (source order). A caller that reaches
TO's branch before FROM's branch is not a valid anchor.

"Best" means highest confidence first, then fewest hops: an edge costs -log(confidence) plus a small
per-hop term, so Dijkstra orders paths the way the user expects.

Function-value edges (`F` calls a parameter, reaching what caller `P` passed) name their `passer`: a
path may take such an edge out of F only when it entered F from P, so a path never runs through the
callback one caller passes on behalf of another. The search therefore runs over states
(node, the predecessor it must be entered from, or None); a path's first node is entered from nowhere,
so any of its states will do.
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
    from analyzer.graph.protocol import CallGraph  # the stored view and networkx graphs alike

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

    def __init__(self, g: CallGraph, kinds: set[str], include_tests: bool) -> None:
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


State = tuple[str, str | None]  # (node, the predecessor it must be entered from, or None)


class Reach:
    """Best paths towards the targets from every state that reaches one (see the module docstring)."""

    def __init__(self, dist: dict[State, tuple[float, int, Step | None, State | None]]) -> None:
        self.dist = dist
        self.by_node: dict[str, list[State]] = {}
        for state in dist:
            self.by_node.setdefault(state[0], []).append(state)

    def __contains__(self, node: object) -> bool:
        return node in self.by_node

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.by_node)

    def start(self, node: str, entered_from: str | None = None, *, free: bool = False) -> State | None:
        """The cheapest state of `node` for a path entering it from `entered_from` (`free`: from anywhere,
        i.e. the path starts there)."""
        states = [st for st in self.by_node.get(node, [])
                  if free or st[1] is None or st[1] == entered_from]
        return min(states, key=lambda st: self.dist[st][:2]) if states else None

    def cost(self, state: State) -> float:
        return self.dist[state][0]

    def hops(self, state: State) -> int:
        return self.dist[state][1]


def _dijkstra_to(g: CallGraph, targets: Iterable[str], pick: EdgePicker, max_depth: int) -> Reach:
    """For every state that reaches a target: (cost, hops, first step of the best path, the next state)."""
    dist: dict[State, tuple[float, int, Step | None, State | None]] = {}
    counter = itertools.count()
    heap: list[tuple[float, int, int, State, Step | None, State | None]] = [
        (0.0, 0, next(counter), (t, None), None, None) for t in targets]
    heapq.heapify(heap)
    while heap:
        cost, hops, _, state, step, nxt = heapq.heappop(heap)
        if state in dist:
            continue
        dist[state] = (cost, hops, step, nxt)
        if hops >= max_depth:
            continue
        node, need = state
        preds = (need,) if need is not None else g.predecessors(node)
        for pred in preds:
            if not pick.usable(pred) or not g.has_edge(pred, node):
                continue
            seen_passers: set[str | None] = set()
            for s in pick.steps(pred, node):  # the cheapest step per passer (each its own state)
                passer = s.attrs.get("passer")
                if passer in seen_passers or (pred, passer) in dist:
                    continue
                seen_passers.add(passer)
                step_cost = _edge_cost(s.attrs) + pick.locality(pred, node)
                heapq.heappush(heap, (cost + step_cost, hops + 1, next(counter), (pred, passer), s, state))
    return Reach(dist)


def _walk(start: State, reach: Reach) -> list[Step]:
    path: list[Step] = []
    state: State | None = start
    seen = set()
    while state is not None:
        _, _, step, nxt = reach.dist[state]
        if step is None or state in seen:
            return path
        seen.add(state)
        path.append(step)
        state = nxt
    return path


def find_paths(g: CallGraph, sources: list[str], targets: list[str], *, allow_guesses: bool = False,
               max_depth: int = DEFAULT_MAX_DEPTH, k: int = 1, include_tests: bool = False) -> list[TracePath]:
    """Up to `k` best paths, direct reach first; empty when no valid path exists. Test code (marked on
    the nodes) is not traversed unless `include_tests`."""
    pick = EdgePicker(g, allowed_kinds(allow_guesses), include_tests)
    to_target = _dijkstra_to(g, targets, pick, max_depth)
    results: list[TracePath] = []
    starts = [(s, to_target.start(s, free=True)) for s in sources if s not in targets]
    direct = [(to_target.cost(st), s, st) for s, st in starts if st is not None]
    for cost, _s, st in sorted(direct):
        results.append(TracePath("direct", None, [], _walk(st, to_target), cost))
    if results and k == 1:
        return results[:1]
    to_source = _dijkstra_to(g, sources, pick, max_depth)
    candidates: list[TracePath] = []
    for anchor in set(to_source) & set(to_target):
        if anchor in sources or anchor in targets:
            continue
        candidate = _anchored(g, anchor, pick, to_source, to_target, max_depth)
        # a path that comes back through its own anchor is that anchor's path twice, not an alternative
        if candidate is not None and anchor not in {s.target for s in candidate.steps}:
            candidates.append(candidate)
    candidates.sort(key=lambda p: (p.cost, len(p.steps), p.anchor))
    results.extend(candidates)
    return results[:k]


def _anchored(g: CallGraph, anchor: str, pick: EdgePicker,
              to_source: Reach, to_target: Reach, max_depth: int) -> TracePath | None:
    """Best (FROM-branch call site, later TO-branch call site) pair in the anchor's own body."""
    outs: list[Step] = []
    for succ in g.successors(anchor):
        if succ in to_source or succ in to_target:
            outs.extend(pick.steps(anchor, succ))
    outs.sort(key=lambda s: s.order)
    # per passer of the FROM-side step: two function-value steps out of the anchor must agree on who
    # entered it (what loadInline passed and what load passed never run in the same activation)
    best_from: dict[str | None, tuple[float, Step, State]] = {}
    best_pair: tuple[float, Step, State, Step, State] | None = None
    for s in outs:
        to_state = to_target.start(s.target, anchor)
        to_passer = s.attrs.get("passer")
        if to_state is not None and best_from:
            cost_to = _edge_cost(s.attrs) + to_target.cost(to_state)
            hops = 1 + to_target.hops(to_state)
            for from_passer, (cost_prev, s_prev, state_prev) in best_from.items():
                if from_passer is not None and to_passer is not None and from_passer != to_passer:
                    continue
                if hops <= max_depth and s_prev.order < s.order:
                    total = cost_prev + cost_to
                    if best_pair is None or total < best_pair[0]:
                        best_pair = (total, s_prev, state_prev, s, to_state)
        from_state = to_source.start(s.target, anchor)
        if from_state is not None:
            cost_from = _edge_cost(s.attrs) + to_source.cost(from_state)
            known = best_from.get(to_passer)
            if 1 + to_source.hops(from_state) <= max_depth and (known is None or cost_from < known[0]):
                best_from[to_passer] = (cost_from, s, from_state)
    if best_pair is None:
        return None
    total, s_from, from_state, s_to, to_state = best_pair
    return TracePath("common-caller", anchor, [s_from, *_walk(from_state, to_source)],
                     [s_to, *_walk(to_state, to_target)], total)


def seam_alternatives(g: CallGraph, step: Step, include_tests: bool = True) -> list[str]:
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


def reaching_set(g: CallGraph, endpoints: list[str], *, include_tests: bool = False,
                 max_depth: int = DEFAULT_MAX_DEPTH) -> set[str]:
    """Every node with a call path to one of `endpoints` (guessed edges excluded)."""
    return set(_dijkstra_to(g, endpoints, EdgePicker(g, allowed_kinds(False), include_tests), max_depth).by_node)


def anchor_level(g: CallGraph, nodes: list[str], reach: set[str], levels: int = 2) -> float | None:
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
