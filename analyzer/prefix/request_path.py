"""Where a function stands against the request path of the pinned call graph, for ranking the literals that
hold a request's text.

Three sets, computed once per graph and lookup (a few hundredths of a second on the two real repos):
- the writers of a request part: the functions whose return value *is* that part (the hazard scan's
  [[returns]] sinks, `analyzer/rules/hazards/sinks.toml`) and the functions they call, down to
  `[request_path] writer_depth` calls — their literals are the part's text;
- the request path: every function that reaches a send (a call that posts the model request, found by
  `analyzer.prefix.source_lookup`) through the graph's callers — their literals may be handed to the request;
- message producers: functions every call site of which passes the result to a message call (an error's
  `super(…)`, `console.warn(…)`), so a literal they return is a message, not a prompt piece.

A literal at a file's top level (`const INTRO = "…"`) takes the best place of the functions in its file, and
says so: the index does not record which function reads a constant.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from analyzer.prefix.attribute import ON_PATH_RANK, OTHER_CODE_RANK, rules_table

if TYPE_CHECKING:
    from analyzer.graph.protocol import CallGraph
    from analyzer.prefix.source_lookup import SourceLookup

MODULE = "<module>"

# ranks of a place, best first (the attribution prints the words, never the number)
WRITER, ON_PATH, OFF_PATH, OUTSIDE = 0, ON_PATH_RANK, OTHER_CODE_RANK, 3


@dataclass(frozen=True)
class Place:
    rank: int       # WRITER | ON_PATH | OFF_PATH | OUTSIDE
    why: str        # e.g. "in buildSystemPrompt, which returns the system prompt"


@dataclass
class RequestPath:
    """The graph's request path for one lookup; `place(node, parts)` answers for a literal's function."""

    graph: CallGraph
    sends: set[str]
    lookup: SourceLookup | None = None
    on_path: set[str] = field(default_factory=set)
    writers: dict[str, dict[str, str]] = field(default_factory=dict)  # hazard part → node → the writer it is under
    _by_file: dict[str, list[str]] = field(default_factory=dict)
    _messages: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def build(cls, graph: CallGraph, lookup: SourceLookup) -> RequestPath:
        """The request path of `graph` for the sends `lookup` found in the same pins' facts."""
        from analyzer.hazards.rules import glob_match, load_hazard_rules

        sends = {n for n in lookup.sends() if n in graph}
        rp = cls(graph, sends, lookup, _callers_closure(graph, sends))
        depth = int(rules_table("request_path").get("writer_depth", 4))
        returns = [s for s in load_hazard_rules().sinks if s.kind == "returns"]
        roots: dict[str, list[str]] = {}
        for node, attrs in graph.nodes(data=True):
            if attrs.get("kind") == "external" or attrs.get("test"):
                continue
            name, qual = str(attrs.get("name") or ""), str(attrs.get("qualname") or "")
            rp._by_file.setdefault(node.rsplit(":", 1)[0], []).append(node)
            for sink in returns:
                if glob_match(name, sink.functions) or glob_match(qual, sink.functions):
                    roots.setdefault(sink.part or "", []).append(node)
        for part, nodes in roots.items():
            rp.writers[part] = _callees_within(graph, nodes, depth)
        return rp

    def place(self, node: str, parts: Iterable[str]) -> Place:
        """The place of the function `node` (`repo:path:qualname`) for a divergence in `parts` (the hazard
        rules' part names of the divergence's request part)."""
        parts = list(parts)
        if node.endswith(":" + MODULE):
            return self._module_place(node, parts)
        if node not in self.graph:
            return Place(OUTSIDE, "not a function of the call graph")
        name = _name(node)
        for part in parts:
            root = self.writers.get(part, {}).get(node)
            if root is not None:
                how = f"returns the {part}" if root == node else f"is called by {_name(root)}, which returns the {part}"
                return Place(WRITER, f"in {name}, which {how}")
        if node in self.on_path:
            return Place(ON_PATH, f"in {name}, on the request path (the call graph leads from it to a send)")
        return Place(OFF_PATH, f"in {name}, which the call graph does not connect to a send of the request")

    def message_producer(self, node: str) -> str | None:
        """The message call every caller hands `node`'s result to (e.g. `super` of an Error), if one does."""
        if node in self._messages:
            return self._messages[node]
        found: str | None = None
        lookup = self.lookup
        if lookup is not None and node in self.graph:
            calls = []
            for caller, _target, attrs in self.graph.in_edges(node, data=True):
                repo, path, _qual = caller.split(":", 2)
                line = attrs.get("line")
                calls.append(lookup.message_call_at(repo, path, line) if isinstance(line, int) else None)
            if calls and all(calls):
                found = calls[0]
        self._messages[node] = found
        return found

    def _module_place(self, node: str, parts: list[str]) -> Place:
        in_file = [self.place(n, parts) for n in self._by_file.get(node.rsplit(":", 1)[0], [])
                   if not n.endswith(":" + MODULE)]
        if not in_file:
            return Place(OUTSIDE, "at the top level of a file without functions in the call graph")
        best = min(in_file, key=lambda p: p.rank)
        return Place(best.rank, f"at the top level of a file whose function is {best.why.removeprefix('in ')}")


def _name(node: str) -> str:
    return node.rsplit(":", 1)[-1]


def _callers_closure(graph: CallGraph, start: set[str]) -> set[str]:
    seen, todo = set(start), list(start)
    while todo:
        for p in graph.predecessors(todo.pop()):
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return seen


def _callees_within(graph: CallGraph, roots: list[str], depth: int) -> dict[str, str]:
    """node → the root it was reached from (breadth first: the nearest root), at most `depth` calls down."""
    under: dict[str, str] = {r: r for r in roots}
    queue = deque((r, 0) for r in roots)
    while queue:
        node, d = queue.popleft()
        if d >= depth:
            continue
        for s in graph.successors(node):
            if s not in under and not graph.nodes[s].get("test") and graph.nodes[s].get("kind") != "external":
                under[s] = under[node]
                queue.append((s, d + 1))
    return under
