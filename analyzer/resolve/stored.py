"""Function values kept in a collection, and `fn.bind(x)` handed on as a value.

`this.listeners.add(listener)` in `subscribe`, then `for (const l of this.listeners) l(…)` (or
`this.listeners.forEach((l) => l(…))`) in `notify`: what runs is whatever was added to the same field (same
declaring type, as for an assigned field) or the same variable. The value added is followed like an argument
(a function, a closure — its writer's, a parameter — what its callers pass). Stored, it runs whenever the
collection is walked, not only inside the caller that added it, so no edge names a passer.
`w.render.bind(w)` / `flush.bind(null)` / `function () {…}.bind(this)` is the function bound.
"""

from __future__ import annotations

import re
from collections import defaultdict

from analyzer.index.model import Arg, Call
from analyzer.resolve.calls import node_id_for_scope
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import DefRef
from analyzer.resolve.typetext import arrow_parameters
from analyzer.resolve.valueflow import Value, ValueFollower
from analyzer.rules.typescript import typescript

# method → the argument that is the element; methods handing each element to a callback (rules/typescript.toml)
ADD_METHODS = typescript().add_methods
BINDABLE = ("function", "method", "object_method")
ELEMENT_CALLBACKS = typescript().element_callbacks
_CLOSURE_HEAD = re.compile(r"^\s*(?:async\s+)?(?:function\b|\()")
INLINE = "an inline closure: its calls belong to this function"


class StoredValues:
    def __init__(self) -> None:
        # the pass is handed to each call (as the `ValueFollower` interface), not kept: the pass owns this
        # helper, and a cycle between them would keep every memo table of the pass alive through graph
        # assembly (the build runs with the cyclic GC paused); a weak proxy would do too, but compiled
        # (mypyc) classes take no weak references
        self._adds: dict[str, list[tuple[ModuleRef, Call]]] | None = None
        self._walks: dict[tuple[ModuleRef, str | None], dict[str, list[Call]]] = {}

    def _added(self, fv: ValueFollower) -> dict[str, list[tuple[ModuleRef, Call]]]:
        """Calls that put something in a collection, by the collection's last name (`listeners`)."""
        if self._adds is None:
            self._adds = defaultdict(list)
            for mod, facts in fv.p.files.items():
                for call in facts.calls:
                    if len(call.callee) >= 2 and call.callee[-1] in ADD_METHODS \
                            and len(call.args) > ADD_METHODS[call.callee[-1]]:
                        self._adds[call.callee[-2]].append((mod, call))
        return self._adds

    def values(self, fv: ValueFollower, mod: ModuleRef, call: Call) -> list[Value]:
        """`l(…)` where `l` walks a collection: what was added to it."""
        if len(call.callee) != 1:
            return []
        found = self._collection(fv, mod, call)
        if found is None:
            return []
        scope, chain, line, how = found
        out: list[Value] = []
        for amod, add in self._added(fv).get(chain[-1], []):
            if not self._same_collection(fv, mod, scope, chain, line, amod, add):
                continue
            arg = add.args[ADD_METHODS[add.callee[-1]]]
            why = (f"{mod.path}:{call.line}: {call.callee[0]} {how} {'.'.join(chain)}",
                   f"{amod.path}:{add.line}: {'.'.join(add.callee)}({arg.text[:60]}) stores it")
            out.extend(self._stored(val) for val in self.arg_values(fv, amod, add, arg, why))
        return out

    def _stored(self, v: Value) -> Value:
        return Value(v.target, v.evidence, None)

    def _collection(self, fv: ValueFollower, mod: ModuleRef,
                    call: Call) -> tuple[str | None, list[str], int, str] | None:
        """(scope, chain, line, how) of the collection `call`'s callee is an element of, if it walks one."""
        name = call.callee[0]
        for sc in fv.p.scope_chain(mod, call.scope):
            walks = [b for b in fv.p.bindings_named(mod, sc, name) if b.kind == "for_of" and b.init_chain
                     and b.line <= call.line]
            if walks:
                b = max(walks, key=lambda b: b.line)
                return b.scope, list(b.init_chain or []), b.line, "is an element of"
            if fv.p.bindings_named(mod, sc, name):
                break  # another binding of the name is nearer
        if not call.nested:
            return None
        outers = [c for c in self._element_walks(fv, mod, call.scope).get(name, ()) if c.line <= call.line]
        if not outers:
            return None
        outer = max(outers, key=lambda c: (c.line, c.column))
        return outer.scope, outer.callee[:-1], outer.line, f"is each element {outer.callee[-1]} hands over of"

    def _element_walks(self, fv: ValueFollower, mod: ModuleRef, scope: str | None) -> dict[str, list[Call]]:
        """First parameter name → the `xs.forEach((x) => …)`-like calls in `scope` whose closure takes it, in
        call order (built once per scope: every nested call of a scope asked this, each parsing every sibling
        closure's parameters again)."""
        key = (mod, scope)
        found = self._walks.get(key)
        if found is None:
            found = {}
            for c in fv.closure_calls(mod, scope):
                if len(c.callee) < 2 or c.callee[-1] not in ELEMENT_CALLBACKS:
                    continue
                for a in c.args:
                    if a.kind == "function" and (first := arrow_parameters(a.text)[:1]):
                        calls = found.setdefault(first[0], [])
                        if not calls or calls[-1] is not c:
                            calls.append(c)
            self._walks[key] = found
        return found

    def _same_collection(self, fv: ValueFollower, mod: ModuleRef, scope: str | None, chain: list[str], line: int,
                         amod: ModuleRef, add: Call) -> bool:
        """The add call's receiver is the walked collection: the same field of the same declaring type, or
        the same variable binding."""
        target = add.callee[:-1]
        if len(chain) >= 2:
            if len(target) < 2:
                return False
            owners = fv.field_owners(mod, scope, chain[:-1], line, chain[-1])
            return bool(owners and owners & fv.field_owners(amod, add.scope, target[:-1], add.line, target[-1]))
        if len(target) != 1 or amod != mod:
            return False
        here = self._binding_of(fv, mod, scope, chain[0])
        return here == self._binding_of(fv, amod, add.scope, target[0]) is not None

    def _binding_of(self, fv: ValueFollower, mod: ModuleRef, scope: str | None,
                    name: str) -> tuple[str | None, int] | None:
        for sc in fv.p.scope_chain(mod, scope):
            found = [b for b in fv.p.bindings_named(mod, sc, name) if b.kind != "for_of"]
            if found:
                return found[0].scope, found[0].line
        return None

    def arg_values(self, fv: ValueFollower, mod: ModuleRef, call: Call, arg: Arg,
                   where: tuple[str, ...]) -> list[Value]:
        """An added value followed like an argument, `fn.bind(x)` included."""
        if arg.kind == "call":
            return self.bound(fv, mod, call, arg, where)
        return fv.arg_values(mod, call, arg, where, 1)

    def bound(self, fv: ValueFollower, mod: ModuleRef, call: Call, arg: Arg, where: tuple[str, ...]) -> list[Value]:
        """`w.render.bind(w)` → w.render's definition; `function () {…}.bind(this)` → the writer's closure."""
        text = arg.text
        if not text.endswith(".bind"):
            return []
        fn = text[: -len(".bind")]
        why = (*where, f"{mod.path}:{call.line}: {text}(…) is {fn[:60]} with its this bound")
        if _CLOSURE_HEAD.match(fn):
            repo, path, qual = node_id_for_scope(mod, call.scope).split(":", 2)
            return [Value(DefRef(repo, path, qual), (*why, INLINE))]
        if not re.match(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$", fn):
            return []
        chain = fn.split(".")
        if len(chain) == 1:
            return fv.identifier_values(mod, call.scope, fn, why, 1)
        # only a function or method is bound: `ctx.locale.bind('ns')` of a getter or field is another `bind`
        return [Value(t, why) for t in fv.types.exprs.callee_targets(mod, call.scope, chain, call.line)
                if (d := fv.p.defs.get(t)) is not None and d.kind in BINDABLE]
