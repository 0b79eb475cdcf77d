"""Inter-procedural driver: which functions to read, summaries on demand along call-graph edges.

Roots are the functions holding a source expression (candidate lines read from the index's facts, see
`analyzer.hazards.candidates`, so only those files are parsed). Each root's summary composes its callees' summaries
(edges at the call's line and column, the same edges `trace` uses, bounded depth); a root whose return
value carries a volatile value pulls its callers in (bounded too). Every flow that meets a sink in any
summary is a finding; flows neutralised or dismissed on the way are near-misses.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from analyzer.hazards.candidates import Candidates, Site
from analyzer.hazards.flow import FunctionFlow, FunctionInfo
from analyzer.hazards.localnames import shadowing_locals
from analyzer.hazards.records import RecordStore
from analyzer.hazards.recordwriters import RecordWriters, Writer
from analyzer.hazards.rules import HazardRules, glob_match
from analyzer.hazards.seams import Params, Seams
from analyzer.hazards.sessionlog import Replays, find_replays, load_replay_rule
from analyzer.hazards.syntax import ParsedFile, SourceFiles
from analyzer.hazards.taints import Flow, Hit, Step, Summary, Taints, compose_through, norm, stepped, union

FUNCTION_KINDS = frozenset({"function", "method", "object_method", "getter", "setter", "constructor"})
FOLLOWED_KINDS = frozenset({"direct", "method", "interface", "dispatch"})
DEFAULT_MAX_DEPTH = 6
DEFAULT_CALLER_DEPTH = 3
_EMPTY = Summary()


@dataclass
class EngineResult:
    sinks: list[Hit] = field(default_factory=list)
    misses: list[Hit] = field(default_factory=list)
    roots: int = 0
    functions: int = 0
    truncated: int = 0
    unmapped: list[str] = field(default_factory=list)  # graph nodes whose body could not be found
    # (repo, path, line) of a source that reads a stored record's field → that field's writers (recordwriters.py)
    writers: dict[tuple[str, str, int], tuple[str, list[Writer]]] = field(default_factory=dict)  # (Record.field, …)
    replays: Replays = field(default_factory=Replays)  # appends to a session log and its replay (replay.py)


class Engine:
    """Implements `FlowContext` for `FunctionFlow` over one graph at one pin set."""

    def __init__(self, graph: nx.MultiDiGraph, files: SourceFiles, rules: HazardRules, candidates: Candidates, *,
                 max_depth: int = DEFAULT_MAX_DEPTH, caller_depth: int = DEFAULT_CALLER_DEPTH,
                 allow_guesses: bool = False, include_tests: bool = False) -> None:
        self.g, self.files, self.rules, self.candidates = graph, files, rules, candidates
        self.max_depth, self.caller_depth = max_depth, caller_depth
        self.kinds = FOLLOWED_KINDS | ({"name"} if allow_guesses else set())
        self.include_tests = include_tests
        self.summaries: dict[str, Summary] = {}
        self._busy: set[str] = set()
        self._fields: dict[tuple[str, str], Taints] = {}
        self._field_busy: set[tuple[str, str]] = set()
        self._nested_fields = 0  # field reads on the stack whose writers were read at the depth bound
        self._modules: dict[tuple[str, str], dict[str, Taints]] = {}
        self._by_file: dict[tuple[str, str], list[tuple[int, int, str]]] | None = None
        self._children: dict[str, list[str]] | None = None
        self._container_fields: dict[str, str] = {}
        self.unmapped: list[str] = []
        self.region: set[str] = set()
        self._edges: dict[str, dict[int, list[tuple[str, dict[str, Any]]]]] = {}
        self.request_side: set[str] = set()  # functions reaching a sink, and their direct callees
        self.may_return_source: set[str] | None = None  # None: unknown (compose every call)
        self._source_lines: dict[tuple[str, str], list[int]] = {}  # (repo, path) → sorted candidate lines
        # Fields set from constructor arguments at the construction sites seen (`new C({ cwd })` with
        # `this.cwd = config.cwd`): (class, field) → flows with source origins. Summaries that read a
        # field are recorded in `_deps`, so a field that gains flows re-runs only them (see `run`).
        self._constructed: dict[tuple[str, str], Taints] = {}
        self._stack: list[str] = []
        self._deps: dict[str, set[tuple[str, str]]] = {}
        self._merged: dict[tuple[str, str], int] = {}  # (into, from) → size of from's deps when merged
        self._made_at: dict[str, int] = {}  # the depth each summary was made at
        self.seams = Seams(self)  # how each edge's arguments reach the parameters of what it runs
        self.records = RecordStore(graph, files, rules)  # flows written into typed record fields
        self._shadowing: set[str] | None = None  # local functions a rule's name does not mean (localnames.py)

    # ---- FlowContext -------------------------------------------------------------------------------
    def qualname(self, node: str) -> str:
        return self.g.nodes[node].get("qualname", node) if node in self.g else node

    def callees(self, node: str, line: int, column: int, callee: str) -> list[tuple[str, dict[str, Any]]]:
        if node not in self.g:
            return []
        by_line = self._edges.get(node)
        if by_line is None:
            by_line = self._edges[node] = {}
            for _, v, d in self.g.out_edges(node, data=True):
                if d.get("kind") in self.kinds:
                    by_line.setdefault(d.get("line"), []).append((v, d))
        at_line = by_line.get(line, [])
        if not at_line:
            inner = self._nested_at(node, line)
            return self.callees(inner, line, column, callee) if inner is not None else []
        exact = [(v, d) for v, d in at_line if d.get("column") == column
                 and (not d.get("call_text") or norm(d["call_text"]) == callee)]
        if not exact:
            exact = [(v, d) for v, d in at_line if d.get("call_text") and norm(d["call_text"]) == callee]
        out = []
        for v, d in exact:
            a = self.g.nodes[v]
            if a.get("kind") not in FUNCTION_KINDS or (a.get("test") and not self.include_tests):
                continue
            out.append((v, d))
        if not out:  # the line's edges are others' (`section({ text: () => f(x) })`): a closure's own edges
            inner = self._nested_at(node, line)
            return self.callees(inner, line, column, callee) if inner is not None else []
        return out

    def through_edge(self, target: str, attrs: dict[str, Any], callee: str, pf: ParsedFile, args: list[Any],
                     arg_t: list[Taints], elements: dict[int, list[Taints]],
                     depth: int) -> list[tuple[Summary | None, Params, str]]:
        return self.seams.through(target, attrs, callee, pf, args, arg_t, elements, depth)

    def forwarded(self, node: str, class_node: str | None, pf: ParsedFile, call: Any, callee: str,
                  args: list[Any]) -> list[tuple[str, dict[str, Any]]]:
        return self.seams.forwarded(node, class_node, pf, call, callee, args)

    def provider_returns(self, node: str, class_node: str | None, pf: ParsedFile, value: Any, depth: int) -> Taints:
        return self.seams.provider_returns(class_node, pf, value, depth)

    def listener_arg(self, node: str, pf: ParsedFile, call: Any) -> int | None:
        return self.seams.listener_arg(node, pf, call)

    def _nested_at(self, node: str, line: int) -> str | None:
        """A function value inside `node`'s body (`text: () => render(x)`) that the graph holds as its own
        node: the calls on that line are its edges, while the body is walked as part of `node`."""
        a = self.g.nodes[node]
        inner = self.innermost(a["repo"], a["path"], line)
        if inner is None or inner == node:
            return None
        b = self.g.nodes[inner]
        return inner if a["line"] <= b["line"] and b["end_line"] <= a["end_line"] else None

    def needed(self, node: str, tainted: bool) -> bool:
        """Whether composing this callee can change anything at a call site."""
        return tainted or self.may_return_source is None or node in self.may_return_source

    def summary(self, node: str, depth: int) -> Summary | None:
        cached = self.summaries.get(node)
        # a summary first made deep inside another chain was cut by the depth bound: made again when it is
        # needed nearer the top (at most once per depth level), so what a function returns does not depend on
        # the order the roots were visited
        if cached is not None and (not cached.truncated or depth >= self._made_at.get(node, 0)
                                   or node in self._busy):
            self._inherit(node)
            return cached
        if depth > self.max_depth:
            return None
        if node in self._busy or node not in self.g:
            return Summary()  # recursion: what is known so far (nothing)
        a = self.g.nodes[node]
        if a.get("kind") not in FUNCTION_KINDS or (a.get("test") and not self.include_tests):
            return Summary()
        pf = self.files.get(a["repo"], a["path"])
        fn = pf.function_at(a["line"], a["end_line"]) if pf is not None else None
        if pf is None or fn is None:
            self.unmapped.append(node)
            self.summaries[node] = Summary(unmapped=True)
            return self.summaries[node]
        self._busy.add(node)
        self._stack.append(node)
        try:
            parent = a.get("parent")
            class_node = parent if parent and self.g.nodes.get(parent, {}).get("kind") == "class" else None
            info = FunctionInfo(node, a.get("name", ""), a.get("qualname", ""), class_node,
                                a.get("kind") == "constructor", node not in self.shadowing())
            flow = FunctionFlow(self, pf, fn, info, depth, module_names=self._module_names(pf))
            result = flow.run()
        finally:
            self._busy.discard(node)
            self._stack.pop()
        self.summaries[node] = result
        self._made_at[node] = depth
        self._inherit(node)
        return result

    def _inherit(self, node: str) -> None:
        """The functions being summarised used `node`'s summary: they read what it read."""
        deps = self._deps.get(node)
        if deps:
            size = len(deps)
            for n in self._stack:
                # dependency sets only grow: one of the same size already merged into n is merged still
                if self._merged.get((n, node)) != size:
                    self._deps.setdefault(n, set()).update(deps)
                    self._merged[(n, node)] = size

    def constructed(self, edges: list[tuple[str, dict[str, Any]]], arg_t: list[Taints], call: Step) -> None:
        """`new C(args)`: every field C's constructor sets from a parameter now carries that argument's
        volatile values, fixed for the object's lifetime (the [[fixed]] constructor scope)."""
        fixed = self.rules.scoped("constructor")
        for target, attrs in edges:
            a = self.g.nodes[target]
            summ = self.summaries.get(target)
            parent = a.get("parent")
            if a.get("kind") != "constructor" or summ is None or not parent:
                continue
            for name, flows in summ.fields.items():
                got: Taints = {}
                for origin, inner in flows.items():
                    if origin.kind != "param" or origin.index >= len(arg_t):
                        continue
                    step = Step(call.repo, call.path, call.line,
                                f"argument {origin.index + 1} of {call.why} → {self.qualname(target)} (constructor)")
                    for flow in arg_t[origin.index].values():
                        composed = compose_through(flow, inner, step, bool(attrs.get("possible")))
                        if flow.origin.kind == "source" and composed is not None:
                            got[flow.origin] = composed
                if got:
                    key = (parent, name)
                    marked = _neutralised(got, fixed.name) if fixed is not None else got
                    self._constructed[key] = union(self._constructed.get(key, {}), marked)

    def depend(self, key: tuple[str, str]) -> None:
        """The summaries being made read `key` (a record field): re-run them when it gains flows."""
        for n in self._stack:
            self._deps.setdefault(n, set()).add(key)

    def field_flows(self, class_node: str, name: str, depth: int) -> Taints:
        key = (class_node, name)
        for n in self._stack:
            self._deps.setdefault(n, set()).add(key)
        if key in self._fields:
            return self._fields[key]
        if key in self._field_busy:
            return {}
        self._field_busy.add(key)
        # the writers of a field do not sit below its reader: a reader at the depth bound still reads them
        # (at the bound), unless field reads already nest there
        at_bound = depth >= self.max_depth and self._nested_fields < 2
        start = self.max_depth if at_bound else depth + 1
        self._nested_fields += at_bound
        try:
            out: Taints = {}
            fixed = self.rules.scoped("constructor")
            for member in self._members(class_node):
                summ = self.summary(member, start)
                if summ is None:
                    continue
                flows = {o: f for o, f in summ.fields.get(name, {}).items() if o.kind == "source"}
                if fixed is not None and self.g.nodes[member].get("kind") == "constructor":
                    flows = _neutralised(flows, fixed.name)
                out = union(out, flows)
            out = union(out, self._field_initialiser(class_node, name, depth), self._constructed.get(key, {}))
        finally:
            self._nested_fields -= at_bound
            self._field_busy.discard(key)
        self._fields[key] = out
        return out

    def is_container_field(self, class_node: str, name: str) -> bool:
        text = self._class_text(class_node)
        containers = "|".join(sorted({c for s in self.rules.sources for c in s.containers})) or "$^"
        pattern = (rf"(?:\b{re.escape(name)}\s*(?::[^=;\n]*\b(?:{containers})\s*<|[!?]?\s*=\s*new\s+(?:{containers})\b)"
                   rf"|this\.{re.escape(name)}\s*=\s*new\s+(?:{containers})\b)")
        # filled by registration (`this.f.set(…)` somewhere in the class), not only built whole from an
        # ordered input (`this.f = new Map(entries)` takes the input's order, which flows on its own)
        filled = rf"this\.{re.escape(name)}\s*\.\s*(?:{self.rules.fill_pattern})\s*\("
        return bool(re.search(pattern, text)) and bool(re.search(filled, text))

    # ---- driving -----------------------------------------------------------------------------------
    def run(self, repos: list[str]) -> EngineResult:
        roots = self._roots(repos)
        result = EngineResult(roots=len(roots))
        self._drive(roots)
        # Fields that construction sites filled: re-run the summaries that read them (and the class's
        # members on the request side, which may read them without having been visited) until no field
        # gains a flow (at most twice: a construction site found only on a re-run fills a field too).
        before: dict[tuple[str, str], frozenset[Any]] = {}
        for _ in range(3):
            now = {k: frozenset(v) for k, v in (*self._constructed.items(), *self.records.values.items())}
            built = {k for k, v in now.items() if v != before.get(k)}
            grown = self._grown_fields() - built
            changed = built | grown
            if not changed:
                break
            before = now
            stale = {n for n, deps in self._deps.items() if deps & changed}
            for key in changed:
                self._fields.pop(key, None)
            for key in built:
                stale.update(m for m in self._members(key[0]) if m in self.region)
            for key in grown:  # the writers already hold the value: only its readers run again
                stale.difference_update(m for m in self._members(key[0])
                                        if key[1] in self.summaries.get(m, _EMPTY).fields)
            for n in stale:
                self.summaries.pop(n, None)
            # the first pass's roots first, so a summary is recomputed at the depth it had (a summary
            # first reached deep in a chain is cut by the depth bound), then the class members
            self._drive(roots, stale - roots)
        for summ in self.summaries.values():
            result.sinks.extend(h for h in summ.sinks if h.flow.origin.kind == "source")
            result.misses.extend(h for h in summ.misses if h.flow.origin.kind == "source")
            result.truncated += int(summ.truncated)
        result.functions = len(self.summaries)
        result.unmapped = sorted(set(self.unmapped))
        result.writers = self._record_writers(result.sinks)
        result.replays = find_replays(self, result.misses, load_replay_rule(),
                                      lambda f: effective_neutraliser(self.rules, f) is None)
        result.sinks.extend(result.replays.rerendered)
        return result

    def _record_writers(self, hits: list[Hit]) -> dict[tuple[str, str, int], tuple[str, list[Writer]]]:
        """For each source that reads a field of a stored record (`….session.header.cwd`), every place that
        writes that field: the entry points that set the value (recordwriters.py)."""
        if not self.rules.records:
            return {}
        objects = {r: self.candidates.typed_objects(r) for r in self.candidates.files}
        assigns = {r: self.candidates.field_assignments(r) for r in self.candidates.files}
        writers = RecordWriters(self, self.records, objects, assigns)
        out: dict[tuple[str, str, int], tuple[str, list[Writer]]] = {}
        for o in {h.flow.origin for h in hits}:
            chain = o.text.replace("?.", ".").replace("!", "").split(".")
            if not all(re.fullmatch(r"[A-Za-z_$][\w$]*", c) for c in chain):
                continue  # a call, an element: not a field read
            field_of = writers.field_of_chain(o.repo, chain)
            found = writers.of(*field_of) if field_of is not None else []
            if found and field_of is not None:
                record = f"{self.g.nodes[field_of[0]].get('name', '')}.{field_of[1]}"
                out[(o.repo, o.path, o.line)] = (record, found)
        return out

    def _grown_fields(self) -> set[tuple[str, str]]:
        """Fields a method writes (`reload() { this.files = load(this.root) }`) whose value was read while
        that method was still being summarised (a cycle through the field): the members' summaries now
        hold more than the reader saw."""
        grown = set()
        for key, seen in self._fields.items():
            class_node, name = key
            for member in self._members(class_node):
                summ = self.summaries.get(member)
                if summ is not None and any(o.kind == "source" and o not in seen
                                            for o in summ.fields.get(name, {})):
                    grown.add(key)
                    break
        return grown

    def _drive(self, roots: set[str], then: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        """Summarise the roots (then `then`), and the callers of those whose return value carries a
        volatile value."""
        frontier = [(r, 0) for r in (*sorted(roots), *sorted(then))]
        seen = set(roots) | set(then)
        while frontier:
            node, level = frontier.pop(0)
            summ = self.summary(node, 0)
            if summ is None or level >= self.caller_depth:
                continue
            # a volatile return value pulls the callers in; an inline listener's pulls its emitters
            if any(o.kind == "source" for o in summ.returns) or self.seams.listener_returns_source(node):
                # …and the functions of its file that hand it on by name (a provider registered as a value)
                named = [(r, node, {"kind": "direct"}) for r in self.seams.referencers(node)]
                for caller, _, d in [*self.g.in_edges(node, data=True), *named]:
                    a = self.g.nodes[caller]
                    if caller in seen or caller not in self.region or d.get("kind") not in self.kinds \
                            or a.get("kind") not in FUNCTION_KINDS:
                        continue
                    if a.get("test") and not self.include_tests:
                        continue
                    seen.add(caller)
                    frontier.append((caller, level + 1))

    def _roots(self, repos: list[str]) -> set[str]:
        """Functions holding a source expression that stand near a sink: a source reaches a sink by going
        up through return values (to callers) and then down through arguments, so only functions below
        an ancestor of a sink function (within the depth bounds) can matter."""
        sources = set()
        for repo in repos:
            sites = self.candidates.sources(repo)
            for path, line in sites:
                self._source_lines.setdefault((repo, path), []).append(line)
            sources |= self._site_nodes(repo, sites)
            sources |= self._site_nodes(repo, self.candidates.control_calls(repo))  # volatile tests (control.py)
        for lines in self._source_lines.values():
            lines.sort()
        sinks = self._sink_functions(repos)
        self.region = self._region(sinks)
        # a provider handed on by name (`variable('now', renderNow)`) runs wherever the function that names
        # it registers it: it belongs to the region of that function
        self.region |= {s for s in sources - self.region if any(r in self.region for r in self.seams.referencers(s))}
        # a call whose arguments carry nothing matters only if its callee can return a volatile value
        reach = self._walk(sources, self.max_depth, backwards=True)
        # a method may return what another method of its class stored (`reload()` fills `this.files`,
        # `getFiles()` hands it out): the members of a class one of whose members can see a source
        classes = {self.g.nodes[n].get("parent") for n in reach} - {None}
        members = {m for c in classes if self.g.nodes.get(c, {}).get("kind") == "class" for m in self._members(c)}
        self.may_return_source = reach | self._walk(members - reach, self.max_depth, backwards=True)
        roots = sources & self.region
        if self.rules.records:  # typed records (records.py): written anywhere, read at the request side
            roots |= (sinks & self.region) | self.records.writers(sources - self.region, self.rules)
        return roots

    def _site_nodes(self, repo: str, sites: list[Site]) -> set[str]:
        found: set[str] = set()
        module_level: set[str] = set()
        for path, line in sites:
            node = self.innermost(repo, path, line)
            if node is not None:
                found.add(node)
            else:
                module_level.add(path)
        # a module-level constant (`const ROOT = fileURLToPath(import.meta.url)`) is read by the
        # functions of its file: they hold the value as if they computed it
        for path in sorted(module_level):
            found.update(n for _, _, n in self._file_functions(repo, path))
        return found

    def shadowing(self) -> set[str]:
        """Local functions that only share their name with the function a sink rule names (localnames.py)."""
        if self._shadowing is None:
            functions = [n for n, a in self.g.nodes(data=True) if a.get("kind") in FUNCTION_KINDS
                         and (self.include_tests or not a.get("test"))]
            self._shadowing = shadowing_locals(self.g, self.rules, functions, self.candidates.exported_names())
        return self._shadowing

    def _sink_functions(self, repos: list[str]) -> set[str]:
        # a property sink allowed in every function (`in_functions = ["*"]`) names no sink function of its own
        named = [s for s in self.rules.sinks if s.kind in ("returns", "property") and "*" not in s.functions]
        out = set()
        shadowing = self.shadowing()
        for n, a in self.g.nodes(data=True):
            if a.get("kind") in FUNCTION_KINDS and (self.include_tests or not a.get("test")) and n not in shadowing:
                if any(glob_match(a.get("name", ""), s.functions) or glob_match(a.get("qualname", ""), s.functions)
                       for s in named):
                    out.add(n)
        for repo in repos:
            out |= self._site_nodes(repo, self.candidates.sinks(repo))
        return out

    def _holds_source(self, repo: str, path: str, first: int, last: int) -> bool:
        """A source candidate of the file lies on lines first..last."""
        lines = self._source_lines.get((repo, path), [])
        at = bisect_left(lines, first)
        return at < len(lines) and lines[at] <= last

    def _region(self, sinks: set[str]) -> set[str]:
        up = self._walk(sinks, self.max_depth, backwards=True)
        self.request_side = self._walk(up, 1, backwards=False)
        return self._walk(up, self.caller_depth, backwards=False)

    def _walk(self, start: set[str], depth: int, backwards: bool) -> set[str]:
        seen = set(start)
        frontier = list(start)
        seams = self.seams.links(backwards)  # registry seams the graph has no edge for
        for _ in range(depth):
            nxt = []
            for node in frontier:
                edges = self.g.in_edges(node, data=True) if backwards else self.g.out_edges(node, data=True)
                linked = [(other, {"kind": "dispatch"}) for other in sorted(seams.get(node, ()))]
                for other, d in [((u if backwards else v), d) for u, v, d in edges] + linked:
                    a = self.g.nodes[other]
                    if other in seen or d.get("kind") not in self.kinds or a.get("kind") not in FUNCTION_KINDS:
                        continue
                    if a.get("test") and not self.include_tests:
                        continue
                    seen.add(other)
                    nxt.append(other)
            frontier = nxt
        return seen

    def _file_functions(self, repo: str, path: str) -> list[tuple[int, int, str]]:
        if self._by_file is None:
            self._by_file = {}
            for n, a in self.g.nodes(data=True):
                if a.get("kind") in FUNCTION_KINDS:
                    self._by_file.setdefault((a["repo"], a["path"]), []).append((a["line"], a["end_line"], n))
        return self._by_file.get((repo, path), [])

    def innermost(self, repo: str, path: str, line: int) -> str | None:
        best = None
        for start, end, n in self._file_functions(repo, path):
            if start <= line <= end and (best is None or start >= best[0]):
                best = (start, end, n)
        return best[2] if best else None

    # ---- helpers -----------------------------------------------------------------------------------
    def _members(self, class_node: str) -> list[str]:
        if self._children is None:
            self._children = {}
            for n, a in self.g.nodes(data=True):
                if a.get("parent") and a.get("kind") in FUNCTION_KINDS:
                    self._children.setdefault(a["parent"], []).append(n)
        return sorted(self._children.get(class_node, []))

    def _class_syntax(self, class_node: str) -> tuple[ParsedFile, Any] | None:
        a = self.g.nodes.get(class_node)
        if not a:
            return None
        pf = self.files.get(a["repo"], a["path"])
        if pf is None:
            return None
        stack = [pf.root]
        while stack:
            n = stack.pop()
            if n.type in ("class_declaration", "abstract_class_declaration", "class") \
                    and n.start_point[0] <= a["line"] - 1 <= n.end_point[0] and n.end_point[0] == a["end_line"] - 1:
                return pf, n
            if n.start_point[0] <= a["line"] - 1 <= n.end_point[0]:
                stack.extend(n.children)
        return None

    def _class_text(self, class_node: str) -> str:
        if class_node not in self._container_fields:
            found = self._class_syntax(class_node)
            self._container_fields[class_node] = found[0].text(found[1]) if found else ""
        return self._container_fields[class_node]

    def _field_initialiser(self, class_node: str, name: str, depth: int) -> Taints:
        """`private readonly startedAt = Date.now()`: evaluated once per object (like the constructor)."""
        found = self._class_syntax(class_node)
        if found is None:
            return {}
        pf, cls = found
        body = cls.child_by_field_name("body")
        fixed = self.rules.scoped("constructor")
        for member in body.named_children if body is not None else []:
            if member.type != "public_field_definition":
                continue
            key = member.child_by_field_name("name")
            value = member.child_by_field_name("value")
            if key is None or value is None or pf.text(key) != name or value.type in ("arrow_function",
                                                                                      "function_expression"):
                continue
            info = FunctionInfo(class_node, name, f"{self.qualname(class_node)}.{name}", class_node, True)
            flow = FunctionFlow(self, pf, member, info, depth + 1, module_names=self._module_names(pf))
            t = stepped(flow.evaluate(value), flow.step(member, f"initialises field {name}"))
            t = {o: f for o, f in t.items() if o.kind == "source"}
            return _neutralised(t, fixed.name) if fixed is not None else t
        return {}

    def _module_names(self, pf: ParsedFile) -> dict[str, Taints]:
        key = (pf.repo, pf.path)
        if key not in self._modules:
            self._modules[key] = {}  # guard against re-entry while evaluating
            module_node = f"{pf.repo}:{pf.path}:<module>"
            info = FunctionInfo(module_node, "<module>", "<module>", None, False)
            flow = FunctionFlow(self, pf, pf.root, info, self.max_depth)
            fixed = self.rules.scoped("module")
            for stmt in pf.root.named_children:
                decl = stmt.child_by_field_name("declaration") if stmt.type == "export_statement" else stmt
                if decl is None or decl.type not in ("lexical_declaration", "variable_declaration") \
                        or not self._holds_source(pf.repo, pf.path, decl.start_point[0] + 1, decl.end_point[0] + 1):
                    continue
                if decl is not None and decl.type in ("lexical_declaration", "variable_declaration"):
                    for d in decl.named_children:
                        value = d.child_by_field_name("value")
                        if d.type == "variable_declarator" and value is not None \
                                and value.type not in ("arrow_function", "function_expression"):
                            flow.declare(d)
            names = {}
            for name, t in flow.env.items():
                sourced = {o: f for o, f in t.items() if o.kind == "source"}
                if sourced:
                    names[name] = _neutralised(sourced, fixed.name) if fixed is not None else sourced
            self._modules[key] = names
        return self._modules[key]


def _neutralised(t: Taints, rule: str) -> Taints:
    from dataclasses import replace

    return {o: replace(f, neutralisers=(*f.neutralisers, rule)) for o, f in t.items()}


def effective_neutraliser(rules: HazardRules, flow: Flow) -> str | None:
    """The first neutraliser met on the way that applies to this flow's source kind."""
    kind = rules.source(flow.origin.rule).kind
    by_name = {n.name: n for n in rules.neutralisers}
    for name in flow.neutralisers:
        n = by_name.get(name)
        if n is not None and kind in n.applies_to:
            return name
    return None
