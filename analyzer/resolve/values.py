"""Calls of function-typed values: what the callers pass, or what is assigned, is what runs.

`attempt()` of a parameter, `opts.onDone()` of an option object given as a parameter and `this.onChunk()`
of a function-typed field have no declaration with a body to bind to. Once the call graph's other edges
exist, this pass follows them backwards: every call site of the enclosing function passes an argument
there (a function, a method, an inline closure, an object literal with that property), and every
`x.onChunk = fn` whose `x` has the field's owner type assigns one. Each becomes a `dispatch` edge of the
rule `function-value` (`analyzer/rules/structural.toml`), marked *possible*: one of the values that may
arrive. An inline closure has no node of its own (its calls belong to the function that writes it), so
the edge points at that function, as inline event listeners do. A parameter forwarded to another
function's parameter is followed a few levels.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from analyzer.index.model import Arg, Assignment, Call, Definition, ObjectLiteral, ObjectProperty
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
CALL_KINDS = ("direct", "method", "interface")  # edges that are real calls with these arguments
INLINE = "an inline closure: its calls belong to this function"


class FunctionValues:
    def __init__(self, program: Program, symbols: SymbolResolver, types: Types, calls: CallResolver,
                 rule: dict, events: list[dict] | None = None) -> None:
        self.p = program
        self.symbols = symbols
        self.types = types
        self.calls = calls
        self.rule = rule["name"]
        self.element_factories = set(rule.get("element_factories", []))
        self.function_wrappers = set(rule.get("function_wrappers", []))
        self.events = [e for e in events or [] if e.get("next_methods")]
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

    def closure_calls(self, mod: ModuleRef, scope: str | None) -> list[Call]:
        """The calls in `scope` that pass an inline closure, in file order (filled by `edges`)."""
        return self._closure_calls.get((mod, scope), [])

    def edges(self, graph_edges: list[Edge]) -> tuple[list[Edge], int]:
        """New edges for calls of function-typed values, and how many targets the rule matched."""
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
            if e.kind in CALL_KINDS:
                self._into[e.target].append(e)
                self._out_at[(e.repo, e.path, e.line, e.column)].append(e.target)
        self._index_events()
        out: list[Edge] = []
        typed_names = self.ftypes.typed_names()
        for mod, facts in self.p.files.items():
            for call in facts.calls:
                if call.kind != "call":
                    continue
                values = self._values_for(mod, call)
                if not values and (mod.repo, mod.path, call.line, call.column) not in bound:
                    values = self.stored.values(self, mod, call)
                if not values and len(call.callee) <= 2 and call.callee[-1] in typed_names \
                        and (mod.repo, mod.path, call.line, call.column) not in bound:
                    values = self._typed_values(mod, call)
                for v in values:
                    source = node_id_for_scope(mod, call.scope)
                    if (source, v.target.node_id, call.line) in have:
                        continue  # already bound (e.g. an object literal typed by the option interface)
                    edge = self.calls.make_edge(mod, call, v.target, "dispatch", v.evidence, possible=True,
                                                seam=_seam(mod, call), rule=self.rule)
                    edge.passer = v.passer
                    out.append(edge)
        out = _dedupe(out)
        return out, len(out)

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

    def _next_values(self, event: str, where: tuple[str, ...]) -> list[Value]:
        """A listener's `next()`: the emitter's last argument, and the emitting method (whose closure it is)."""
        out: list[Value] = []
        for mod, call in self._next_given.get(event, []):
            why = (*where, f"{mod.path}:{call.line}: {'.'.join(call.callee)}({event!r}, …) hands listeners a next")
            out.extend(self.arg_values(mod, call, call.args[-1], why, MAX_FORWARDS))
            for target in self._out_at.get((mod.repo, mod.path, call.line, call.column), []):
                repo, path, qual = target.split(":", 2)
                note = f"{path}: {qual} emits; the next may be a closure of its own"
                out.append(Value(DefRef(repo, path, qual), (*why, note, INLINE)))
        return out

    def _index_element(self, mod: ModuleRef, call: Call) -> None:
        """`createElement(Comp, { onClose })`: the object literal is Comp's props, as in JSX."""
        comp, props = call.args[0], call.args[1]
        if comp.kind != "identifier" or props.kind != "object" or not props.object_id:
            return
        obj = self.p.object_literal(mod, props.object_id)
        target = self._named_function(mod, call.scope, comp.text)
        if obj is not None and target is not None:
            self._jsx[target.node_id].append((mod, obj))

    # --- which values reach a call ----------------------------------------------------------
    def _values_for(self, mod: ModuleRef, call: Call) -> list[Value]:
        chain = call.callee
        if chain[0] in ("this", "<expr>", "<literal>", "super") or chain[0].endswith("()") or len(chain) > 2:
            return self._assigned_values(mod, call)
        if len(chain) == 1 and self.p.local_function(mod, call.scope, chain[0]) is not None:
            return []
        owner = self._param_owner(mod, call.scope, chain[0])
        if owner is None:
            if len(chain) == 1:  # `function f({ onChunk }: Opts) { onChunk() }`: a destructured option
                picked = self._prop_of(mod, call.scope, chain[0])
                if picked is not None:
                    return self._unpacking(mod, call.scope, chain[0], self._param_values(*picked, 0))
                return self._closure_param_values(mod, call) if call.nested else []
            picked = self._prop_of(mod, call.scope, chain[0])
            if picked is not None:  # `function View({ actions }) { actions.setOrder() }`: a member of a prop
                found = self._prop_member_values(*picked, chain[1], 0)
                if found:
                    return self._unpacking(mod, call.scope, chain[0], found)
            held = self._held_literal(mod, call.scope, chain[0])
            if held is not None:  # `const internals = { tempName, … }` then `internals.tempName()`
                found = self._property_values(mod, held, chain[1], (f"{mod.path}:{call.line}: {chain[0]} is an "
                                                                    f"object literal",), "held")
                return found + self._assigned_values(mod, call)
            return self._assigned_values(mod, call)
        fn, index = owner
        key = chain[1] if len(chain) == 2 else None
        values = self._param_values(fn, index, key, 0)
        if key is not None and not values:
            values = self._assigned_values(mod, call)
        return values

    def _closure_param_values(self, mod: ModuleRef, call: Call) -> list[Value]:
        """`withLock(key, async (release) => { …; release() })`: a parameter of an inline closure handed to
        a function of the repos is what that function passes when it calls the closure."""
        name = call.callee[0]
        if (mod.repo, mod.path, call.line, call.column) in self._bound:
            return []  # bound already (an import, a global the resolver knows)
        for outer, i, params in self._closure_params(mod, call.scope).get(name, ()):
            if outer.line > call.line or outer is call:
                continue
            heard = self._event_of(outer, "listen_methods") if self.events else None
            if heard is not None and params[-1] == name:
                where = (f"{mod.path}:{outer.line}: {name} is the last parameter of a listener of "
                         f"{heard[1]!r}",)
                return self._next_values(heard[1], where)
            return self._invoked_with(mod, outer, i, params.index(name), name)
        return []

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

    def _invoked_with(self, mod: ModuleRef, outer: Call, index: int, position: int, name: str,
                      what: str = "the closure") -> list[Value]:
        """What the callees of `outer` pass at `position` when they call their parameter `index`."""
        out: list[Value] = []
        for target in self.types.callee_targets(mod, outer.scope, outer.callee, outer.line):
            d = self.p.defs.get(target)
            if d is None or index >= len(d.params) or d.params[index].name.startswith(("{", "[")):
                continue
            prm = d.params[index].name
            where = (f"{mod.path}:{outer.line}: {name} is parameter {position + 1} of {what} passed to "
                     f"{d.qualname}",)
            for inner in self._calls_under(target.module, target.qualname):
                if inner.callee != [prm] or position >= len(inner.args):
                    continue
                why = (*where, f"{target.path}:{inner.line}: {d.qualname} calls {prm}(…) with "
                               f"{inner.args[position].text[:60]}")
                out.extend(self.arg_values(target.module, inner, inner.args[position], why, 1))
        return out

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
        for t in self.types.chain_types(mod, call.scope, chain, call.line):
            if isinstance(t, TypeExpr):
                out.extend(self.ftypes.text_types(t.mod, t.text, t.evidence))
            elif isinstance(t, NamedType):
                out.append(t)
        if owner is not None and len(chain) == 2 and not self.ftypes.function_aliases(out):
            out += self._param_member_types(owner[0], owner[1], chain[1])  # `props.t()`, props typed by an alias
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

    def _param_values(self, fn: DefRef, index: int, key: str | None, depth: int) -> list[Value]:
        cache_key = (fn, index, key, depth)
        cached = self._param_cache.get(cache_key)
        if cached is not None:
            return cached
        self._param_cache[cache_key] = []  # recursion guard
        d = self.p.defs[fn]
        prm = d.params[index].name
        out: list[Value] = []
        for e in self._into.get(fn.node_id, []):
            site = self._call_at.get((e.repo, e.path, e.line, e.column))
            if site is None:
                continue
            mod, call = site
            if index >= len(call.args):
                continue
            arg = call.args[index]
            where: tuple[str, ...] = (f"{fn.path}:{d.line}: {_short(prm)} is parameter {index + 1} of {d.qualname}",
                     f"{mod.path}:{call.line}: {call.text or '.'.join(call.callee)}(…) passes {arg.text[:60]}")
            passer = node_id_for_scope(mod, call.scope)
            if key is None:
                found = self.arg_values(mod, call, arg, where, depth)
            elif arg.kind == "object" and arg.object_id:
                found = self._property_values(mod, arg.object_id, key, where, depth=depth)
            else:
                found = []
            out.extend(Value(v.target, v.evidence, passer) for v in found)
        if key is None:  # `register('pkg', install)`: what register passes when it calls its parameter
            for mod, call, k in self._passed_along().get(fn.node_id, []):
                out.extend(Value(v.target, v.evidence, None)
                           for v in self._invoked_with(mod, call, k, index, prm, d.qualname))
        if key is None and index == len(d.params) - 1 and fn.node_id in self._listener_of:
            for event in sorted(self._listener_of[fn.node_id]):
                where = (f"{fn.path}:{d.line}: {_short(prm)} is the last parameter of {d.qualname}, a listener of "
                         f"{event!r}",)
                out.extend(self._next_values(event, where))
        if index == 0 and key is not None:  # a component's props: what each `<Comp key={…} />` gives
            for mod, obj in self._jsx.get(fn.node_id, []):
                where = (f"{fn.path}:{d.line}: {_short(prm)} is the props of {d.qualname}",
                         f"{mod.path}:{obj.line}: " + (f"<{obj.holder[4:]} …> gives its attributes as props"
                                                       if obj.holder.startswith("jsx:") else
                                                       f"{obj.holder.split(':')[1]}({d.name}, {{…}}) gives its props"))
                found = self._property_values(mod, obj.object_id, key, where, "given", depth)
                out.extend(Value(v.target, v.evidence, node_id_for_scope(mod, obj.scope)) for v in found)
        if key is not None and index == len(d.params) - 1:  # `inject: (id, actions) => …`: its store's actions
            for reg in self.registries.injecting(fn):
                out.extend(self._inject_actions_values(fn, d, reg, key, depth))
        if index == 0 and key is not None:  # a registered component's props: what its registry assembles
            for reg in self.registries.registrations(fn):
                out.extend(self._registry_values(fn, d, reg, key, depth))
        self._param_cache[cache_key] = out
        return out

    # --- props a registry assembles (analyzer.resolve.registries) -------------------------------
    def _registry_values(self, fn: DefRef, d: Definition, reg: Registration, key: str, depth: int) -> list[Value]:
        """Prop `key` of a component a registry mounts: the inject face's member (or, for `useX`, the hook
        the renderer binds from its `hooks` compartment), a standard seat, or what `renderSlot(name, owner)`
        gives."""
        rule, mod, call = reg.rule, reg.mod, reg.call
        where = (f"{fn.path}:{d.line}: {_short(d.params[0].name)} is the props of {d.qualname}",
                 f"{mod.path}:{call.line}: {call.text or '.'.join(call.callee)}(…, {d.name}) registers it; the "
                 f"registry assembles its props (rule {rule.name})")
        passer = node_id_for_scope(mod, call.scope)
        out: list[Value] = []
        source = rule.hook_source(key)
        for fmod, face, why in self._inject_faces(reg, where):
            out.extend(Value(v.target, v.evidence, passer)
                       for v in self._property_values(fmod, face.object_id, key, why, "the inject face returns", depth))
            hooks = next((p for p in face.properties if p.key == rule.hooks_key and p.value_object_id), None)
            if source is not None and hooks is not None:
                compartment = self.p.object_literal(fmod, hooks.value_object_id or "")
                member = next((p for p in compartment.properties if p.key == source), None) if compartment else None
                if member is not None:
                    bound = (*why, f"{fmod.path}:{member.line}: {rule.hooks_key}.{source} of the inject face is bound "
                                   f"as {key} by the renderer")
                    out.extend(self._binder_values(rule.hook_binders, fn.module, bound, passer))
        if key in rule.standard:
            seat = (*where, f"rule {rule.name}: the renderer gives every entry the standard seat {key}")
            out.extend(self._binder_values(rule.standard[key], fn.module, seat, passer))
        for omod, ocall, owner in self.registries.owners(reg):
            render = ocall.text or ".".join(ocall.callee)
            given = (*where, f"{omod.path}:{ocall.line}: {render}({ocall.args[0].text!r}, {owner.text[:40]}) "
                             f"gives the owner props")
            if owner.kind == "object" and owner.object_id:
                out.extend(Value(v.target, v.evidence, node_id_for_scope(omod, ocall.scope))
                           for v in self._property_values(omod, owner.object_id, key, given, "given", depth))
            elif owner.kind == "identifier":  # `render={owner => renderSlot(name, owner)}`: what the closure gets
                for cmod, inner, arg, why in self._jsx_closure_args(omod, ocall.scope, ocall.line, owner.text, given):
                    literal = arg.object_id if arg.kind == "object" else \
                        self._held_literal(cmod, inner.scope, arg.text) if arg.kind == "identifier" else None
                    if literal:
                        out.extend(Value(v.target, v.evidence, node_id_for_scope(cmod, inner.scope))
                                   for v in self._property_values(cmod, literal, key, why, "given", depth))
        return out

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

    def _prop_member_values(self, fn: DefRef, index: int, key: str, member: str, depth: int) -> list[Value]:
        """`actions.setOrder` where `actions` is a prop a registry fills with its store's bound actions: the
        reducer of that name in the store definition (what the bound action runs)."""
        if index != 0 or depth > MAX_FORWARDS:
            return []
        out: list[Value] = []
        d = self.p.defs[fn]
        head = f"{fn.path}:{d.line}: {_short(d.params[0].name)} is the props of {d.qualname}"
        for mod, obj in self._jsx.get(fn.node_id, []):  # `<Comp chatScroll={{ save }} />`, `keyboard={kb}`
            for prop in obj.properties:
                if prop.key == key:
                    why: tuple[str, ...] = (head, f"{mod.path}:{prop.line}: {obj.holder.split(':')[-1]} is given {key}")
                    out.extend(Value(v.target, v.evidence, node_id_for_scope(mod, obj.scope))
                               for v in self._object_member_values(mod, obj.scope, prop, member, why, depth))
        for reg in self.registries.registrations(fn):  # `inject: () => ({ chatScroll: { save, read } })`
            where = (head, f"{reg.mod.path}:{reg.call.line}: {reg.call.text or '.'.join(reg.call.callee)}(…, "
                           f"{d.name}) registers it (rule {reg.rule.name})")
            for fmod, face, why in self._inject_faces(reg, where):
                for prop in face.properties:
                    if prop.key == key:
                        out.extend(Value(v.target, v.evidence, node_id_for_scope(reg.mod, reg.call.scope))
                                   for v in self._object_member_values(fmod, face.scope, prop, member, why, depth))
        for reg in self.registries.registrations(fn):
            if key != reg.rule.store_actions_prop:
                continue
            where = (f"{fn.path}:{d.line}: {_short(d.params[0].name)} is the props of {d.qualname}",
                     f"{reg.mod.path}:{reg.call.line}: {reg.call.text or '.'.join(reg.call.callee)}(…, {d.name}) "
                     f"registers it; its {key} prop holds the store's bound actions (rule {reg.rule.name})")
            for smod, actions, why in self._store_actions(reg, where):
                out.extend(Value(v.target, (*v.evidence, "the bound action runs this reducer"),
                                 node_id_for_scope(reg.mod, reg.call.scope))
                           for v in self._property_values(smod, actions, member, why, "of store actions", depth))
        return out

    def _object_member_values(self, mod: ModuleRef, scope: str | None, prop: ObjectProperty, member: str,
                              where: tuple[str, ...], depth: int) -> list[Value]:
        """Member `member` of an object a property holds: a nested literal, a literal held by a variable, or
        an object prop the writer was itself given (followed one more component up)."""
        nested = prop.value_object_id if prop.value_kind == "object" else \
            self._held_literal(mod, scope, prop.value_text) if prop.value_kind == "identifier" else None
        if nested:
            return self._property_values(mod, nested, member, where, f"given as {prop.key}", depth)
        if prop.value_kind == "identifier" and depth < MAX_FORWARDS:
            picked = self._prop_of(mod, scope, prop.value_text)
            if picked is not None:
                return [Value(v.target, (*where, *v.evidence))
                        for v in self._prop_member_values(picked[0], picked[1], picked[2], member, depth + 1)]
        return []

    def _inject_actions_values(self, fn: DefRef, d: Definition, reg: Registration, key: str,
                               depth: int) -> list[Value]:
        """`actions.setView(…)` in a spec's `inject: (sessionId, actions) => …`: the renderer passes the store's
        bound actions last, so the reducer of that name."""
        rule = reg.rule
        prm = d.params[-1]
        typed = bool(prm.type) and any(t in (prm.type or "") for t in rule.store_actions_types)
        if not rule.store_key or not (len(d.params) >= 2 or typed):
            return []
        where = (f"{fn.path}:{d.line}: {prm.name} is the last parameter of the {rule.inject_key} of "
                 f"{reg.call.text or '.'.join(reg.call.callee)}(…) at {reg.mod.path}:{reg.call.line}; with a store "
                 f"declared the renderer passes its bound actions there (rule {rule.name})",)
        out: list[Value] = []
        for smod, actions, why in self._store_actions(reg, where):
            out.extend(Value(v.target, (*v.evidence, "the bound action runs this reducer"), None)
                       for v in self._property_values(smod, actions, key, why, "of store actions", depth))
        return out

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

    def arg_values(self, mod: ModuleRef, call: Call, arg: Arg, where: tuple[str, ...], depth: int) -> list[Value]:
        if arg.kind == "function":  # an inline closure: its calls belong to the function that writes it
            owner = node_id_for_scope(mod, call.scope)
            repo, path, qual = owner.split(":", 2)
            return [Value(DefRef(repo, path, qual), (*where, INLINE))]
        if arg.kind == "identifier":
            return self.identifier_values(mod, call.scope, arg.text, where, depth)
        if arg.kind == "call":  # `w.render.bind(w)`
            return self.stored.bound(self, mod, call, arg, where)
        if arg.kind == "member" and arg.text.startswith("this.") and arg.text.count(".") == 1 and call.scope:
            cls = self.p.enclosing_class(DefRef(mod.repo, mod.path, call.scope))
            if cls is not None:
                for m in self.types.find_member(cls, arg.text[5:]):
                    if m.definition is not None and m.definition.kind in CALLABLE_KINDS:
                        return [Value(DefRef(m.owner.repo, m.owner.path, m.definition.qualname), where)]
        return []

    def identifier_values(self, mod: ModuleRef, scope: str | None, name: str, where: tuple[str, ...],
                           depth: int) -> list[Value]:
        """What a name passed on stands for: a function, or what reaches the parameter (plain or
        destructured, `{ onClose }`) of the enclosing function that forwards it."""
        found = self._named_function(mod, scope, name)
        if found is not None:
            return [Value(found, where)]
        wrapped = self._wrapped_closure(mod, scope, name)
        if wrapped is not None:
            return [Value(wrapped[0], (*where, wrapped[1], INLINE))]
        if depth >= MAX_FORWARDS:
            return []
        forwarded = self._param_owner(mod, scope, name)
        picked = (*forwarded, None) if forwarded is not None else self._prop_of(mod, scope, name)
        if picked is None:
            return []
        fn, index, key = picked
        hop = self._unpacked.get((mod, scope, name), ()) if forwarded is None else ()
        return [Value(v.target, (*where, *hop, *v.evidence)) for v in self._param_values(fn, index, key, depth + 1)]

    def _wrapped_closure(self, mod: ModuleRef, scope: str | None, name: str) -> tuple[DefRef, str] | None:
        """`const close = useCallback(() => …, deps)`: the closure belongs to the function that writes it."""
        if not self.function_wrappers:
            return None
        for sc in self.p.scope_chain(mod, scope):
            for b in self.p.bindings_named(mod, sc, name):
                if b.init_callee and ".".join(b.init_callee) in self.function_wrappers:
                    repo, path, qual = node_id_for_scope(mod, b.scope).split(":", 2)
                    return DefRef(repo, path, qual), f"{mod.path}:{b.line}: {name} = {'.'.join(b.init_callee)}(…)"
        return None

    def _property_values(self, mod: ModuleRef, object_id: str, key: str, where: tuple[str, ...],
                         how: str = "passed", depth: int = 0) -> list[Value]:
        obj = self.p.object_literal(mod, object_id)
        if obj is None:
            return []
        out: list[Value] = []
        for prop in obj.properties:
            if prop.value_kind == "spread" and prop.value_text.isidentifier() and depth < MAX_FORWARDS:
                out.extend(self._spread_values(mod, obj, prop.value_text, prop.line, key, where, how, depth))
                continue
            if prop.key != key:
                continue
            why = (*where, f"{mod.path}:{prop.line}: property {key!r} of the object {how}")
            if prop.value_def:
                out.append(Value(DefRef(mod.repo, mod.path, prop.value_def), why))
            elif prop.value_kind == "function":  # an inline closure without a definition (a JSX attribute)
                repo, path, qual = node_id_for_scope(mod, obj.scope).split(":", 2)
                out.append(Value(DefRef(repo, path, qual), (*why, INLINE)))
            elif prop.value_kind == "identifier":
                out.extend(self.identifier_values(mod, obj.scope, prop.value_text, why, depth))
            elif prop.value_kind == "member":
                out.extend(self._member_values(mod, obj.scope, prop.value_text, why, depth))
        return out

    def _spread_values(self, mod: ModuleRef, obj: ObjectLiteral, name: str, line: int, key: str,
                       where: tuple[str, ...], how: str, depth: int) -> list[Value]:
        """`{ ...shared }` / `<Comp {...shared} />`: `key` of the literal `shared` holds, or of the props
        parameter spread on (`<Child {...props} />` forwards what the parent is given)."""
        why = (*where, f"{mod.path}:{line}: the object {how} spreads {name}")
        held = self._held_literal(mod, obj.scope, name)
        if held is not None and held != obj.object_id:
            return self._property_values(mod, held, key, why, "spread", depth + 1)
        owner = self._param_owner(mod, obj.scope, name)
        if owner is None:
            return []
        return [Value(v.target, (*why, *v.evidence)) for v in self._param_values(owner[0], owner[1], key, depth + 1)]

    def _member_values(self, mod: ModuleRef, scope: str | None, text: str, where: tuple[str, ...],
                       depth: int) -> list[Value]:
        """`props.onPicked` / `opts.onDone` handed on: what reaches that option of the enclosing function's
        parameter; `this.handle`: the class's method."""
        head, _, key = text.partition(".")
        if not key or "." in key or depth >= MAX_FORWARDS:
            return []
        if head == "this" and scope:
            cls = self.p.enclosing_class(DefRef(mod.repo, mod.path, scope))
            if cls is None:
                return []
            return [Value(DefRef(m.owner.repo, m.owner.path, m.definition.qualname), where)
                    for m in self.types.find_member(cls, key)
                    if m.definition is not None and m.definition.kind in CALLABLE_KINDS]
        owner = self._param_owner(mod, scope, head)
        if owner is None:
            picked = self._prop_of(mod, scope, head)
            if picked is None:
                return []
            hop = self._unpacked.get((mod, scope, head), ())
            return [Value(v.target, (*where, *hop, *v.evidence))
                    for v in self._prop_member_values(*picked, key, depth + 1)]
        return [Value(v.target, (*where, *v.evidence)) for v in self._param_values(owner[0], owner[1], key, depth + 1)]

    def _named_function(self, mod: ModuleRef, scope: str | None, name: str) -> DefRef | None:
        local = self.p.local_function(mod, scope, name)
        if local is not None:
            return DefRef(mod.repo, mod.path, local.qualname)
        sym = self.symbols.resolve_name(mod, name)
        if sym is not None and sym.definition is not None and _callable(self.p.defs.get(sym.definition)):
            return sym.definition
        return None

    # --- fields assigned after construction ---------------------------------------------------
    def _assigned_values(self, mod: ModuleRef, call: Call) -> list[Value]:
        """`this.onChunk()` where some `stream.onChunk = fn` assigns the same declared field."""
        key = call.callee[-1]
        sites = self._assigned.get(key)
        if not sites or len(call.callee) < 2:
            return []
        wanted = self.field_owners(mod, call.scope, call.callee[:-1], call.line, key)
        if not wanted:
            return []
        out: list[Value] = []
        for amod, a in sites:
            owners = self.field_owners(amod, a.scope, a.target[:-1], a.line, key)
            if not owners & wanted:
                continue
            why = (f"{amod.path}:{a.line}: {'.'.join(a.target)} = {a.value_text or '(closure)'}",)
            if a.value_kind == "function":
                owner = node_id_for_scope(amod, a.scope)
                repo, path, qual = owner.split(":", 2)
                out.append(Value(DefRef(repo, path, qual), (*why, INLINE)))
            elif a.value_kind == "identifier":
                found = self._named_function(amod, a.scope, a.value_text)
                if found is not None:
                    out.append(Value(found, why))
                elif (param := self._param_owner(amod, a.scope, a.value_text)) is not None:
                    # `this.colorFn = colorFn` from a constructor parameter: what its callers pass (stored)
                    out.extend(Value(v.target, (*why, *v.evidence))
                               for v in self._param_values(param[0], param[1], None, 1))
            elif a.value_kind == "member" and a.value_text.count(".") == 1 and not a.value_text.startswith("this."):
                # `this.onChunk = options.onChunk` in a constructor: what its callers pass as that option
                head, _, prop = a.value_text.partition(".")
                option = self._param_owner(amod, a.scope, head)
                if option is not None:
                    # stored in a field: it runs whenever the field is called, not only inside the passer
                    out.extend(Value(v.target, (*why, *v.evidence))
                               for v in self._param_values(option[0], option[1], prop, 1))
            elif a.value_text.startswith("this.") and a.value_text.count(".") == 1 and a.scope:
                cls = self.p.enclosing_class(DefRef(amod.repo, amod.path, a.scope))
                if cls is not None:
                    for m in self.types.find_member(cls, a.value_text[5:]):
                        if m.definition is not None and m.definition.kind in CALLABLE_KINDS:
                            out.append(Value(DefRef(m.owner.repo, m.owner.path, m.definition.qualname), why))
        return out

    def field_owners(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int, key: str) -> set[DefRef]:
        """The types that declare `key` as a field (not a method) on the receiver `chain`. Memoised (do not
        mutate): every call of a field name asks it again for each assignment site of that name."""
        memo_key = (mod, scope, tuple(chain), line, key)
        found = self._owners.get(memo_key)
        if found is not None:
            return found
        owners: set[DefRef] = set()
        for recv in self.calls.receiver_types(mod, scope, chain, line):
            named = (self.types.resolve_text(recv.mod, recv.text, recv.evidence)
                     if isinstance(recv, TypeExpr) else [recv] if isinstance(recv, NamedType) else [])
            for nt in named:
                for m in self.types.find_member(nt.ref, key):
                    if m.field is not None:
                        owners.add(m.owner)
        self._owners[memo_key] = owners
        return owners


def _short(text: str, limit: int = 60) -> str:
    """A parameter as evidence: a long destructuring pattern is cut (the line number locates it)."""
    return text if len(text) <= limit else text[:limit].rstrip(", ") + " …"


def _callable(d: Definition | None) -> bool:
    return d is not None and d.kind in CALLABLE_KINDS


def _seam(mod: ModuleRef, call: Call) -> str:
    return f"value:{mod.repo}:{mod.path}:{call.line}:{call.column}"


def _dedupe(edges: list[Edge]) -> list[Edge]:
    seen: dict[tuple[str, str, int, int, str | None], Edge] = {}
    for e in edges:
        seen.setdefault((e.source, e.target, e.line, e.column, e.passer), e)
    return list(seen.values())
