"""Object literals: the types an object literal has (`{ stream() { … } }` handed where an interface is
expected, or built by a factory), and the object literals that implement an interface (a part of
receiver typing; see `analyzer.resolve.receivers`). Owns the literal memo tables.
"""

from __future__ import annotations

from collections import defaultdict

from analyzer.index.model import ObjectLiteral
from analyzer.resolve.declarations import Declarations
from analyzer.resolve.expressions import Expressions
from analyzer.resolve.hierarchy import Hierarchy
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import DefRef, Program
from analyzer.resolve.typed import (
    NamedType,
    Typed,
    TypeExpr,
    alias_target,
    strip_generic,
    strip_optional,
)
from analyzer.resolve.typetext import (
    dictionary_value,
    function_type_parameters,
    function_type_return,
)


class Literals:
    """Types of object literals, and object literals per interface they implement."""

    def __init__(self, program: Program, decls: Declarations, hierarchy: Hierarchy, exprs: Expressions,
                 identity_wrappers: set[str] | None = None) -> None:
        self.p = program
        self.decls = decls
        self.hierarchy = hierarchy
        self.exprs = exprs
        self.identity_wrappers = identity_wrappers or set()
        self._object_impls: dict[DefRef, list[tuple[ModuleRef, str, str]]] | None = None
        self._object_impls_of: dict[DefRef, list[tuple[ModuleRef, str, str]]] = {}
        self._literal_cache: dict[tuple[ModuleRef, str], list[NamedType]] = {}

    def object_implementations(self, ref: DefRef) -> list[tuple[ModuleRef, str, str]]:
        """Object literals typed as `ref` or one of its sub-interfaces: returned from a function annotated
        with it (also through identity wrappers like `Object.freeze`), `satisfies`, annotated variables."""
        if self._object_impls is None:
            index: dict[DefRef, list[tuple[ModuleRef, str, str]]] = defaultdict(list)
            # Built once, from a call site (never while a receiver is being typed), so what an argument's
            # callee declares is the same for every literal passed to it in one scope: asked once each
            # (45,000 argument literals, 18,000 distinct callees on the real repos).
            wrapped: dict[tuple[ModuleRef, str, str | None], tuple[ModuleRef, str] | None] = {}
            for mod in self.p.files:
                for obj in self.p.objects(mod):
                    for nt in self.literal_types(mod, obj, wrapped=wrapped):
                        index[nt.ref].append((mod, obj.object_id, nt.evidence[0]))
            self._object_impls = index
        out = self._object_impls_of.get(ref)
        if out is None:  # memoised (do not mutate): both indexes are fixed once built
            out = list(self._object_impls.get(ref, []))
            for sub, _ in self.hierarchy.subtypes(ref):
                out.extend(self._object_impls.get(sub, []))
            self._object_impls_of[ref] = out
        return out

    def literal_types(self, mod: ModuleRef, obj: ObjectLiteral, depth: int = 0,
                       wrapped: dict[tuple[ModuleRef, str, str | None], tuple[ModuleRef, str] | None] | None = None,
                       ) -> list[NamedType]:
        """The declared types an object literal gets from where it stands: its annotation / `satisfies`, the
        parameter it is passed to, the member of an enclosing typed literal (`{ store: { subscribe() {} } }`
        typed `{ store: Store }`), or the typed field or variable it is assigned to (`this.face = {…}`)."""
        key = (mod, obj.object_id)
        cached = self._literal_cache.get(key)
        if cached is None:
            self._literal_cache[key] = []  # cycle guard
            cached = self._literal_cache[key] = self._literal_types_uncached(mod, obj, depth, wrapped)
        return cached

    def _literal_types_uncached(self, mod: ModuleRef, obj: ObjectLiteral, depth: int,
                                wrapped: dict[tuple[ModuleRef, str, str | None], tuple[ModuleRef, str] | None]
                                | None) -> list[NamedType]:
        if obj.holder_type:
            typed: tuple[ModuleRef, str] | None = (mod, obj.holder_type)
        elif wrapped is None:
            typed = self._wrapped_return_type(mod, obj.holder, obj.scope)
        else:  # memo of the object-implementations index (see there)
            memo = (mod, obj.holder, obj.scope)
            if memo not in wrapped:
                wrapped[memo] = self._wrapped_return_type(mod, obj.holder, obj.scope)
            typed = wrapped[memo]
        if typed is None and obj.holder.startswith("argument:") and "." in obj.holder:
            # `ctx.inject([…], (c) => c.registry.register({ … }))`: a receiver rooted in a closure parameter is
            # typed by the call the closure is passed to, so only read at the literal's own line
            typed = self._wrapped_return_type(mod, obj.holder, obj.scope, obj.line)
        if typed:
            type_mod, holder_type = typed
            why = f"{mod.path}:{obj.line}: object literal ({obj.holder}) typed {holder_type}"
            return self.decls.resolve_text(type_mod, holder_type, why)
        out: list[NamedType] = []
        if obj.holder == "return" and obj.nested == 0 and obj.scope is not None and depth < 4:
            # `faceOf: (key) => { return { … } }` in a literal whose type declares `faceOf: (key: string) => Face`
            d = self.p.defs.get(DefRef(mod.repo, mod.path, obj.scope))
            owner = self.p.object_literal(mod, d.object_id) if d is not None and d.object_id else None
            if d is not None and owner is not None and d.kind == "object_method":
                for pt in self.literal_types(mod, owner, depth + 1):
                    why = (f"{mod.path}:{obj.line}: object literal returned by {d.name} of a literal typed "
                           f"{pt.ref.qualname}")
                    for m in self.decls.find_member(pt.ref, d.name):
                        ret = m.definition.return_type if m.definition is not None else \
                            function_type_return(strip_optional(m.field.type)) if m.field and m.field.type else None
                        if ret:
                            out.extend(self.decls.resolve_text(m.owner.module, ret, f"{why} ({ret})"))
        elif obj.holder == "return" and obj.returned_to:
            out.extend(self._callback_return_types(mod, obj))
        elif obj.holder.startswith("property:") and depth < 4:
            parent_id, _, key = obj.holder[len("property:"):].partition(".")
            parent = self.p.object_literal(mod, parent_id)
            if parent is not None:
                for pt in self.literal_types(mod, parent, depth + 1):
                    why = f"{mod.path}:{obj.line}: object literal is {key!r} of a literal typed {pt.ref.qualname}"
                    for t in self.exprs.member_types(pt, key):
                        out.extend(self.decls.as_named(t, why))
                for inline in self.literal_inline(mod, parent, depth + 1):
                    why = f"{mod.path}:{obj.line}: object literal is {key!r} of a literal typed {inline.text[:60]}"
                    for t in self.exprs.members_of(inline, key):
                        out.extend(self.decls.as_named(t, f"{why} ({inline.evidence})"))
                for value in self._dictionary_values(mod, parent, depth + 1):
                    out.extend(self.decls.as_named(value, f"{mod.path}:{obj.line}: object literal is {key!r} of a "
                                                          "dictionary"))
        elif obj.holder.startswith("field:"):  # `readonly scheduler: Scheduler = { … }`
            owner_name, _, name = obj.holder[len("field:"):].rpartition(".")
            if name.endswith("]") and "[" in obj.holder:  # a computed key may hold dots: `[Keys.A]`
                cut = obj.holder.rfind(".[")
                owner_name, name = obj.holder[len("field:"):cut], obj.holder[cut + 1:]
            ref = DefRef(mod.repo, mod.path, owner_name)
            fld = self.p.fields(ref).get(name)
            if fld is not None and fld.type:
                why = f"{mod.path}:{obj.line}: object literal initialises {owner_name}.{name}: {fld.type}"
                out.extend(self.decls.resolve_text(mod, fld.type, why))
        elif obj.holder.startswith("assign:") and depth < 4:
            chain = obj.holder[len("assign:"):].split(".")
            why = f"{mod.path}:{obj.line}: object literal assigned to {'.'.join(chain)}"
            for t in self.exprs.chain_types(mod, obj.scope, chain, obj.line):
                out.extend(self.decls.as_named(t, why))
        return out

    def _callback_return_types(self, mod: ModuleRef, obj: ObjectLiteral) -> list[NamedType]:
        """`ui.custom((tui, done) => { …; return { render() {…} } })` with `custom(factory: (…) => Component)`:
        the literal the closure returns is typed by the return type of that parameter's function type."""
        callee, _, index = (obj.returned_to or "").rpartition(":")
        if not callee or not index.isdigit():
            return []
        i = int(index)
        out: list[NamedType] = []
        chain = callee.replace("?.", ".").split(".")
        targets = self.exprs.callee_targets(mod, obj.scope, chain, obj.line)
        if not targets:  # a function-typed value: `open: <R>(make: () => Widget) => R`
            for t in self.exprs.chain_types(mod, obj.scope, chain, obj.line):
                if not isinstance(t, TypeExpr):
                    continue
                params = function_type_parameters(strip_generic(strip_optional(t.text)))
                ret = function_type_return(strip_optional(params[i])) if i < len(params) and params[i] else None
                if ret:
                    why = f"{mod.path}:{obj.line}: object literal returned by the closure passed to {callee} ({t.text})"
                    out.extend(self.decls.resolve_text(t.mod, ret, why))
        for target in targets:
            target = self.decls.constructor_of(target)
            d = self.p.defs.get(target)
            declared = d.params[i].type if d is not None and i < len(d.params) else None
            ret = function_type_return(strip_optional(declared)) if declared else None
            if ret:
                why = (f"{mod.path}:{obj.line}: object literal returned by the closure passed to {callee} "
                       f"(parameter {i + 1} of {target.qualname}: {declared})")
                out.extend(self.decls.resolve_text(target.module, ret, why))
        return out

    def literal_inline(self, mod: ModuleRef, obj: ObjectLiteral, depth: int) -> list[TypeExpr]:
        """Inline object types a literal is declared with (`(): Injected => ({ hooks: { sections: {…} } })` with
        `hooks: { sections: Observable }`): not named, so `literal_types` has nothing to return for them, but
        their members type the literals nested inside."""
        if obj.holder_type:
            inline = obj.holder_type.lstrip().startswith("{")
            return [TypeExpr(mod, obj.holder_type, f"{mod.path}:{obj.line}: object literal typed "
                                                   f"{obj.holder_type[:60]}")] if inline else []
        out: list[TypeExpr] = []
        if obj.holder.startswith("property:") and depth < 4:
            parent_id, _, key = obj.holder[len("property:"):].partition(".")
            parent = self.p.object_literal(mod, parent_id)
            if parent is not None:
                declared: list[Typed] = [*self.literal_types(mod, parent, depth + 1),
                                         *self.literal_inline(mod, parent, depth + 1)]
                for t in declared:
                    out.extend(m for m in self.exprs.members_of(t, key)
                               if isinstance(m, TypeExpr) and m.text.lstrip().startswith("{"))
                out.extend(v for v in self._dictionary_values(mod, parent, depth + 1)
                           if v.text.lstrip().startswith("{"))
        return out

    def _dictionary_values(self, mod: ModuleRef, obj: ObjectLiteral, depth: int) -> list[TypeExpr]:
        """The value type of a literal declared as a dictionary — `Record<string, Handler>`, `{ [k: string]: H }`,
        a mapped type `{ [K in keyof M]: {…} }`, or an alias of one: every member of the literal is a value."""
        texts: list[tuple[ModuleRef, str, str]] = []
        if obj.holder_type:
            texts.append((mod, obj.holder_type, f"{mod.path}:{obj.line}: typed {obj.holder_type[:60]}"))
        for nt in self.literal_types(mod, obj, depth):
            d = self.p.defs[nt.ref]
            if d.kind == "type_alias":
                rhs = alias_target(d.signature) or d.signature.partition("=")[2].strip()
                texts.append((nt.ref.module, rhs, f"{nt.ref.path}:{d.line}: type {d.name}"))
        out: list[TypeExpr] = []
        for tmod, text, why in texts:
            value = dictionary_value(text)
            if value:
                out.append(TypeExpr(tmod, value, f"{why}: a dictionary of {value[:60]}"))
        return out

    def _wrapped_return_type(self, mod: ModuleRef, holder: str, scope: str | None,
                             line: int = 0) -> tuple[ModuleRef, str] | None:
        """The type an object-literal argument gets from its call: `return Object.freeze({…})` returns the
        literal itself (rules: identity_wrappers), so it has the function's return type; `f({…})` gives it
        f's parameter annotation (contextual typing), wherever f is declared."""
        if not holder.startswith("argument:") or holder.count(":") < 2:
            return None
        _, callee, index = holder.rsplit(":", 2)
        if callee in self.identity_wrappers:
            if index != "0" or scope is None:
                return None
            d = self.p.defs.get(DefRef(mod.repo, mod.path, scope))
            return (mod, d.return_type) if d is not None and d.return_type else None
        if not index.isdigit():
            return None
        for target in self.exprs.callee_targets(mod, scope, callee.split("."), line):
            target = self.decls.constructor_of(target)
            d = self.p.defs.get(target)
            if d is not None and int(index) < len(d.params) and d.params[int(index)].type:
                return target.module, d.params[int(index)].type or ""
        return None
