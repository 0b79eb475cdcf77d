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

from analyzer.index.model import Arg, Call, Definition, ObjectLiteral, ObjectProperty
from analyzer.index.types import top_level_indices
from analyzer.resolve.calls import node_id_for_scope
from analyzer.resolve.edges import Edge
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import CALLABLE_KINDS, DefRef
from analyzer.resolve.registries import Registration
from analyzer.resolve.typetext import split_top
from analyzer.resolve.valueflow import Value
from analyzer.resolve.valuesites import INLINE, MAX_FORWARDS, ValueSites


class FunctionValues(ValueSites):
    """Follows each call of a function value back to the values that may arrive there (see the module
    docstring); the program's value sites and their memo tables are `ValueSites`'."""

    def edges(self, graph_edges: list[Edge]) -> tuple[list[Edge], int]:
        """New edges for calls of function-typed values, and how many targets the rule matched."""
        have = self.index(graph_edges)
        bound = self._bound
        out: list[Edge] = []
        typed_names = self.ftypes.typed_names()
        for mod, facts in self.p.files.items():
            for call in facts.calls:
                if call.kind != "call":
                    continue
                values = self._values_for(mod, call)
                if not values and (mod.repo, mod.path, call.line, call.column) not in bound:
                    values = self.stored.values(self, mod, call)
                if not values and call.callee[-1] in typed_names \
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

    # --- which values reach a call ----------------------------------------------------------
    def _values_for(self, mod: ModuleRef, call: Call) -> list[Value]:
        chain = call.callee
        if chain[0] in ("this", "<expr>", "<literal>", "super") or chain[0].endswith("()") or len(chain) > 2:
            return self._assigned_values(mod, call) or self._parameter_property_values(mod, call)
        if len(chain) == 1 and self.p.local_function(mod, call.scope, chain[0]) is not None:
            return []
        owner = self._param_owner(mod, call.scope, chain[0])
        if owner is None:
            if len(chain) == 1:  # `function f({ onChunk }: Opts) { onChunk() }`: a destructured option
                picked = self._prop_of(mod, call.scope, chain[0])
                if picked is not None:
                    return self._unpacking(mod, call.scope, chain[0], self._param_values(*picked, 0))
                return self._result_member_values(mod, call) or self._closure_param_values(mod, call)
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

    def _result_member_values(self, mod: ModuleRef, call: Call) -> list[Value]:
        """`const { socket, release } = await acquire(…)`, then `release()`: the member of that name of the
        object literals the callee returns (a closure there is the callee's own)."""
        name = call.callee[0]
        for sc in self.p.scope_chain(mod, call.scope):
            for b in self.p.bindings_named(mod, sc, name):
                if not b.destructure_key or not b.init_callee or b.line > call.line:
                    continue
                out: list[Value] = []
                for made in self._calls_in.get((mod, b.scope), []):
                    if made.line != b.line or made.callee != b.init_callee:
                        continue
                    for target in self._out_at.get((mod.repo, mod.path, made.line, made.column), []):
                        repo, path, qual = target.split(":", 2)
                        fmod = ModuleRef(repo, path)
                        where = (f"{mod.path}:{b.line}: {name} is member {b.destructure_key!r} of what "
                                 f"{'.'.join(b.init_callee)}(…) returns",)
                        for obj in self.registries.returned_literals(fmod, qual):
                            out.extend(self._property_values(fmod, obj.object_id, b.destructure_key, where,
                                                             f"{qual} returns", 1))
                return out
            if sc is not None and self.p.bindings_named(mod, sc, name):
                return []  # bound otherwise in a nearer scope
        return []

    def _closure_param_values(self, mod: ModuleRef, call: Call) -> list[Value]:
        """`withLock(key, async (release) => { …; release() })`: a parameter of an inline closure handed to
        a function of the repos is what that function passes when it calls the closure."""
        name = call.callee[0]
        if (mod.repo, mod.path, call.line, call.column) in self._bound:
            return []  # bound already (an import, a global the resolver knows)
        found = self.declaring_closure(mod, call.scope, call.line, name, call.nested, skip=call)
        if found is None:
            return []
        outer, i, params = found
        heard = self._event_of(outer, "listen_methods") if self.events else None
        if heard is not None and params[-1] == name:
            where = (f"{mod.path}:{outer.line}: {name} is the last parameter of a listener of "
                     f"{heard[1]!r}",)
            return self._next_values(heard[1], where)
        return self._closure_arg_values(mod, outer, i, params.index(name), name)

    def _closure_arg_values(self, mod: ModuleRef, outer: Call, index: int, position: int, name: str) -> list[Value]:
        """What reaches parameter `position` of the closure handed to `outer` as argument `index`: what the
        callee passes when it calls it; for a closure a variable holds (`const install = Object.assign((ctx,
        report) => …, meta)`), what each function the variable is handed to passes when it calls it."""
        held = self.holding_variable(mod, outer, index)
        if held is None:
            return self._invoked_with(mod, outer, index, position, name)
        out: list[Value] = []
        said = f"{mod.path}:{outer.line}: {held} = {'.'.join(outer.callee)}(…) holds the closure declaring {name}"
        for call, k in self.passes_of(mod, held, outer.scope):
            out.extend(Value(v.target, (said, *v.evidence), v.passer)
                       for v in self._invoked_with(mod, call, k, position, name, held))
        return out

    def _invoked_with(self, mod: ModuleRef, outer: Call, index: int, position: int, name: str,
                      what: str = "the closure") -> list[Value]:
        """What the callees of `outer` pass at `position` when they call their parameter `index`."""
        out: list[Value] = []
        targets = self.types.exprs.callee_targets(mod, outer.scope, outer.callee, outer.line)
        for node in self._out_at.get((mod.repo, mod.path, outer.line, outer.column), []):  # a service's method
            repo, path, qual = node.split(":", 2)
            if (ref := DefRef(repo, path, qual)) not in targets:
                targets.append(ref)
        for target in targets:
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

    def arg_values(self, mod: ModuleRef, call: Call, arg: Arg, where: tuple[str, ...], depth: int) -> list[Value]:
        if arg.kind == "function":  # an inline closure: its calls belong to the function that writes it
            owner = node_id_for_scope(mod, call.scope)
            repo, path, qual = owner.split(":", 2)
            return [Value(DefRef(repo, path, qual), (*where, INLINE))]
        if arg.kind == "identifier":
            found = self.identifier_values(mod, call.scope, arg.text, where, depth)
            if not found and depth < MAX_FORWARDS:  # `check(x, report)` in a closure declaring `report`
                found = self._forwarded_closure_param(mod, call, arg.text, where)
            return found
        if arg.kind == "call":  # `w.render.bind(w)`
            return self.stored.bound(self, mod, call, arg, where)
        if arg.kind == "member" and arg.text.startswith("this.") and arg.text.count(".") == 1 and call.scope:
            cls = self.p.enclosing_class(DefRef(mod.repo, mod.path, call.scope))
            if cls is not None:
                for m in self.types.decls.find_member(cls, arg.text[5:]):
                    if m.definition is not None and m.definition.kind in CALLABLE_KINDS:
                        return [Value(DefRef(m.owner.repo, m.owner.path, m.definition.qualname), where)]
        return []

    def _forwarded_closure_param(self, mod: ModuleRef, call: Call, name: str, where: tuple[str, ...]) -> list[Value]:
        """A parameter of an enclosing inline closure handed on by name: what arrives at the closure."""
        if self._param_owner(mod, call.scope, name) is not None or self._prop_of(mod, call.scope, name) is not None \
                or self.p.local_function(mod, call.scope, name) is not None:
            return []
        found = self.declaring_closure(mod, call.scope, call.line, name, call.nested, skip=call)
        if found is None:
            return []
        outer, i, params = found
        return [Value(v.target, (*where, *v.evidence)) for v in
                self._closure_arg_values(mod, outer, i, params.index(name), name)]

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
                    for m in self.types.decls.find_member(cls, key)
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

    # --- fields assigned after construction ---------------------------------------------------
    def _parameter_property_values(self, mod: ModuleRef, call: Call) -> list[Value]:
        """`this.makeError(name)` of a constructor parameter property (`constructor(private readonly makeError:
        (n: string) => Error)`): what the callers of the constructor pass there. Held in a field, it runs for any
        caller of the method, so no passer is named."""
        chain = call.callee
        if len(chain) != 2 or chain[0] != "this" or not call.scope:
            return []
        cls = self.p.enclosing_class(DefRef(mod.repo, mod.path, call.scope))
        if cls is None:
            return []
        out: list[Value] = []
        for m in self.types.decls.find_member(cls, chain[1]):
            if m.field is None or not m.field.from_parameter:
                continue
            ctor = DefRef(m.owner.repo, m.owner.path, f"{m.owner.qualname}.constructor")
            d = self.p.defs.get(ctor)
            for i, prm in enumerate(d.params if d is not None else []):
                if prm.name == chain[1] and prm.is_property:
                    why = (f"{ctor.path}:{m.field.line}: {chain[1]} is a parameter property of {m.owner.qualname}",)
                    out.extend(Value(v.target, (*why, *v.evidence)) for v in self._param_values(ctor, i, None, 1))
                    if prm.optional and d is not None:  # what runs when a caller leaves it out
                        out.extend(self._default_values(ctor, d, chain[1], why, mod, call))
        return out

    def _default_values(self, ctor: DefRef, d: Definition, name: str, why: tuple[str, ...], mod: ModuleRef,
                        call: Call) -> list[Value]:
        """The default of a parameter property — an inline closure (the constructor writes it) or a named
        function — and the producers of its declared type (values handed over on paths not followed, as when
        nothing is followed)."""
        default = _parameter_default(d.signature, name)
        said = (*why, f"{ctor.path}:{d.line}: {name} defaults to {(default or '?')[:60]}")
        found: list[Value] = []
        if default is not None and _CLOSURE_RE.match(default):
            found = [Value(ctor, (*said, INLINE))]
        elif default is not None and default.isidentifier():
            found = self.identifier_values(ctor.module, ctor.qualname, default, said, 1)
        return found + self._typed_values(mod, call)

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
                    for m in self.types.decls.find_member(cls, a.value_text[5:]):
                        if m.definition is not None and m.definition.kind in CALLABLE_KINDS:
                            out.append(Value(DefRef(m.owner.repo, m.owner.path, m.definition.qualname), why))
        return out


_CLOSURE_RE = re.compile(r"^(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)")
_MODIFIERS_RE = re.compile(r"^(?:(?:private|public|protected|readonly|override)\s+)*")


def _parameter_default(signature: str, name: str) -> str | None:
    """`constructor(private readonly write: Writer = (t) => …)` → the default's text for `write`; None."""
    start = signature.find("(")
    if start < 0:
        return None
    depth, end = 1, -1
    for i in range(start + 1, len(signature)):
        ch = signature[i]
        if ch in "([{<":
            depth += 1
        elif ch in ")]}" or ch == ">" and signature[i - 1] != "=":
            depth -= 1
            if depth == 0:
                end = i
                break
    segments = split_top(signature[start + 1:end if end >= 0 else len(signature)], ",")
    if end < 0:  # the stored signature is cut short: its last parameter may be too
        segments = segments[:-1]
    for seg in segments:
        seg = _MODIFIERS_RE.sub("", seg)
        if not re.match(rf"{re.escape(name)}\s*[?:=]", seg):
            continue
        for i in top_level_indices(seg):
            if seg[i] == "=" and seg[i + 1:i + 2] != ">" and seg[i - 1:i] not in ("=", "!", "<", ">"):
                return seg[i + 1:].strip() or None
        return None
    return None


def _short(text: str, limit: int = 60) -> str:
    """A parameter as evidence: a long destructuring pattern is cut (the line number locates it)."""
    return text if len(text) <= limit else text[:limit].rstrip(", ") + " …"


def _seam(mod: ModuleRef, call: Call) -> str:
    return f"value:{mod.repo}:{mod.path}:{call.line}:{call.column}"


def _dedupe(edges: list[Edge]) -> list[Edge]:
    seen: dict[tuple[str, str, int, int, str | None], Edge] = {}
    for e in edges:
        seen.setdefault((e.source, e.target, e.line, e.column, e.passer), e)
    return list(seen.values())
