"""Where function values are written, passed and held: the indexes of the program that the function-value
pass (`analyzer.resolve.functionvalues`) builds once, and the lookups over them that follow no value themselves —
the enclosing function that owns a parameter, the object literal held by a name, the closures a scope
passes, JSX props, event listeners, store actions and injected faces, the types declaring a field.

Kept apart from the pass so that each module stays one concern: this part answers "what is there",
`FunctionValues` answers "what may arrive". It owns every memo table of the pass (`index` fills the
per-call indexes first; `FunctionValues.edges` then follows values).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from analyzer.index.model import Arg, Assignment, Binding, Call, Definition, ObjectLiteral
from analyzer.resolve.calls import CallResolver, node_id_for_scope
from analyzer.resolve.edges import Edge
from analyzer.resolve.functypes import FunctionTypes
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import CALLABLE_KINDS, DefRef, Program
from analyzer.resolve.receivers import Types
from analyzer.resolve.registries import Registration, Registries, RegistryRule
from analyzer.resolve.stored import StoredValues
from analyzer.resolve.symbols import SymbolResolver
from analyzer.resolve.typed import NamedType, TypeExpr
from analyzer.resolve.typetext import arrow_parameters, object_pattern_names
from analyzer.resolve.valueflow import Value

MAX_FORWARDS = 3
INLINE = "an inline closure: its calls belong to this function"
CALL_KINDS = ("direct", "method", "interface")  # edges that are real calls with these arguments


class ValueSites:
    """The program's value sites, indexed; the lookups over them."""

    def __init__(self, program: Program, symbols: SymbolResolver, types: Types, calls: CallResolver,
                 rule: dict, events: list[dict] | None = None, call_rules: set[str] | None = None) -> None:
        self.p = program
        self.symbols = symbols
        self.types = types
        self.calls = calls
        self.rule = rule["name"]
        self.element_factories = set(rule.get("element_factories", []))
        self.function_wrappers = set(rule.get("function_wrappers", []))
        self.closure_holders = set(rule.get("closure_holders", []))  # `Object.assign(closure, meta)` is the closure
        self.events = [e for e in events or [] if e.get("next_methods")]
        # dispatch rules whose edges are real calls with the call site's arguments (service injection)
        self.call_rules = call_rules or set()
        self._next_given: dict[str, list[tuple[ModuleRef, Call]]] = defaultdict(list)  # event → emitter calls
        self._listener_of: dict[str, set[str]] = defaultdict(set)  # named handler → events it listens to
        self._out_at: dict[tuple[str, str, int, int], list[str]] = defaultdict(list)
        self._call_at: dict[tuple[str, str, int, int], tuple[ModuleRef, Call]] = {}
        self._into: dict[str, list[Edge]] = defaultdict(list)
        self._assigned: dict[str, list[tuple[ModuleRef, Assignment]]] = defaultdict(list)
        self._param_cache: dict[tuple[DefRef, int, str | None, int], list[Value]] = {}
        self._held: dict[ModuleRef, dict[str, list[ObjectLiteral]]] = {}
        self._owners: dict[tuple[ModuleRef, str | None, tuple[str, ...], int, str], set[DefRef]] = {}
        self._jsx: dict[str, list[tuple[ModuleRef, ObjectLiteral]]] = defaultdict(list)  # component → its props
        self.ftypes = FunctionTypes(program, types)
        self._calls_in: dict[tuple[ModuleRef, str | None], list[Call]] = defaultdict(list)
        self._closure_calls: dict[tuple[ModuleRef, str | None], list[Call]] = defaultdict(list)  # with closures
        self._bound: set[tuple[str, str, int, int]] = set()  # call sites that already have an edge
        self._named_args: list[tuple[ModuleRef, Call, int]] = []
        self._passed: dict[str, list[tuple[ModuleRef, Call, int]]] | None = None  # function → calls passing it
        self._under: dict[tuple[ModuleRef, str], list[Call]] = {}
        self._closure_index: dict[tuple[ModuleRef, str | None], dict[str, list[tuple[Call, int, list[str]]]]] = {}
        self.stored = StoredValues()  # collections of function values, `fn.bind(x)`
        self.registries = Registries(program, list(rule.get("registry", [])))
        self._scoped_objects: dict[ModuleRef, dict[str | None, list[ObjectLiteral]]] = {}
        self._option_names: dict[ModuleRef, set[str]] = {}
        self._unpacked: dict[tuple[ModuleRef, str | None, str], tuple[str, ...]] = {}  # body destructuring
        self._ident_args: dict[ModuleRef, dict[str, list[tuple[Call, int]]]] = {}  # name → calls passing it

    def index(self, graph_edges: list[Edge]) -> set[tuple[str, str, int]]:
        """Fill the per-call indexes from the program and from the graph's other edges (what calls what,
        where); the (source, target, line) of every edge already there."""
        for mod, facts in self.p.files.items():
            for call in facts.calls:
                self._call_at[(mod.repo, mod.path, call.line, call.column)] = (mod, call)
                self._calls_in[(mod, call.scope)].append(call)
                if any(a.kind == "function" for a in call.args):
                    self._closure_calls[(mod, call.scope)].append(call)
                for k, a in enumerate(call.args):
                    if a.kind == "identifier" and a.text in self.p.by_name:
                        self._named_args.append((mod, call, k))
                if len(call.args) >= 2 and ".".join(call.callee) in self.element_factories:
                    self._index_element(mod, call)
                if self.registries.wants(call):
                    comp = self.registries.component_arg(call)
                    self.registries.index_call(
                        mod, call, self._named_function(mod, call.scope, comp.text) if comp is not None else None)
            for asg in facts.assignments:
                self._assigned[asg.target[-1]].append((mod, asg))
            self._index_jsx(mod, facts.objects)
        have: set[tuple[str, str, int]] = set()
        bound = self._bound
        for e in graph_edges:
            have.add((e.source, e.target, e.line))
            bound.add((e.repo, e.path, e.line, e.column))
            if e.kind in CALL_KINDS or e.kind == "dispatch" and e.rule in self.call_rules:
                self._into[e.target].append(e)
                self._out_at[(e.repo, e.path, e.line, e.column)].append(e.target)
        self._index_events()
        return have

    def closure_calls(self, mod: ModuleRef, scope: str | None) -> list[Call]:
        """The calls in `scope` that pass an inline closure, in file order (filled by `edges`)."""
        return self._closure_calls.get((mod, scope), [])

    def _index_jsx(self, mod: ModuleRef, objects: list[ObjectLiteral]) -> None:
        """`<Comp onClose={…} />` gives Comp its props: index each element's props by the component."""
        for obj in objects:
            if obj.holder.startswith("jsx:"):
                target = self._named_function(mod, obj.scope, obj.holder[4:])
                if target is not None:
                    self._jsx[target.node_id].append((mod, obj))

    def _event_of(self, call: Call, methods: str) -> tuple[int, str] | None:
        """(index, name) of the event a `listen_methods` / `next_methods` call names, if it is one."""
        for rule in self.events:
            if len(call.callee) >= 2 and call.callee[-1] in rule.get(methods, []):
                for i, a in enumerate(call.args):
                    if a.kind == "string":
                        return (i, a.text) if re.match(rule.get("name_pattern", r".+"), a.text) else None
        return None

    def _index_events(self) -> None:
        """Emitters that hand listeners a `next`, and the named functions registered as listeners."""
        if not self.events:
            return
        methods = {m for rule in self.events for key in ("next_methods", "listen_methods") for m in rule.get(key, [])}
        for mod, facts in self.p.files.items():
            for call in facts.calls:
                if len(call.callee) < 2 or call.callee[-1] not in methods:
                    continue  # `_event_of` is None for both: most calls name no event method
                if (given := self._event_of(call, "next_methods")) is not None and call.args:
                    self._next_given[given[1]].append((mod, call))
                elif (heard := self._event_of(call, "listen_methods")) is not None:
                    handler = call.args[heard[0] + 1] if heard[0] + 1 < len(call.args) else None
                    if handler is not None and handler.kind == "identifier":
                        target = self._named_function(mod, call.scope, handler.text)
                        if target is not None:
                            self._listener_of[target.node_id].add(heard[1])

    def _index_element(self, mod: ModuleRef, call: Call) -> None:
        """`createElement(Comp, { onClose })`: the object literal is Comp's props, as in JSX."""
        comp, props = call.args[0], call.args[1]
        if comp.kind != "identifier" or props.kind != "object" or not props.object_id:
            return
        obj = self.p.object_literal(mod, props.object_id)
        target = self._named_function(mod, call.scope, comp.text)
        if obj is not None and target is not None:
            self._jsx[target.node_id].append((mod, obj))

    def _closure_params(self, mod: ModuleRef, scope: str | None) -> dict[str, list[tuple[Call, int, list[str]]]]:
        """Parameter name → (call, argument index, parameters) of the inline closures handed to calls in `scope`,
        latest call first and, per call, only its first closure with that name: the order in which
        `_closure_param_values` looks for the closure that declares a name (built once per scope, not per
        call)."""
        key = (mod, scope)
        found = self._closure_index.get(key)
        if found is None:
            found = {}
            siblings = sorted(self._closure_calls.get(key, []), key=lambda c: (-c.line, -c.column))
            for outer in siblings:
                for i, arg in enumerate(outer.args):
                    if arg.kind != "function":
                        continue
                    params = arrow_parameters(arg.text)
                    if params[:1] == ["this"]:  # a `this` parameter is a type, not a position
                        params = params[1:]
                    for prm in dict.fromkeys(params):
                        entries = found.setdefault(prm, [])
                        if not entries or entries[-1][0] is not outer:
                            entries.append((outer, i, params))
            self._closure_index[key] = found
        return found

    def declaring_closure(self, mod: ModuleRef, scope: str | None, line: int, name: str, nested: int,
                          skip: Call | None = None) -> tuple[Call, int, list[str]] | None:
        """The inline closure (the call it is handed to, its argument index, its parameters) that declares
        `name` as a parameter around a use at `line`: one handed to a call of `scope` before the line when the
        use is itself in a closure (`nested`), else one of an enclosing scope, around the local function
        the use is in (`const check = () => report(…)` written inside `Object.assign((ctx, report) => …)`).
        None when a nearer definition binds the name otherwise."""
        chain = self.p.scope_chain(mod, scope)
        for k, sc in enumerate(chain):
            if k > 0 or nested:
                for outer, i, params in self._closure_params(mod, sc).get(name, ()):
                    if outer.line <= line and outer is not skip:
                        return outer, i, params
            if sc is not None and any(b.kind != "param" for b in self.p.bindings_named(mod, sc, name)):
                return None  # a local of a nearer definition
        return None

    def holding_variable(self, mod: ModuleRef, outer: Call, index: int) -> str | None:
        """`const install = Object.assign((ctx, report) => …, { needs })`: the variable that holds the closure
        handed to a `closure_holders` call as its first argument (the call returns that closure)."""
        if index != 0 or ".".join(outer.callee) not in self.closure_holders:
            return None
        facts = self.p.files.get(mod)
        for b in facts.bindings if facts else []:
            if b.scope == outer.scope and b.line == outer.line and b.init_callee == outer.callee:
                return b.name
        return None

    def passes_of(self, mod: ModuleRef, name: str, scope: str | None) -> list[tuple[Call, int]]:
        """The calls of `mod` that hand the variable `name` (bound in `scope`) on by name, and where."""
        index = self._ident_args.get(mod)
        if index is None:
            index = self._ident_args[mod] = defaultdict(list)
            facts = self.p.files.get(mod)
            for call in facts.calls if facts else []:
                for k, a in enumerate(call.args):
                    if a.kind == "identifier":
                        index[a.text].append((call, k))
        return [(c, k) for c, k in index.get(name, ()) if scope in self.p.scope_chain(mod, c.scope)]

    def _passed_along(self) -> dict[str, list[tuple[ModuleRef, Call, int]]]:
        """Named functions handed to other functions by name: function → (module, call, argument index)."""
        if self._passed is None:
            self._passed = defaultdict(list)
            for mod, call, k in self._named_args:
                target = self._named_function(mod, call.scope, call.args[k].text)
                if target is not None:
                    self._passed[target.node_id].append((mod, call, k))
        return self._passed

    def _calls_under(self, mod: ModuleRef, qual: str) -> list[Call]:
        """Calls in a definition's body, its local functions' included (they see its parameters)."""
        key = (mod, qual)
        if key not in self._under:
            facts = self.p.files.get(mod)
            self._under[key] = [c for c in (facts.calls if facts else []) if c.scope is not None and
                                (c.scope == qual or c.scope.startswith(qual + "."))]
        return self._under[key]

    def _typed_values(self, mod: ModuleRef, call: Call) -> list[Value]:
        """No value can be followed to this call: the producers of its declared function type, if named."""
        out: list[Value] = []
        for declared in self._declared_types(mod, call):
            for alias in self.ftypes.function_aliases([declared]):
                for ref, evidence, returned in self.ftypes.producers(alias.ref):
                    note = (INLINE,) if returned else ()
                    out.append(Value(ref, (*alias.evidence, *evidence[:1], *note)))
        return out

    def _declared_types(self, mod: ModuleRef, call: Call) -> list[NamedType]:
        """The declared types of the value called: a parameter, a destructured option (also `const { t } =
        props`), or a property or field reached from `this` or a parameter. A member's type is read through
        intersections, conditional and generic aliases, mapped types and `Pick`-like wrappers
        (`FunctionTypes.member_types`)."""
        chain = call.callee
        root = chain[0]
        if len(chain) == 1 and self._param_owner(mod, call.scope, root) is None:
            picked = self._destructured_param(mod, call.scope, root)
            if picked is None:
                return self._destructured_local_types(mod, call)
            fn, index, key = picked
            d = self.p.defs[fn]
            prm = d.params[index]
            if not prm.type:
                return []
            why = f"{fn.path}:{d.line}: {{ {key} }} of {d.qualname} is typed {' '.join(prm.type.split())[:80]}"
            return self.ftypes.member_types(fn.module, prm.type, key, why)
        owner = self._param_owner(mod, call.scope, root) if root != "this" else None
        if root != "this" and owner is None:
            return []
        out: list[NamedType] = []
        for t in self.types.exprs.chain_types(mod, call.scope, chain, call.line):
            if isinstance(t, TypeExpr):
                out.extend(self.ftypes.text_types(t.mod, t.text, t.evidence))
            elif isinstance(t, NamedType):
                out.append(t)
        if owner is not None and len(chain) == 2 and not self.ftypes.function_aliases(out):
            out += self._param_member_types(owner[0], owner[1], chain[1])  # `props.t()`, props typed by an alias
        if not out and len(chain) > 2:  # `this.ctx.log.warn()`: the member as the receiver's declared type reads it
            out += self._receiver_member_types(mod, call)
        return out

    def _receiver_member_types(self, mod: ModuleRef, call: Call) -> list[NamedType]:
        """Member `m` of the declared type of the receiver `a.b` in `a.b.m()`, read as text: through
        `interface Log extends Record<Level, LogMethod>` (one member per literal of `Level`) and the other
        forms `FunctionTypes.member_types` reads."""
        out: list[NamedType] = []
        for recv in self.types.exprs.chain_types(mod, call.scope, call.callee[:-1], call.line):
            if isinstance(recv, TypeExpr):
                out.extend(self.ftypes.member_types(recv.mod, recv.text, call.callee[-1], recv.evidence))
        return out

    def _param_member_types(self, fn: DefRef, index: int, key: str) -> list[NamedType]:
        d = self.p.defs[fn]
        prm = d.params[index]
        if not prm.type:
            return []
        why = f"{fn.path}:{d.line}: {prm.name} of {d.qualname} is typed {' '.join(prm.type.split())[:80]}"
        return self.ftypes.member_types(fn.module, prm.type, key, why)

    def _destructured_local_types(self, mod: ModuleRef, call: Call) -> list[NamedType]:
        """`const { t } = props` (props a typed parameter), then `t(…)`: the parameter type's member."""
        name = call.callee[0]
        for sc in self.p.scope_chain(mod, call.scope):
            for b in self.p.bindings_named(mod, sc, name):
                if b.destructure_key and b.init_chain and len(b.init_chain) == 1 and b.line <= call.line:
                    owner = self._param_owner(mod, b.scope, b.init_chain[0])
                    if owner is not None:
                        return [NamedType(nt.ref, (f"{mod.path}:{b.line}: const {{ {b.destructure_key} }} = "
                                                   f"{b.init_chain[0]}", *nt.evidence))
                                for nt in self._param_member_types(owner[0], owner[1], b.destructure_key)]
            if sc is None:
                break
        return []

    def _enclosing_functions(self, mod: ModuleRef, scope: str | None) -> Iterator[tuple[DefRef, Definition]]:
        """The named definitions around `scope`, innermost first, up to module level."""
        for sc in self.p.scope_chain(mod, scope):
            if sc is None:
                return
            ref = DefRef(mod.repo, mod.path, sc)
            d = self.p.defs.get(ref)
            if d is not None:
                yield ref, d

    def _param_owner(self, mod: ModuleRef, scope: str | None, name: str) -> tuple[DefRef, int] | None:
        """The named function (innermost first) that declares `name` as a parameter, and its index."""
        for ref, d in self._enclosing_functions(mod, scope):
            if any(b.name == name and b.kind != "param" for b in self.p.bindings_named(mod, ref.qualname, name)):
                return None  # shadowed by a local variable
            for i, prm in enumerate(d.params):
                if prm.name == name:
                    return ref, i
        return None

    def _held_literal(self, mod: ModuleRef, scope: str | None, name: str) -> str | None:
        """The object literal a `const name = { … }` in the scope chain holds (its object id)."""
        held = self._held.get(mod)
        if held is None:  # indexed per file (asked for every call): holder → its literals, in file order
            held = self._held[mod] = defaultdict(list)
            for obj in self.p.objects(mod):
                held[obj.holder].append(obj)
        chain = self.p.scope_chain(mod, scope)
        for obj in held.get(f"variable:{name}", ()):
            if obj.scope in chain:
                return obj.object_id
        return None

    def _destructured_param(self, mod: ModuleRef, scope: str | None, name: str) -> tuple[DefRef, int, str] | None:
        """`{ onChunk }` / `{ onChunk: handle }` / `{ onChunk = noop }` as parameter i: (function, i, key)."""
        for ref, d in self._enclosing_functions(mod, scope):
            for i, prm in enumerate(d.params):
                if prm.name.startswith("{"):
                    for key, local in object_pattern_names(prm.name):
                        if local == name:
                            return ref, i, key
        return None

    def _prop_of(self, mod: ModuleRef, scope: str | None, name: str) -> tuple[DefRef, int, str] | None:
        """An option destructured from parameter i, in the signature (`function f({ onChunk })`) or in the body
        (`const { renderSlot } = props`): (function, i, key)."""
        names = self._option_names.get(mod)
        if names is None:  # per module: every name a destructuring binds (most calls name none of them)
            facts = self.p.files.get(mod)
            names = self._option_names[mod] = {
                local for d in (facts.definitions if facts else []) for prm in d.params if prm.name.startswith("{")
                for _, local in object_pattern_names(prm.name)} | {
                b.name for b in (facts.bindings if facts else []) if b.destructure_key and b.init_chain}
        if name not in names:
            return None
        picked = self._destructured_param(mod, scope, name)
        if picked is not None:
            return picked
        for sc in self.p.scope_chain(mod, scope):
            for b in self.p.bindings_named(mod, sc, name):
                if b.destructure_key and b.init_chain and len(b.init_chain) == 1:
                    owner = self._param_owner(mod, b.scope, b.init_chain[0])
                    if owner is not None:
                        self._unpacked[(mod, scope, name)] = (f"{mod.path}:{b.line}: {name} is taken from "
                                                              f"{b.init_chain[0]}.{b.destructure_key}",)
                        return owner[0], owner[1], b.destructure_key
            if sc is not None and self.p.bindings_named(mod, sc, name):
                return None  # bound otherwise in a nearer scope
        return None

    def _unpacking(self, mod: ModuleRef, scope: str | None, name: str, values: list[Value]) -> list[Value]:
        """The values with the body destructuring that took `name` off the props, as the first hop."""
        hop = self._unpacked.get((mod, scope, name))
        return [Value(v.target, (*hop, *v.evidence), v.passer) for v in values] if hop else values

    def _jsx_closure_args(self, mod: ModuleRef, scope: str | None, line: int, name: str, where: tuple[str, ...]
                          ) -> list[tuple[ModuleRef, Call, Arg, tuple[str, ...]]]:
        """`<Flow render={owner => …} />`: `owner` is what Flow passes when it calls its `render` prop, so the
        first arguments of those calls (the inline attribute closure around `line` in `scope`)."""
        if self._param_owner(mod, scope, name) is not None or self._prop_of(mod, scope, name) is not None:
            return []  # a parameter of the enclosing function, not of an inline closure
        best: tuple[ObjectLiteral, str, int] | None = None
        for obj in self._held_by_scope(mod, scope):
            if not obj.holder.startswith("jsx:") or not obj.line <= line <= obj.end_line:
                continue
            for prop in obj.properties:
                if prop.value_kind == "function" and not prop.value_def and prop.line <= line \
                        and (best is None or prop.line > best[2]):
                    best = (obj, prop.key, prop.line)
        if best is None:
            return []
        obj, key, at = best
        comp = self._named_function(mod, obj.scope, obj.holder[4:])
        d = self.p.defs.get(comp) if comp is not None else None
        if comp is None or d is None or not d.params:
            return []
        prm = d.params[0].name
        local = next((lo for k, lo in object_pattern_names(prm) if k == key), None) if prm.startswith("{") else None
        why = (*where, f"{mod.path}:{at}: {name} is the parameter of the closure given as {key} to <{obj.holder[4:]}>")
        out = []
        for inner in self._calls_under(comp.module, comp.qualname):
            if inner.args and (inner.callee == [local] if local else inner.callee == [prm, key]):
                out.append((comp.module, inner, inner.args[0], (*why, f"{comp.path}:{inner.line}: {d.qualname} "
                                                                     f"calls {key}({inner.args[0].text[:40]})")))
        return out

    def _held_by_scope(self, mod: ModuleRef, scope: str | None) -> list[ObjectLiteral]:
        """The module's object literals written in one scope (indexed per module on first use)."""
        index = self._scoped_objects.get(mod)
        if index is None:
            index = self._scoped_objects[mod] = defaultdict(list)
            for obj in self.p.objects(mod):
                index[obj.scope].append(obj)
        return index.get(scope, [])

    def _store_actions(self, reg: Registration, where: tuple[str, ...]) -> list[tuple[ModuleRef, str, tuple[str, ...]]]:
        """The reducers object (`actions: {…}` of `defineStore({…})`) of the store the spec's `store` makes: a
        call there, or a variable holding one (`const chatStore = createChatStore()`)."""
        rule = reg.rule
        prop = next((p for p in reg.spec.properties if p.key == rule.store_key), None)
        if prop is None or not rule.store_factories:
            return []
        makers: list[tuple[Call, tuple[str, ...]]] = []
        if prop.value_kind == "call":
            makers = [(c, (*where, f"{reg.mod.path}:{prop.line}: {rule.store_key}: {prop.value_text}(…) makes the "
                                   f"store")) for c in self._calls_in.get((reg.mod, reg.spec.scope), [])
                      if c.line == prop.line and (c.text or ".".join(c.callee)) == prop.value_text]
        elif prop.value_kind == "identifier":
            for sc in self.p.scope_chain(reg.mod, reg.spec.scope):
                for b in self.p.bindings_named(reg.mod, sc, prop.value_text):
                    if b.init_callee:
                        makers += [(c, (*where, f"{reg.mod.path}:{b.line}: {rule.store_key}: {prop.value_text} = "
                                                f"{'.'.join(b.init_callee)}(…) makes the store"))
                                   for c in self._calls_in.get((reg.mod, b.scope), [])
                                   if c.line == b.line and c.callee == b.init_callee]
        out = []
        for c, why in makers:
            if ".".join(c.callee) in rule.store_factories:  # `store: defineStore({ … })` written in place
                out.extend(self._reducers(reg.mod, c, rule, why))
                continue
            for target in self._out_at.get((reg.mod.repo, reg.mod.path, c.line, c.column), []):
                repo, path, qual = target.split(":", 2)
                fmod = ModuleRef(repo, path)
                for inner in self._calls_under(fmod, qual):
                    if ".".join(inner.callee) in rule.store_factories:
                        out.extend(self._reducers(fmod, inner, rule, why))
        return out

    def _reducers(self, mod: ModuleRef, call: Call, rule: RegistryRule, why: tuple[str, ...]
                  ) -> list[tuple[ModuleRef, str, tuple[str, ...]]]:
        """`defineStore({ actions: {…} })`: the actions object literal."""
        if not call.args or call.args[0].kind != "object" or not call.args[0].object_id:
            return []
        spec = self.p.object_literal(mod, call.args[0].object_id)
        actions = next((p for p in spec.properties if p.key == rule.store_actions_key and p.value_object_id),
                       None) if spec is not None else None
        if actions is None:
            return []
        maker = ".".join(call.callee)
        said = f"{mod.path}:{call.line}: {maker}({{ {rule.store_actions_key}: … }}) defines its reducers"
        return [(mod, actions.value_object_id or "", (*why, said))]

    def _binder_values(self, names: tuple[str, ...], near: ModuleRef, why: tuple[str, ...],
                       passer: str | None) -> list[Value]:
        """The renderer functions that make a seat: the seat is the closure each returns (its calls are theirs)."""
        out = []
        for ref in self.registries.binders(names, near):
            b = self.p.defs[ref]
            out.append(Value(ref, (*why, f"{ref.path}:{b.line}: {b.name}(…) makes it (the closure it returns)",
                                   INLINE), passer))
        return out

    def _inject_faces(self, reg: Registration, where: tuple[str, ...]
                      ) -> list[tuple[ModuleRef, ObjectLiteral, tuple[str, ...]]]:
        """The object literals the spec's inject function returns, through returned calls and spreads."""
        prop = next((p for p in reg.spec.properties if p.key == reg.rule.inject_key), None)
        if prop is None:
            return []
        target: DefRef | None = None
        if prop.value_def:
            target = DefRef(reg.mod.repo, reg.mod.path, prop.value_def)
        elif prop.value_kind == "identifier":
            target = self._named_function(reg.mod, reg.spec.scope, prop.value_text)
        if target is None:
            return []
        why = (*where, f"{reg.mod.path}:{prop.line}: {reg.rule.inject_key}: {prop.value_text or '(closure)'} "
                       f"returns the face whose members are props")
        out: list[tuple[ModuleRef, ObjectLiteral, tuple[str, ...]]] = []
        self._faces_of(target, why, 0, out, set())
        return out

    def _faces_of(self, fn: DefRef, why: tuple[str, ...], depth: int,
                  out: list[tuple[ModuleRef, ObjectLiteral, tuple[str, ...]]], seen: set[DefRef]) -> None:
        """Literals `fn` returns; a spread `...f()` in one, or a one-line `() => x.inject()`, is followed
        along the call's edges to what that callee returns (a few levels)."""
        if fn in seen or depth > MAX_FORWARDS or fn not in self.p.defs:
            return
        seen.add(fn)
        d = self.p.defs[fn]
        literals = self.registries.returned_literals(fn.module, fn.qualname)
        followed: list[tuple[Call, tuple[str, ...]]] = []
        for obj in literals:
            out.append((fn.module, obj, why))
            for prop in obj.properties:
                if prop.value_kind == "spread" and prop.value_text.endswith("()"):
                    for c in self._calls_in.get((fn.module, fn.qualname), []):
                        if c.nested == 0 and (c.text or ".".join(c.callee)) == prop.value_text[:-2]:
                            followed.append((c, (*why, f"{fn.path}:{prop.line}: the face spreads {prop.value_text}")))
        if not literals and d.line == d.end_line:  # `inject: () => agentLoop.inject()`: the call it returns
            for c in self._calls_in.get((fn.module, fn.qualname), []):
                if c.nested == 0 and c.kind == "call":
                    said = f"{fn.path}:{c.line}: {d.name} returns {c.text or '.'.join(c.callee)}(…)"
                    followed.append((c, (*why, said)))
        for c, step in followed:
            for target in self._out_at.get((fn.module.repo, fn.module.path, c.line, c.column), []):
                repo, path, qual = target.split(":", 2)
                self._faces_of(DefRef(repo, path, qual), step, depth + 1, out, seen)

    def _wrapped_closure(self, mod: ModuleRef, scope: str | None, name: str) -> tuple[DefRef, str] | None:
        """`const close = useCallback(() => …, deps)` or `const install = Object.assign((ctx) => …, meta)`: the
        closure belongs to the function that writes it."""
        if not self.function_wrappers and not self.closure_holders:
            return None
        for sc in self.p.scope_chain(mod, scope):
            for b in self.p.bindings_named(mod, sc, name):
                wrapper = ".".join(b.init_callee) if b.init_callee else ""
                if wrapper in self.function_wrappers or wrapper in self.closure_holders and self._holds_closure(mod, b):
                    repo, path, qual = node_id_for_scope(mod, b.scope).split(":", 2)
                    return DefRef(repo, path, qual), f"{mod.path}:{b.line}: {name} = {wrapper}(…)"
        return None

    def _holds_closure(self, mod: ModuleRef, b: Binding) -> bool:
        """The `closure_holders` call initialising `b` is given an inline closure first."""
        return any(c.line == b.line and c.callee == b.init_callee and c.args and c.args[0].kind == "function"
                   for c in self._calls_in.get((mod, b.scope), []))

    def _named_function(self, mod: ModuleRef, scope: str | None, name: str) -> DefRef | None:
        local = self.p.local_function(mod, scope, name)
        if local is not None:
            return DefRef(mod.repo, mod.path, local.qualname)
        sym = self.symbols.resolve_name(mod, name)
        if sym is not None and sym.definition is not None and _callable(self.p.defs.get(sym.definition)):
            return sym.definition
        return None

    def field_owners(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int, key: str) -> set[DefRef]:
        """The types that declare `key` as a field (not a method) on the receiver `chain`. Memoised (do not
        mutate): every call of a field name asks it again for each assignment site of that name."""
        memo_key = (mod, scope, tuple(chain), line, key)
        found = self._owners.get(memo_key)
        if found is not None:
            return found
        owners: set[DefRef] = set()
        for recv in self.calls.receiver_types(mod, scope, chain, line):
            named = (self.types.decls.resolve_text(recv.mod, recv.text, recv.evidence)
                     if isinstance(recv, TypeExpr) else [recv] if isinstance(recv, NamedType) else [])
            for nt in named:
                for m in self.types.decls.find_member(nt.ref, key):
                    if m.field is not None:
                        owners.add(m.owner)
        self._owners[memo_key] = owners
        return owners


def _callable(d: Definition | None) -> bool:
    return d is not None and d.kind in CALLABLE_KINDS
