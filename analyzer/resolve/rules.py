"""Dispatch rules: declarative descriptions of dynamic seams (`analyzer/rules/*.toml`) applied to facts.

The TOML says *which* shapes count (base classes, verbs, wrappers); this module only knows how to
match each rule kind against `FileFacts`. Every edge names its rule and the line that justified it,
and every rule reports how often it matched, so a re-check can say when a rule stopped matching.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.errors import AnalyzerError
from analyzer.index.model import Call
from analyzer.resolve.calls import CallResolver, node_id_for_scope
from analyzer.resolve.edges import Edge
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import DefRef, Program
from analyzer.resolve.receivers import Types
from analyzer.resolve.symbols import SymbolResolver
from analyzer.resolve.typed import NamedType, TypeExpr
from analyzer.resolve.typetext import named_types

RULE_KINDS = {"service", "event", "lazy_loader", "callback_object", "table", "identity_wrappers", "name_guess",
              "function_value"}


@dataclass
class RuleSet:
    services: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    lazy_loaders: list[dict] = field(default_factory=list)
    callback_objects: list[dict] = field(default_factory=list)
    tables: list[dict] = field(default_factory=list)
    function_values: list[dict] = field(default_factory=list)
    identity_wrappers: set[str] = field(default_factory=set)
    no_guess: set[str] = field(default_factory=set)
    global_receivers: set[str] = field(default_factory=set)
    sources: list[str] = field(default_factory=list)  # rule files read, for provenance
    text_hash: str = ""

    def names(self) -> list[str]:
        groups = (self.services, self.events, self.lazy_loaders, self.callback_objects, self.tables,
                  self.function_values)
        return [r["name"] for g in groups for r in g]


def load_rules(extra_dirs: list[Path] | None = None) -> RuleSet:
    """The shipped rules plus any `*.toml` in `extra_dirs`; a malformed rule file is a one-line error."""
    from analyzer.rules import typescript
    from analyzer.rules.files import read_rule_files

    rs = RuleSet()
    extra = [path for d in extra_dirs or [] for path in sorted(Path(d).glob("*.toml"))]
    # typescript.toml is language knowledge read by analyzer.rules.typescript, not dispatch rules
    files, rs.text_hash = read_rule_files("analyzer.rules", extra, skip=[typescript.FILE])
    for rule_file in files:
        name, data = rule_file.name, rule_file.data
        for kind, entries in data.items():
            if kind not in RULE_KINDS or not isinstance(entries, list):
                raise AnalyzerError(f"{name}: unknown rule kind [[{kind}]]; known: {', '.join(sorted(RULE_KINDS))}")
            for entry in entries:
                if "name" not in entry:
                    raise AnalyzerError(f"{name}: a [[{kind}]] rule has no name; add name = \"…\"")
                if kind == "identity_wrappers":
                    rs.identity_wrappers.update(entry.get("calls", []))
                elif kind == "name_guess":
                    rs.no_guess.update(entry.get("skip_methods", []))
                    rs.global_receivers.update(entry.get("skip_receivers", []))
                else:
                    getattr(rs, {"service": "services", "event": "events", "lazy_loader": "lazy_loaders",
                                 "callback_object": "callback_objects", "table": "tables",
                                 "function_value": "function_values"}[kind]).append(entry)
        rs.sources.append(name)
    return rs


@dataclass
class ServiceInfo:
    name: str
    cls: DefRef
    evidence: str
    rule: str


class DispatchEngine:
    def __init__(self, program: Program, symbols: SymbolResolver, types: Types, calls: CallResolver,
                 rules: RuleSet) -> None:
        self.p = program
        self.symbols = symbols
        self.types = types
        self.calls = calls
        self.rules = rules
        self.matches: dict[str, int] = {name: 0 for name in rules.names()}
        self.services = self._find_services()
        # per service rule, looked up for every call that names a service (not rebuilt per call)
        self._service_rules = {r["name"]: r for r in list(rules.services)[::-1]}  # first rule of a name wins
        self._context_types = {name: set(r.get("context_types", [])) for name, r in self._service_rules.items()}

    # --- services (fallback for untyped receivers) ----------------------------------------------
    def _find_services(self) -> dict[str, list[ServiceInfo]]:
        found: dict[str, list[ServiceInfo]] = defaultdict(list)
        for rule in self.rules.services:
            bases = set(rule.get("base_classes", []))
            for mod, facts in self.p.files.items():
                classes = {d.qualname: d for d in facts.definitions
                           if d.kind == "class" and any(_base_name(t) in bases for t in d.extends)}
                if not classes:
                    continue
                for call in facts.calls:
                    if call.kind != "super" or call.scope is None or len(call.callee) != 1:
                        continue
                    owner = call.scope.rsplit(".", 1)[0]
                    if owner not in classes:
                        continue
                    name = next((a.text for a in call.args if a.kind == "string"), None)
                    if name:
                        found[name].append(ServiceInfo(name, DefRef(mod.repo, mod.path, owner),
                                                       f"{mod.path}:{call.line}: super(…, {name!r}) registers "
                                                       f"{owner} as service {name!r}", rule["name"]))
        return found

    def claim(self, mod: ModuleRef, call: Call) -> list[Edge]:
        """Service calls (`….ctx.llm.m()`) are a dispatch seam even when a module augmentation types them:
        the registration (`super(ctx, 'llm')`) is what binds the name at run time."""
        chain = call.callee
        if len(chain) < 3 or chain[-2] not in self.services:  # asked for every call; nearly none names one
            return []
        return self._service_edges(mod, call, typed_only=True)

    def fallback(self, mod: ModuleRef, call: Call) -> list[Edge]:
        """Edges for a call the type-based resolver could not bind (untyped service receivers)."""
        return self._service_edges(mod, call, typed_only=False)

    def _is_context(self, mod: ModuleRef, call: Call, rule: dict, typed_only: bool) -> bool:
        """Is the receiver before the service name the framework context (by type, or by name when untyped)?"""
        chain = call.callee
        wanted = self._context_types.get(rule["name"])
        if wanted is None:
            wanted = set(rule.get("context_types", []))
        for recv in self.calls.receiver_types(mod, call.scope, chain[:-2], call.line):
            if not wanted.isdisjoint(_type_names(recv)):
                return True
        return not typed_only and chain[-3] in rule.get("context_names", [])

    def _service_edges(self, mod: ModuleRef, call: Call, typed_only: bool) -> list[Edge]:
        chain = call.callee
        if len(chain) < 3 or call.kind != "call":
            return []
        service, method = chain[-2], chain[-1]
        infos = self.services.get(service)
        if not infos:  # nearly every call: no service of that name
            return []
        edges = []
        for info in infos:
            rule = self._service_rules[info.rule]
            if not self._is_context(mod, call, rule, typed_only):
                continue
            for m in self.types.decls.find_member(info.cls, method):
                if m.definition is None:
                    continue
                targets = [(DefRef(m.owner.repo, m.owner.path, m.definition.qualname), info.evidence)]
                if "abstract" in m.definition.modifiers or not m.definition.has_body:
                    # an abstract service (`abstract class SubprocessRuntime extends Service`): the
                    # registered instance is one of its subclasses, each a live target
                    targets = self._subclass_members(m.owner, method, info.evidence)
                for target, why in targets:
                    edges.append(self.calls.make_edge(mod, call, target, "dispatch", [why], rule=info.rule,
                                                  possible=len(infos) > 1 or len(targets) > 1,
                                                  seam=f"service:{service}"))
                    self.matches[info.rule] += 1
        return edges

    def _subclass_members(self, owner: DefRef, method: str, evidence: str) -> list[tuple[DefRef, str]]:
        out = []
        for impl, why in self.types.hierarchy.implementations(owner):
            for child in self.p.children(impl):
                if child.name == method and child.has_body and "abstract" not in child.modifiers:
                    out.append((DefRef(impl.repo, impl.path, child.qualname), f"{evidence}; {why}"))
        return out

    # --- whole-program rules ------------------------------------------------------------------------
    def global_edges(self) -> list[Edge]:
        edges: list[Edge] = []
        for rule in self.rules.events:
            edges.extend(self._event_edges(rule))
        for rule in self.rules.lazy_loaders:
            edges.extend(self._lazy_edges(rule))
        for rule in self.rules.callback_objects:
            edges.extend(self._callback_object_edges(rule))
        for rule in self.rules.tables:
            edges.extend(self._table_edges(rule))
        return edges

    def _event_edges(self, rule: dict) -> list[Edge]:
        pattern = re.compile(rule.get("name_pattern", r".+"))
        emit, listen = set(rule.get("emit_methods", [])), set(rule.get("listen_methods", []))
        emitters: list[tuple[ModuleRef, Call, str]] = []
        listeners: dict[str, list[tuple[DefRef, str]]] = defaultdict(list)
        for mod, facts in self.p.files.items():
            for call in facts.calls:
                if len(call.callee) < 2 or call.callee[-1] not in emit | listen:
                    continue
                idx, event = next(((i, a.text) for i, a in enumerate(call.args) if a.kind == "string"), (-1, None))
                if event is None or not pattern.match(event):
                    continue
                if call.callee[-1] in emit:
                    emitters.append((mod, call, event))
                    continue
                handler = next((a for a in call.args[idx + 1:] if a.kind in ("function", "identifier", "member")),
                               None)
                if handler is None:
                    continue
                where = f"{mod.path}:{call.line}: {'.'.join(call.callee)}({event!r}, …)"
                target: DefRef | None = None
                if handler.kind == "identifier":
                    sym = self.symbols.resolve_name(mod, handler.text)
                    if sym is not None and sym.definition is not None:
                        target = sym.definition
                elif handler.kind == "member" and handler.text.startswith("this.") and call.scope:
                    cls = self.p.enclosing_class(DefRef(mod.repo, mod.path, call.scope))
                    if cls is not None:
                        found = self.types.decls.find_member(cls, handler.text.split(".")[-1])
                        if found and found[0].definition is not None:
                            target = DefRef(found[0].owner.repo, found[0].owner.path, found[0].definition.qualname)
                if target is None and call.scope is not None:
                    target = DefRef(mod.repo, mod.path, call.scope)
                    where += " (inline handler; its calls belong to this function)"
                if target is not None:
                    listeners[event].append((target, where))
        edges = []
        for mod, call, event in emitters:
            targets = listeners.get(event, [])
            for target, where in targets:
                edges.append(self.calls.make_edge(mod, call, target, "dispatch", [where], rule=rule["name"],
                                              possible=len(targets) > 1, seam=f"event:{event}"))
            self.matches[rule["name"]] += len(targets)
        return edges

    def _lazy_edges(self, rule: dict) -> list[Edge]:
        """`F(() => import('m'))` call sites, then member calls on the loaded value inside F."""
        loaders: dict[DefRef, list[tuple[ModuleRef, str]]] = defaultdict(list)
        for mod, facts in self.p.files.items():
            for call in facts.calls:
                specs = [s for a in call.args if a.kind == "function" for s in a.dynamic_imports]
                if not specs:
                    continue
                edges, _, _ = self.calls.resolve_call(mod, call)
                for e in edges:
                    if e.kind != "direct":
                        continue
                    repo, path, qual = e.target.split(":", 2)
                    for spec in specs:
                        res = self.p.resolver.resolve(mod.repo, mod.path, spec)
                        if res.module is not None:
                            loaders[DefRef(repo, path, qual)].append(
                                (res.module, f"{mod.path}:{call.line}: {call.text or call.callee[0]}(() => "
                                             f"import({spec!r}))"))
        out = []
        for loader, modules in loaders.items():
            d = self.p.defs.get(loader)
            if d is None:
                continue
            fn_params = [prm.name for prm in d.params]
            facts = self.p.files[loader.module]
            for call in facts.calls:
                if call.scope is None or not (call.scope == loader.qualname
                                              or call.scope.startswith(loader.qualname + ".")):
                    continue
                if len(call.callee) < 2 or not _calls_param(call, fn_params):
                    continue
                method = call.callee[-1]
                targets = []
                for module, where in modules:
                    sym = self.symbols.resolve_export(module, method)
                    if sym is not None and sym.definition is not None:
                        targets.append((sym.definition, where))
                for target, where in targets:
                    out.append(self.calls.make_edge(loader.module, call, target, "dispatch",
                                                [where, f"{loader.path}:{d.line}: {d.name} loads the module lazily"],
                                                rule=rule["name"], possible=len(targets) > 1,
                                                seam=f"lazy:{loader.node_id}:{method}"))
                self.matches[rule["name"]] += len(targets)
        return out

    def _callback_object_edges(self, rule: dict) -> list[Edge]:
        out = []
        for mod, facts in self.p.files.items():
            for call in facts.calls:
                if (call.text or ".".join(call.callee)) in self.rules.identity_wrappers:
                    continue  # `Promise.resolve({ run })` returns the object; it does not invoke `run`
                for arg in call.args:
                    if arg.kind != "object" or not arg.object_id:
                        continue
                    obj = self.p.object_literal(mod, arg.object_id)
                    if obj is None:
                        continue
                    for prop in obj.properties:
                        if prop.value_kind == "function" and prop.value_def:
                            target = DefRef(mod.repo, mod.path, prop.value_def)
                            out.append(self.calls.make_edge(
                                mod, call, target, "dispatch",
                                [f"{mod.path}:{prop.line}: closure {prop.key!r} passed to "
                                 f"{call.text or '.'.join(call.callee)}(…), which may invoke it"],
                                rule=rule["name"], possible=True))
                            self.matches[rule["name"]] += 1
        return out

    def _table_edges(self, rule: dict) -> list[Edge]:
        """`const x = T[k]; x()` or `T[k]()` where T is an object literal of functions."""
        out = []
        for mod, facts in self.p.files.items():
            tables = {o.holder.split(":", 1)[1]: o for o in facts.objects if o.holder.startswith("variable:")}
            if not tables:
                continue
            looked_up = {(b.scope, b.name): b.init_chain[0] for b in facts.bindings
                         if b.init_chain and len(b.init_chain) == 2 and b.init_chain[1].startswith("[")}
            for call in facts.calls:
                table_name = None
                if len(call.callee) == 2 and call.callee[1].startswith("["):
                    table_name = call.callee[0]
                elif len(call.callee) == 1:
                    table_name = looked_up.get((call.scope, call.callee[0]))
                if table_name is None:
                    continue
                obj = tables.get(table_name)
                targets = []
                if obj is not None:
                    for prop in obj.properties:
                        target = None
                        if prop.value_def:
                            target = DefRef(mod.repo, mod.path, prop.value_def)
                        elif prop.value_kind == "identifier":
                            sym = self.symbols.resolve_name(mod, prop.value_text)
                            target = sym.definition if sym is not None else None
                        if target is not None:
                            targets.append((target, f"{mod.path}:{prop.line}: {table_name}[{prop.key!r}]"))
                for target, where in targets:
                    out.append(self.calls.make_edge(mod, call, target, "dispatch", [where], rule=rule["name"],
                                                possible=len(targets) > 1, seam=f"table:{mod.path}:{table_name}"))
                self.matches[rule["name"]] += len(targets)
        return out


def _type_names(recv: object) -> list[str]:
    """Bare names of a receiver's type (for context_types matching)."""
    if isinstance(recv, TypeExpr):
        return [n.split(".")[-1] for n in named_types(recv.text)]
    if isinstance(recv, NamedType):
        return [recv.ref.qualname.split(".")[-1]]
    return []


def _base_name(type_text: str) -> str:
    return type_text.split("<", 1)[0].strip().split(".")[-1]


def _calls_param(call: Call, params: list[str]) -> bool:
    """A member call whose receiver is produced by calling one of the loader's parameters."""
    text = call.text or ""
    root = call.callee[0]
    return any(root == f"{p}()" or f"{p}()" in text for p in params)


__all__ = ["DispatchEngine", "RuleSet", "load_rules", "node_id_for_scope"]
