"""Receiver typing: which class or interface a call's receiver is, and why.

Types come only from static facts — annotations, `new X()`, parameter properties, return types
(annotated, or the class a function `return new`s), module augmentations, `extends` — each carried
with the evidence line that justified it. Nothing is guessed from names here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import NamedTuple

from analyzer.index.model import CALL_SIGNATURE_FIELD, Binding, Call, Definition, Field, ObjectLiteral
from analyzer.index.types import base_name
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import TYPE_KINDS, DefRef, Program
from analyzer.resolve.symbols import Symbol, SymbolResolver
from analyzer.resolve.typetext import (
    arrow_parameters,
    dictionary_value,
    function_type_parameters,
    function_type_return,
    named_types,
    object_pattern_names,
    object_type_members,
    split_top,
    type_arguments,
)

MAX_DEPTH = 12
BUILTIN_ELEMENT_METHODS = {
    "Map": {"get": 1}, "ReadonlyMap": {"get": 1}, "WeakMap": {"get": 1},
    "Array": {"at": 0, "find": 0, "pop": 0, "shift": 0}, "ReadonlyArray": {"at": 0, "find": 0},
}
# Callbacks of the built-in collections: `xs.map((x) => …)` gives x the element type (TypeScript infers it
# from the generic signature). Method → which type argument each callback parameter gets, by position.
CALLBACK_ELEMENTS: dict[str, dict[str, tuple[int, ...]]] = {
    "Array": {m: (0,) for m in ("map", "forEach", "filter", "find", "findIndex", "findLast", "findLastIndex",
                                "some", "every", "flatMap", "sort", "toSorted")},
    "Set": {"forEach": (0,)}, "ReadonlySet": {"forEach": (0,)},
    "Map": {"forEach": (1, 0)}, "ReadonlyMap": {"forEach": (1, 0)},
}
CALLBACK_ELEMENTS["ReadonlyArray"] = CALLBACK_ELEMENTS["Array"]
ITERATOR_ELEMENTS = {"Map": {"values": 1, "keys": 0}, "ReadonlyMap": {"values": 1, "keys": 0},
                     "Set": {"values": 0, "keys": 0}, "ReadonlySet": {"values": 0, "keys": 0},
                     "Array": {"values": 0}, "ReadonlyArray": {"values": 0}}
SAME_ARRAY_METHODS = ("filter", "slice", "sort", "toSorted", "reverse", "toReversed", "concat")
MIXIN_TYPES = ("Pick", "Omit")  # `interface C extends Pick<Fiber, 'effect'>`: members mixed in at run time
SPREAD_ITERABLES = {"Set", "ReadonlySet", "Array", "ReadonlyArray", "Iterable", "IterableIterator", "Iterator",
                    "MapIterator", "SetIterator", "ArrayIterator", "Generator"}
_SCOPED_RETURN_TYPE_RE = re.compile(r"\s*(?:(?:NonNullable|Awaited)<\s*)*ReturnType<\s*typeof\s+"
                                    r"([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)\s*(?:<\s*(['\"])([^'\"]*)\2\s*>)?"
                                    r"\s*>(?:\s*>)*\s*")
_RETURN_TYPE_RE = re.compile(r"ReturnType<\s*typeof\s+([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*>")
_IMPORT_TYPE_RE = re.compile(r"import\(\s*['\"]([^'\"]+)['\"]\s*\)\.([A-Za-z_$][\w$]*)")
_KEYED_RE = re.compile(r"^([A-Za-z_$][\w$.]*)\[\s*([A-Z][\w$]*)\s*\]$")  # `this[K]`, `Services[K]`
_INDEXED_RE = re.compile(r"^\s*([A-Za-z_$][\w$.]*(?:<[^\[\]]*>)?)\[\s*['\"]([A-Za-z_$][\w$]*)['\"]\s*\]\s*$")


class TypeExpr(NamedTuple):
    """A type written somewhere (`text` is resolved in `mod`), with why the receiver has it.

    This and the other typing results are named tuples rather than frozen dataclasses: resolution makes
    millions of them, and a frozen dataclass's `__init__` (one `object.__setattr__` per field) cost 2× more."""

    mod: ModuleRef
    text: str
    evidence: str


class NamedType(NamedTuple):
    """A resolved class / interface / type alias. `static` marks the class object itself (`C.m()`)."""

    ref: DefRef
    evidence: tuple[str, ...]
    static: bool = False
    mixin: str | None = None  # reached through `extends Pick<…>`/`Omit<…>`: the line that says so


class NamespaceType(NamedTuple):
    module: ModuleRef
    evidence: tuple[str, ...]


Typed = TypeExpr | NamedType | NamespaceType


class Member(NamedTuple):
    """A member found on a type: a callable definition or a field."""

    owner: DefRef
    definition: Definition | None
    field: Field | None
    mixin: str | None = None  # found through a Pick/Omit heritage (a runtime mixin): the evidence line


class Types:
    def __init__(self, program: Program, symbols: SymbolResolver, identity_wrappers: set[str] | None = None) -> None:
        self.p = program
        self.symbols = symbols
        self.identity_wrappers = identity_wrappers or set()
        self._impl_index: dict[DefRef, list[tuple[DefRef, str]]] | None = None
        self._object_impls: dict[DefRef, list[tuple[ModuleRef, str, str]]] | None = None
        self._object_impls_of: dict[DefRef, list[tuple[ModuleRef, str, str]]] = {}
        self._subtypes: dict[DefRef, list[tuple[DefRef, str]]] = {}
        self._implementations: dict[DefRef, list[tuple[DefRef, str]]] = {}
        self._resolved: dict[tuple[ModuleRef, str], list[NamedType]] = {}
        self._text_cache: dict[tuple[ModuleRef, str], list[NamedType]] = {}
        # (module, text, evidence) → the NamedTypes resolve_text made: a pure function of the cached base
        self._typed_cache: dict[tuple[ModuleRef, str, str], list[NamedType]] = {}
        self._member_cache: dict[tuple[DefRef, str], list[Member]] = {}
        self._having: dict[tuple[ModuleRef, str, str, str], tuple[bool, list[NamedType]]] = {}
        self._having_base: dict[tuple[ModuleRef, str, str], tuple[bool, list[NamedType]]] = {}
        self._scope_params: dict[tuple[ModuleRef, str], dict[str, tuple[Definition, int, str | None]]] = {}
        self._closure_index: dict[tuple[ModuleRef, str | None], dict[str, list[tuple[Call, int, list[str]]]]] = {}
        self._super_cache: dict[DefRef, list[NamedType]] = {}
        self._aug_cache: dict[DefRef, list[NamedType]] = {}
        self._scope_calls: dict[ModuleRef, dict[str | None, list]] = {}
        self._param_cache: dict[tuple[ModuleRef, str, int], list[Typed]] = {}
        self._literal_cache: dict[tuple[ModuleRef, str], list[NamedType]] = {}
        self._returning: set[DefRef] = set()
        self._binding_cache: dict[tuple[ModuleRef, str | None, str, int, int], list[Typed]] = {}
        self._aug_by_name: dict[str, list[tuple[str, list[DefRef]]]] = defaultdict(list)
        self._namespaces: dict[tuple[ModuleRef, str], bool] = {}  # does the module declare namespace name?
        for (spec, name), refs in program.augmentations.items():
            self._aug_by_name[name].append((spec, refs))

    # --- named types --------------------------------------------------------------------------
    def resolve_text(self, mod: ModuleRef, text: str | None, evidence: str) -> list[NamedType]:
        if not text:
            return []
        made = self._typed_cache.get((mod, text, evidence))
        if made is not None:  # the same type written at the same place: ~9 in 10 calls on real repos
            return list(made)
        made = [NamedType(nt.ref, (evidence, *nt.evidence), nt.static) for nt in self._text_types(mod, text)]
        self._typed_cache[(mod, text, evidence)] = made
        return list(made)

    def _text_types(self, mod: ModuleRef, text: str) -> list[NamedType]:
        """The types `text` names in `mod`, without the evidence of where it is written (memoised; do not
        mutate): `resolve_text` prefixes that evidence."""
        key = (mod, text)
        base = self._text_cache.get(key)
        if base is None:
            if "import(" in text:  # `import('./slots.ts').SlotRegistry`: an inline import type
                base = self._import_types(mod, text)
                text = _IMPORT_TYPE_RE.sub("unknown", text)
            else:
                base = []
            if "ReturnType<typeof " in text:  # `kb: ReturnType<typeof getKeybindings>`: what that function returns
                self._text_cache[key] = []  # a function returning its own ReturnType<…> must not recurse
                base += self._return_type_of(mod, text)
                text = _RETURN_TYPE_RE.sub("unknown", text)
            base += [nt for name in named_types(text) for nt in self.resolve_name(mod, name)]
            self._text_cache[key] = base
        return base

    def _return_type_of(self, mod: ModuleRef, text: str) -> list[NamedType]:
        """`ReturnType<typeof f>` / `ReturnType<typeof ns.f>`: the named types `f`'s declared or inferred return
        type resolves to (a `Promise<X>` gives X, as everywhere in receiver typing)."""
        out: list[NamedType] = []
        for m in _RETURN_TYPE_RE.finditer(text):
            chain = m.group(1).split(".")
            for ref in self.callee_targets(mod, None, chain, 0):
                why = f"{mod.path}: ReturnType<typeof {m.group(1)}> is what {ref.qualname} returns"
                for t in self.return_types(ref):
                    if isinstance(t, TypeExpr):
                        out.extend(self.resolve_text(t.mod, t.text, f"{why} ({t.evidence})"))
                    elif isinstance(t, NamedType):
                        out.append(NamedType(t.ref, (why, *t.evidence), t.static, t.mixin))
        return out

    def _dynamic_import_types(self, mod: ModuleRef, scope: str | None, line: int) -> list[Typed]:
        facts = self.p.files.get(mod)
        out: list[Typed] = []
        for imp in facts.dynamic_imports if facts is not None else []:
            if imp.scope != scope or imp.line != line:
                continue
            res = self.p.resolver.resolve(mod.repo, mod.path, imp.specifier)
            if res.module is not None:
                out.append(NamespaceType(res.module, (f"{mod.path}:{line}: import({imp.specifier!r}) ({res.how})",)))
        return out

    def _import_types(self, mod: ModuleRef, text: str) -> list[NamedType]:
        out: list[NamedType] = []
        for m in _IMPORT_TYPE_RE.finditer(text):
            res = self.p.resolver.resolve(mod.repo, mod.path, m.group(1))
            sym = self.symbols.resolve_export(res.module, m.group(2)) if res.module is not None else None
            if sym is not None and sym.definition is not None and self.p.defs[sym.definition].kind in TYPE_KINDS:
                out.append(NamedType(sym.definition, (f"{mod.path}: import({m.group(1)!r}).{m.group(2)} ({res.how})",
                                                      *sym.evidence)))
        return out

    def indexed_member(self, owner: DefRef, f: Field) -> tuple[list[NamedType], str] | None:
        """A field declared `register: SlotCore['register']`: (SlotCore's types, "register")."""
        m = _INDEXED_RE.match(f.type or "")
        if m is None:
            return None
        why = f"{owner.path}:{f.line}: {f.owner}.{f.name}: {f.type}"
        return self.resolve_text(owner.module, m.group(1), why), m.group(2)

    def resolve_name(self, mod: ModuleRef, name: str) -> list[NamedType]:
        key = (mod, name)
        if key in self._resolved:
            return self._resolved[key]
        self._resolved[key] = []
        out: list[NamedType] = []
        head, _, tail = name.partition(".")
        sym = self.symbols.resolve_name(mod, head)
        if sym is not None and tail and sym.namespace is not None:
            sym = self.symbols.resolve_export(sym.namespace, tail)
        elif tail and "." not in tail:  # `Plugin.Function`, also when `type Plugin` merges with the namespace
            sym = self._namespace_member(mod, head, tail, sym) or sym
        if sym is not None and sym.definition is not None:
            d = self.p.defs.get(sym.definition)
            if d is not None and d.kind in TYPE_KINDS:
                out.append(NamedType(sym.definition, sym.evidence))
            half = self.p.merged_half(sym.definition)  # `type CallId` merged with `function CallId`
            if half is not None and d is not None and d.kind not in TYPE_KINDS \
                    and self.p.defs[half].kind in TYPE_KINDS:
                out.append(NamedType(half, (*sym.evidence, f"{half.path}:{self.p.defs[half].line}: "
                                                          f"{self.p.defs[half].kind} {name} merges with it")))
        # module augmentations: `declare module 'spec' { interface Name { … } }` merge into Name
        if not tail:
            for imp in self.symbols.imports_of(mod, head):
                real = bool(out) or self.p.resolver.resolve(mod.repo, mod.path, imp.specifier).module is not None
                for aug_ref in self.p.augmentations.get((imp.specifier, imp.imported), []):
                    d = self.p.defs[aug_ref]
                    if real and d.kind != "interface":
                        # only interfaces merge: a `declare module 'pkg' { class Service }` elsewhere (a test
                        # fixture's .d.ts) is another declaration of a real module, not part of it
                        continue
                    out.append(NamedType(aug_ref, (f"{aug_ref.path}:{d.line}: declare module "
                                                   f"{imp.specifier!r} augments {imp.imported}",)))
        have = {o.ref for o in out}
        for aug in self._augmentations_of(out):
            if aug.ref not in have:
                have.add(aug.ref)
                out.append(aug)
        self._resolved[key] = out
        return out

    def _namespace_member(self, mod: ModuleRef, head: str, tail: str,  # type: ignore[no-untyped-def]
                          merged: Symbol | None):
        """`Plugin.Function` where `export namespace Plugin { export interface Function … }` is declared in this
        module or the one `Plugin` is imported from. Extraction flattens a TypeScript namespace (its members are
        the module's top-level definitions, `export Plugin` names no declaration), so the member is the
        declaring module's top-level `tail`. A namespace may merge with a type or class of its name
        (`type Plugin = Plugin.Function | …`): the member still wins over that declaration."""
        declaring = mod
        if merged is not None and merged.definition is not None:  # declared (maybe behind a barrel) with it
            declaring, head = merged.definition.module, self.p.defs[merged.definition].name
        for imp in self.symbols.imports_of(mod, head)[:1] if declaring == mod else ():
            res = self.p.resolver.resolve(mod.repo, mod.path, imp.specifier)
            if res.module is None or imp.imported == "*":
                return None
            declaring, head = res.module, imp.imported
        if not self._has_namespace(declaring, head):
            return None
        d = self.p.top_level(declaring).get(tail)
        if d is None:
            return None
        return Symbol(definition=DefRef(declaring.repo, declaring.path, d.qualname),
                      evidence=(f"{declaring.path}:{d.line}: {d.kind} {tail} of namespace {head} (flattened)",))

    def _augmentations_of(self, found: list[NamedType]) -> list[NamedType]:
        """A real declaration also merges the augmentations written against its package name."""
        extra: list[NamedType] = []
        for nt in found:
            cached = self._aug_cache.get(nt.ref)
            if cached is not None:
                extra.extend(cached)
                continue
            start = len(extra)
            d = self.p.defs[nt.ref]
            for spec, refs in self._aug_by_name.get(d.name, []):
                name = d.name
                if nt.ref in refs:
                    continue
                # `declare module './context.ts'` is relative to the augmenting file, a package name is not
                groups = [(a.repo, a.path, [a]) for a in refs] if spec.startswith(".") else \
                    [(nt.ref.repo, nt.ref.path, refs)]
                for repo, path, augs in groups:
                    res = self.p.resolver.resolve(repo, path, spec)
                    target = self.symbols.resolve_export(res.module, name) if res.module is not None else None
                    if target is not None and target.definition == nt.ref:
                        for aug in (a for a in augs if self.p.defs[a].kind == "interface"):  # only interfaces merge
                            extra.append(NamedType(aug, (f"{aug.path}:{self.p.defs[aug].line}: augments {name}",)))
            self._aug_cache[nt.ref] = extra[start:]
        return extra

    def supertypes(self, ref: DefRef) -> list[NamedType]:
        cached = self._super_cache.get(ref)
        if cached is not None:
            return cached
        d = self.p.defs.get(ref)
        out: list[NamedType] = []
        if d is not None:
            for text in (*d.extends, *d.implements):
                why = f"{ref.path}:{d.line}: {d.name} extends/implements {text}"
                head = text.split("<", 1)[0].strip()
                if head in MIXIN_TYPES and type_arguments(text):
                    out.extend(NamedType(nt.ref, nt.evidence, mixin=why)
                               for nt in self.resolve_text(ref.module, type_arguments(text)[0], why))
                    continue
                out.extend(self.resolve_text(ref.module, text, why))
            if d.kind == "type_alias":  # `export type ClientContext = Context`: the aliased types' members
                rhs = _alias_target(d.signature)
                if rhs:
                    out.extend(self.resolve_text(ref.module, rhs, f"{ref.path}:{d.line}: type {d.name} = {rhs}"))
            if d.kind in ("class", "interface") and not d.ambient_module:  # `this.fiber` inside the class itself
                out.extend(self._augmentations_of([NamedType(ref, ())]))
            for other in self.p.redeclared(ref):  # `interface L extends A {}` + `interface L extends B {}`
                od = self.p.defs[other]
                out.append(NamedType(other, (f"{other.path}:{od.line}: interface {d.name} is declared again here "
                                             f"(merged)",)))
            half = self.p.merged_half(ref)
            if half is not None and d.kind == "class":  # `interface C` merged into `class C`: its members too
                hd = self.p.defs[half]
                out.append(NamedType(half, (f"{half.path}:{hd.line}: interface {d.name} merges into class {d.name}",)))
        self._super_cache[ref] = out
        return out

    # --- members ------------------------------------------------------------------------------
    def types_having(self, mod: ModuleRef, text: str, evidence: str, name: str) -> tuple[bool, list[NamedType]]:
        """(does `text` name any indexed type, `resolve_text(mod, text, evidence)` but only the types that have
        a member `name`). Memoised per (module, text, name) and per evidence: a `Context` with 98 module
        augmentations was asked for the member 98 times at every `ctx.x` step, and 98 evidence-prefixed types
        made, though most augmentations lack the member. Exact anywhere, even mid-typing: neither
        `resolve_text` nor `find_member` reaches back into expression typing, so their cycle guards are never
        in progress when this asks them, and their answers are final. Do not mutate the list."""
        key = (mod, text, evidence, name)
        found = self._having.get(key)
        if found is None:
            known, having = False, []
            if text:
                base_key = (mod, text, name)
                in_base = self._having_base.get(base_key)
                if in_base is None:
                    base, find = self._text_types(mod, text), self.find_member
                    in_base = self._having_base[base_key] = (bool(base), [nt for nt in base if find(nt.ref, name)])
                known = in_base[0]
                having = [NamedType(nt.ref, (evidence, *nt.evidence), nt.static) for nt in in_base[1]]
            found = self._having[key] = (known, having)
        return found

    def find_member(self, ref: DefRef, name: str, depth: int = 0) -> list[Member]:
        """Own member first, then inherited (extends/implements), like TypeScript's lookup."""
        key = (ref, name)
        cached = self._member_cache.get(key)
        if cached is not None:
            return cached
        self._member_cache[key] = []  # cycle guard (a extends b extends a)
        found = self._find_member(ref, name, depth)
        self._member_cache[key] = found
        return found

    def _find_member(self, ref: DefRef, name: str, depth: int) -> list[Member]:
        if depth > MAX_DEPTH:
            return []
        own = [Member(ref, d, None) for d in self.p.children(ref) if d.name == name and d.kind != "constructor"]
        fld = self.p.fields(ref).get(name)
        if fld is not None and not fld.is_method_signature:
            own.append(Member(ref, None, fld))
        if own:
            return own
        for sup in self.supertypes(ref):
            found = self.find_member(sup.ref, name, depth + 1)
            if found:
                if sup.mixin:
                    return [Member(m.owner, m.definition, m.field, m.mixin or sup.mixin) for m in found]
                return found
        return []

    def member_types(self, nt: NamedType, name: str) -> list[Typed]:
        out: list[Typed] = []
        if nt.static:
            for m in self.find_member(nt.ref, name):
                if m.definition is not None and "static" in m.definition.modifiers:
                    out.extend(self.return_types(DefRef(m.owner.repo, m.owner.path, m.definition.qualname)))
            return out
        for m in self.find_member(nt.ref, name):
            if m.field is not None:
                out.extend(self.field_types(m.owner, m.field))
            elif m.definition is not None and m.definition.kind == "getter":
                ref = DefRef(m.owner.repo, m.owner.path, m.definition.qualname)
                out.extend(self.return_types(ref))
        return out

    def field_types(self, owner: DefRef, f: Field) -> list[Typed]:
        where = f"{owner.path}:{f.line}"
        out: list[Typed] = []
        if f.type:
            out.append(TypeExpr(owner.module, f.type, f"{where}: {f.owner}.{f.name}: {f.type}"))
        if f.new_class and not (f.type or "").startswith(f.new_class + "<"):  # `= new Map<K, V>()` is typed
            out.append(TypeExpr(owner.module, self._inferred_new(owner.module, f.owner, f.line, f.new_class),
                                f"{where}: {f.owner}.{f.name} = new {f.new_class}(…)"))
        if f.init_callee and not f.type:
            for callee in self.callee_targets(owner.module, f.owner, f.init_callee, f.line):
                out.extend(self.return_types(callee))
        return out

    def return_types(self, ref: DefRef) -> list[Typed]:
        d = self.p.defs.get(ref)
        if d is None:
            return []
        if d.kind == "class":
            return [NamedType(ref, (f"{ref.path}:{d.line}: new {d.name}",))]
        out: list[Typed] = []
        if d.return_type:
            out.append(TypeExpr(ref.module, d.return_type, f"{ref.path}:{d.line}: {d.qualname}(): {d.return_type}"))
        for cls in d.returns_new:
            out.append(TypeExpr(ref.module, cls, f"{ref.path}:{d.line}: {d.qualname} returns new {cls}"))
        if not out and d.returns_chain and ref not in self._returning:
            self._returning.add(ref)  # `get agent() { return this.session.agent }` (recursion guarded)
            try:
                for t in self.chain_types(ref.module, d.qualname, d.returns_chain, d.end_line):
                    out.append(TypeExpr(t.mod, t.text, f"{ref.path}:{d.line}: {d.qualname} returns "
                                                        f"{'.'.join(d.returns_chain)} ({t.evidence})")
                               if isinstance(t, TypeExpr) else t)
            finally:
                self._returning.discard(ref)
        return out

    def _call_result_types(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int,
                           callee: DefRef) -> list[Typed]:
        """What the call `chain(…)` on `line` returns: `return_types(callee)`, except for a method declared
        `get<K extends keyof this>(name: K): this[K]` (or `X[K]`) called with a string literal for K —
        `ctx.get('settings')` is the receiver's member `settings`, as the compiler reads the indexed type."""
        keyed = self._keyed_return(callee)
        if keyed is None:
            return self.return_types(callee)
        base, k = keyed
        facts = self.p.files.get(mod)
        keys = {c.args[k].text for c in (facts.calls if facts is not None else ())
                if c.line == line and c.scope == scope and c.callee == chain and k < len(c.args)
                and c.args[k].kind == "string"}
        if len(keys) != 1:  # not a literal, or two calls on the line disagree: the key is unknown
            return []
        key = keys.pop()
        d = self.p.defs[callee]
        why = f"{callee.path}:{d.line}: {d.qualname}(): {d.return_type} with {d.params[k].name} = {key!r}"
        if base == "this":
            holders = self.chain_types(mod, scope, chain[:-1], line)
        else:
            holders = [TypeExpr(callee.module, base, why)]
        out: list[Typed] = []
        for holder in holders:
            for t in self.members_of(holder, key):
                out.append(TypeExpr(t.mod, t.text, f"{why}; {t.evidence}") if isinstance(t, TypeExpr) else t)
        return out

    def _keyed_return(self, callee: DefRef) -> tuple[str, int] | None:
        """(`this` or the type name X, index of the parameter typed K) when `callee` returns `this[K]` / `X[K]`
        (optionally `| undefined`) with K one of its own type parameters; else None."""
        d = self.p.defs.get(callee)
        if d is None or not d.return_type or "[" not in d.return_type:
            return None
        parts = [p.strip() for p in split_top(d.return_type, "|") if p.strip() not in ("undefined", "null")]
        m = _KEYED_RE.match(parts[0]) if len(parts) == 1 else None
        if m is None or not _declares_type_parameter(d, m.group(2)):
            return None
        k = next((i for i, prm in enumerate(d.params) if (prm.type or "").strip() == m.group(2)), None)
        return (m.group(1), k) if k is not None else None

    # --- expressions --------------------------------------------------------------------------
    def chain_types(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int) -> list[Typed]:
        """Types of `chain` evaluated inside `scope` (all segments; callers drop the method name)."""
        if not chain:
            return []
        current = self.root_types(mod, scope, chain[0], line)
        for seg in chain[1:]:
            if seg.startswith("["):  # `a[K]`: a member declared with that computed key, else an element
                keyed = [t for c in current for t in self.members_of(c, seg)] if seg != "[]" else []
                current = keyed or [t for c in current for t in (*self._element_types(c),
                                                                 *self._dictionary_element(c))]
                continue
            current = [t for c in current for t in self.members_of(c, seg)]
            if not current:
                return []
        return current

    def members_of(self, typed: Typed, name: str) -> list[Typed]:
        if isinstance(typed, NamespaceType):
            sym = self.symbols.resolve_export(typed.module, name)
            if sym is None:
                return []
            if sym.definition is not None:
                d = self.p.defs[sym.definition]
                if d.kind == "class":
                    return [NamedType(sym.definition, sym.evidence, static=True)]
            if sym.namespace is not None:
                return [NamespaceType(sym.namespace, sym.evidence)]
            if sym.binding is not None:
                return self.binding_types(*sym.binding)
            return []
        if isinstance(typed, TypeExpr):
            inline = object_type_members(typed.text)
            if name in inline:
                return [TypeExpr(typed.mod, inline[name], typed.evidence)]
            # only the types that have the member can give it a type (member_types of the others is empty)
            having = self.types_having(typed.mod, typed.text, typed.evidence, name)[1]
            if "<" not in typed.text:
                return [t for nt in having for t in self.member_types(nt, name)]
            return [self._instantiated(nt.ref, t, typed) for nt in having for t in self.member_types(nt, name)]
        return self.member_types(typed, name)

    def root_types(self, mod: ModuleRef, scope: str | None, root: str, line: int) -> list[Typed]:
        if root == "this":
            if scope is None:
                return []
            cls = self.p.enclosing_class(DefRef(mod.repo, mod.path, scope))
            if cls is None:
                return []
            return [NamedType(cls, (f"{mod.path}: this is {cls.qualname}",))]
        if root.startswith("new ") and root.endswith("()"):
            return [t for callee in self.callee_targets(mod, scope, root[4:-2].split("."), line)
                    if self.p.defs[callee].kind == "class" for t in self.return_types(callee)]
        if root == "import()":  # `(await import("./impl.ts")).generate(…)`: the module imported on that line
            return self._dynamic_import_types(mod, scope, line)
        if root.endswith("()"):
            chain = root[:-2].replace("?.", ".").split(".")  # `provider?.getModels()`: the call's own chain
            found = [t for callee in self.callee_targets(mod, scope, chain, line)
                     for t in self._call_types(mod, scope, chain, line, callee)]
            return found or self._value_call_types(mod, scope, chain, line)
        if root in ("<expr>", "super"):
            return []
        for sc in self.p.scope_chain(mod, scope):
            named = self.p.bindings_named(mod, sc, root)
            bound = _latest(named, root, line)
            if bound is not None:  # `const m = c ? a : b`: one binding per branch, all on the same line
                return [t for b in named if b.line == bound.line and b.kind == bound.kind
                        for t in self.binding_types(mod, b)]
            if sc is not None:
                hit = self._params_named(mod, sc).get(root)
                if hit is not None:
                    d, j, key = hit
                    prm = d.params[j]
                    if key is None:
                        if prm.type:
                            return [TypeExpr(mod, prm.type, f"{mod.path}:{d.line}: parameter {root}: {prm.type}")]
                        return self._property_param_types(mod, d, j)
                    why = f"{mod.path}:{d.line}: {root} is {key!r} of parameter {prm.name}: {prm.type}"
                    return self.members_of(TypeExpr(mod, prm.type or "", why), key)
        # a parameter of an anonymous callback (`(streams) => streams.run()`); most roots get here (imports,
        # module names), and a name no closure of the scope declares types as nothing (`_contextual_param_types`)
        if scope is not None and root in self._closure_params(mod, scope):
            closure = self._binding_cache.get((mod, scope, root, line, 0))  # binding_types' own key, asked first
            if closure is None:
                closure = self.binding_types(mod, Binding(scope=scope, name=root, line=line, kind="param"))
            if closure:
                return closure
        sym = self.symbols.resolve_name(mod, root)
        if sym is None:
            return []
        if sym.namespace is not None:
            return [NamespaceType(sym.namespace, sym.evidence)]
        if sym.definition is not None:
            d = self.p.defs[sym.definition]
            if d.kind == "class":
                return [NamedType(sym.definition, sym.evidence, static=True)]
            if d.kind in ("interface", "type_alias", "function"):
                return self._namespace_value(sym.definition, d, sym.evidence)
        if sym.binding is not None:
            return self.binding_types(*sym.binding)
        return []

    def _namespace_value(self, ref: DefRef, d: Definition, evidence: tuple[str, ...]) -> list[Typed]:
        """`Inject.resolve(…)` where `Inject` is a type or function merged with `export namespace Inject { export
        function resolve … }`: the member is the namespace's. Extraction flattens namespaces into their module,
        so the module stands for it — only when the module declares such a namespace (`_has_namespace`)."""
        if not self._has_namespace(ref.module, d.name):
            return []
        return [NamespaceType(ref.module, (*evidence, f"{ref.path}:{d.line}: {d.kind} {d.name} merges with namespace "
                                                      f"{d.name} (flattened into {ref.path})"))]

    def _has_namespace(self, mod: ModuleRef, name: str) -> bool:
        """Does `mod` declare `export namespace name { … }`? Extraction keeps no namespace declaration, only
        its `export`: an exported name with more local exports than declarations of it (definitions and
        module variables) has one export left over, the namespace's."""
        key = (mod, name)
        found = self._namespaces.get(key)
        if found is None:
            found = self._namespaces[key] = self._count_namespace(mod, name)
        return found

    def _count_namespace(self, mod: ModuleRef, name: str) -> bool:
        facts = self.p.files.get(mod)
        if facts is None:
            return False
        exports = sum(1 for ex in facts.exports if ex.exported == name and ex.local == name and ex.specifier is None)
        declared = sum(1 for x in facts.definitions if x.parent is None and x.name == name) + \
            len(self.p.bindings_named(mod, None, name))
        return exports > declared

    def _params_named(self, mod: ModuleRef, scope: str) -> dict[str, tuple[Definition, int, str | None]]:
        """The names a definition's parameters bind → (definition, parameter index, key of a typed object
        pattern `({ popup, t }: Props)` or None for a plain parameter); the first in parameter order wins, as
        the scan it replaces returned. Per definition, from its fixed facts (root typing asks it for every
        scope of every receiver root)."""
        key = (mod, scope)
        found = self._scope_params.get(key)
        if found is None:
            found = {}
            d = self.p.defs.get(DefRef(mod.repo, mod.path, scope))
            if d is not None:
                for j, prm in enumerate(d.params):
                    found.setdefault(prm.name, (d, j, None))
                    if prm.name.startswith("{") and prm.type:
                        for pattern_key, local in object_pattern_names(prm.name):
                            found.setdefault(local, (d, j, pattern_key))
            self._scope_params[key] = found
        return found

    def binding_types(self, mod: ModuleRef, b: Binding) -> list[Typed]:
        key = (mod, b.scope, b.name, b.line, b.branch)
        cached = self._binding_cache.get(key)
        if cached is not None:
            return cached
        self._binding_cache[key] = []  # cycle guard: a binding typed through itself has no type
        found = self._binding_types(mod, b)
        self._binding_cache[key] = found
        return found

    def _binding_types(self, mod: ModuleRef, b: Binding) -> list[Typed]:
        where = f"{mod.path}:{b.line}"
        out: list[Typed] = []
        if b.kind == "param" and not b.type:
            return self._contextual_param_types(mod, b)
        if b.type:
            out.append(TypeExpr(mod, b.type, f"{where}: {b.name}: {b.type}"))
        elif b.new_class:
            out.append(TypeExpr(mod, self._inferred_new(mod, b.scope, b.line, b.new_class),
                                f"{where}: {b.name} = new {b.new_class}(…)"))
        elif b.init_callee:
            for callee in self.callee_targets(mod, b.scope, b.init_callee, b.line):
                out.extend(self._call_types(mod, b.scope, b.init_callee, b.line, callee))
            if not out and len(b.init_callee) >= 2:
                out.extend(self._builtin_call_types(mod, b.scope, b.init_callee, b.line, where))
            if not out:
                out.extend(self._value_call_types(mod, b.scope, b.init_callee, b.line))
        elif b.init_chain:
            out.extend(self.chain_types(mod, b.scope, b.init_chain, b.line))
        if b.kind == "for_of":  # `for (const x of xs)`: x is an element of xs
            out = [t for typed in out for t in self._element_types(typed)]
        if b.destructure_key:
            return [t for typed in out for t in self.members_of(typed, b.destructure_key)]
        return out

    def _contextual_param_types(self, mod: ModuleRef, b: Binding) -> list[Typed]:
        """An untyped closure parameter takes its type from the callee's parameter annotation:
        `dispatch(m, (streams) => streams.run())` with `dispatch(m, run: (streams: S) => R)` types `streams`
        as S (TypeScript's contextual typing, for the direct-call case)."""
        for call, i, params in self._closure_params(mod, b.scope).get(b.name, ()):
            if call.line <= b.line:  # the nearest call at or before the binding's line decides
                j = params.index(b.name)
                out: list[Typed] = []
                targets = self.callee_targets(mod, call.scope, call.callee, call.line)
                if not targets:
                    held = self._function_value_param_types(mod, call, i, j, b.name)
                    if held or len(call.callee) < 2:
                        return held
                    return self._collection_callback_types(mod, call, j, b.name)
                for target in targets:
                    d = self.p.defs.get(target)
                    if d is None:
                        continue
                    for sig in _matching_overloads(d.signatures(), call):
                        declared = sig[i].type if i < len(sig) else None
                        if not declared:
                            continue
                        ptypes = function_type_parameters(declared)
                        if not ptypes and (alias := self._function_alias(target.module, declared)) is not None:
                            ptypes = function_type_parameters(alias)
                        ptype_mod, called_as = target.module, ""
                        if not ptypes:  # `callback: Plugin.Function<void>`, an interface with a call signature
                            ptype_mod, ptypes, called_as = self._call_signature_params(target.module, declared)
                        if not ptypes:  # `on<K extends keyof Events>(name: K, listener: Events[K])`
                            ptype_mod, ptypes, called_as = self._keyed_callback_params(mod, call, target, d, sig)
                        if j < len(ptypes) and ptypes[j]:
                            why = (f"{mod.path}:{call.line}: {b.name} is parameter {j + 1} of a callback "
                                   f"passed to {d.qualname}, declared {declared}{called_as}")
                            scoped = self._scoped_return_types(target, ptypes[j], why)
                            if scoped:
                                out.extend(scoped)
                                continue
                            inferred = self._type_argument(mod, call, d, ptypes[j], why)
                            if inferred is None:
                                inferred = self._class_type_argument(mod, call, target, ptypes[j], why)
                            out.extend(inferred if inferred is not None else
                                       [TypeExpr(ptype_mod, ptypes[j], why)])
                return out
        return []

    def _closure_params(self, mod: ModuleRef, scope: str | None) -> dict[str, list[tuple[Call, int, list[str]]]]:
        """Per scope: parameter name → (call, argument index, that closure's parameters) for each call with a
        closure argument that declares the name — the first such argument of each call, the calls latest line
        first (stable, as the scan it replaces sorted them). Built once per scope from fixed facts: every
        untyped closure parameter asked the scan again."""
        key = (mod, scope)
        index = self._closure_index.get(key)
        if index is None:
            index = {}
            calls = self._calls_by_scope(mod).get(scope, [])
            for call in sorted(calls, key=lambda c: -c.line):
                for i, arg in enumerate(call.args):
                    if arg.kind != "function":
                        continue
                    params = arrow_parameters(arg.text)
                    for name in dict.fromkeys(params):
                        entries = index.setdefault(name, [])
                        if not entries or entries[-1][0] is not call:
                            entries.append((call, i, params))
            self._closure_index[key] = index
        return index

    def _function_value_param_types(self, mod: ModuleRef, call, i: int, j: int,  # type: ignore[no-untyped-def]
                                    name: str) -> list[Typed]:
        """A callback passed to a function-typed value: `useSession(snapshot => snapshot.views.get(…))` where
        the props declare `useSession: <T>(select: (s: SessionSnapshot) => T) => T` — `snapshot` is a
        SessionSnapshot (the value's declared function type, as the compiler reads it)."""
        out: list[Typed] = []
        for t in self.chain_types(mod, call.scope, call.callee, call.line):
            if not isinstance(t, TypeExpr):
                continue
            text = _strip_generic(_strip_optional(t.text))
            outer = function_type_parameters(text)
            if not outer and (alias := self._function_alias(t.mod, text)) is not None:  # `useSession: UseSession`
                outer = function_type_parameters(_strip_generic(alias))
            declared = outer[i] if i < len(outer) else ""
            ptypes = function_type_parameters(_strip_optional(declared)) if declared else []
            if j < len(ptypes) and ptypes[j]:
                out.append(TypeExpr(t.mod, ptypes[j], f"{mod.path}:{call.line}: {name} is parameter {j + 1} of a "
                                                      f"callback passed to {'.'.join(call.callee)}: {t.text[:80]} "
                                                      f"({t.evidence})"))
        return out

    def _keyed_callback_params(self, mod: ModuleRef, call: Call, target: DefRef, d: Definition,
                               params: list) -> tuple[ModuleRef, list[str], str]:  # type: ignore[type-arg]
        """`ctx.on('internal/plugin', (fiber) => …)` with `on<K extends keyof Events>(name: K, listener: Events[K])`
        and `interface Events { 'internal/plugin'(fiber: Fiber): void }`: the listener is the member of Events
        the string-literal argument names, so its parameters are that member's (a `this:` parameter is not
        one of them). (module, parameter types, evidence); no types when the key is not a literal."""
        for i, prm in enumerate(params):
            m = _KEYED_RE.match(_strip_optional(prm.type or "").strip())
            if m is None or m.group(1) == "this" or not _declares_type_parameter(d, m.group(2)):
                continue
            k = next((n for n, q in enumerate(params) if (q.type or "").strip() == m.group(2)), None)
            if k is None or k >= len(call.args) or call.args[k].kind != "string" or i >= len(call.args) \
                    or call.args[i].kind != "function":
                continue
            key = call.args[k].text
            for nt in self.resolve_text(target.module, m.group(1), ""):
                for member in self.find_member(nt.ref, key):
                    if member.definition is not None:
                        types = [q.type or "" for q in member.definition.params if q.name != "this"]
                        where = f"{member.owner.path}:{member.definition.line}"
                    elif member.field is not None and member.field.type:
                        types = function_type_parameters(_strip_optional(member.field.type))
                        where = f"{member.owner.path}:{member.field.line}"
                    else:
                        continue
                    return member.owner.module, types, f" ({where}: {m.group(1)}[{key!r}] is {member.owner.qualname}" \
                                                       f".{key})"
        return mod, [], ""

    def _call_signature_params(self, mod: ModuleRef, text: str) -> tuple[ModuleRef, list[str], str]:
        """`callback: Plugin.Function<void>` with `interface Function<T> { (ctx: Context, config: T): any }`:
        (the module the signature is written in, its parameter types, evidence) — a value of an interface
        with a call signature is called like that function type. The first interface that has one decides."""
        text = _strip_optional(text).strip()
        if not re.fullmatch(r"[A-Za-z_$][\w$.]*(<.*>)?", text):  # a type reference, not `Events[K]` or a union
            return mod, [], ""
        for nt in self.resolve_text(mod, text.split("<", 1)[0].strip(), ""):
            for m in self.find_member(nt.ref, CALL_SIGNATURE_FIELD):
                if m.field is not None and m.field.type:
                    return m.owner.module, function_type_parameters(m.field.type), \
                        f" ({m.owner.path}:{m.field.line}: {m.owner.qualname} is called as {m.field.type})"
        return mod, [], ""

    def _function_alias(self, mod: ModuleRef, text: str) -> str | None:
        """`handler: ExtensionHandler<E>` with `type ExtensionHandler<E, R = undefined> = (event: E, ctx: Ctx) => …`:
        the alias's function type, its type parameters replaced by the arguments written at the use."""
        for nt in self.resolve_text(mod, text.split("<", 1)[0].strip(), ""):
            d = self.p.defs[nt.ref]
            rhs = _alias_target(d.signature) if d.kind == "type_alias" else None
            if not rhs or not function_type_parameters(_strip_generic(rhs)):
                continue
            head = d.signature[:d.signature.rfind(rhs)].rstrip().removesuffix("=").strip()
            names = [re.split(r"[\s=]", a.strip(), maxsplit=1)[0] for a in type_arguments(head)]
            for name, arg in zip(names, type_arguments(text), strict=False):
                rhs = re.sub(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", arg, rhs)
            return rhs
        return None

    def _type_argument(self, mod: ModuleRef, call, d: Definition, name: str,  # type: ignore[no-untyped-def]
                       why: str) -> list[Typed] | None:
        """`eachLayer<T>(items: readonly T[], visit: (item: T) => void)` called with a `Layer[]`: T is Layer —
        inferred from the argument of the parameter that mentions T (itself, or as the element of an array /
        iterable), like TypeScript's inference from arguments. None when `name` is no such type parameter."""
        if not re.fullmatch(r"[A-Z][\w$]*", name) or not d.signature or f"<{name}" not in d.signature.split("(")[0] \
                and f", {name}" not in d.signature.split("(")[0]:
            return None
        shapes = {name: False, f"{name}[]": True, f"readonly {name}[]": True, f"Array<{name}>": True,
                  f"ReadonlyArray<{name}>": True, f"Iterable<{name}>": True, f"AsyncIterable<{name}>": True}
        for k, prm in enumerate(d.params):
            element = shapes.get((prm.type or "").strip())
            if element is None or k >= len(call.args) or call.args[k].kind not in ("identifier", "member"):
                continue
            arg = call.args[k]
            found = self.chain_types(mod, call.scope, arg.text.split("."), call.line)
            if element:
                found = [t for typed in found for t in self._element_types(typed)]
            return [TypeExpr(t.mod, t.text, f"{why}; {name} is inferred from {arg.text} ({t.evidence})")
                    if isinstance(t, TypeExpr) else t for t in found]
        return []

    def _class_type_argument(self, mod: ModuleRef, call, target: DefRef, name: str,  # type: ignore[no-untyped-def]
                             why: str) -> list[Typed] | None:
        """`this.layers.effect(ctx, layer => …)` with `class ScopedLayers<L> { effect(ctx, fn: (layer: L) => R) }`
        and `layers = new ScopedLayers<JobLayer>(…)`: L is the receiver's type argument, JobLayer. None when
        `name` is no type parameter of the method's class."""
        if len(call.callee) < 2 or not re.fullmatch(r"[A-Z][\w$]*", name):
            return None
        cls = self.p.enclosing_class(target)
        cd = self.p.defs.get(cls) if cls is not None else None
        names = self._class_type_params(cls) if cls is not None else []
        if name not in names:
            return None
        k = names.index(name)
        assert cd is not None and cls is not None
        out: list[Typed] = []
        for recv in self.chain_types(mod, call.scope, call.callee[:-1], call.line):
            if not isinstance(recv, TypeExpr):
                continue
            text = _strip_optional(recv.text).strip()
            if base_name(text) not in (cd.name, cls.qualname):
                continue
            args = type_arguments(text)
            if k < len(args):
                out.append(TypeExpr(recv.mod, args[k], f"{why}; {name} is {cd.name}'s type argument {args[k]} "
                                                       f"({recv.evidence})"))
        return out

    def _collection_callback_types(self, mod: ModuleRef, call, j: int, name: str) -> list[Typed]:  # type: ignore[no-untyped-def]
        """`layers.map((layer) => …)` on a `Layer[]` receiver: `layer` is a Layer."""
        out: list[Typed] = []
        receivers = self._spread_array_types(mod, call) if call.callee[0] == "<literal>" else \
            self.chain_types(mod, call.scope, call.callee[:-1], call.line)
        for recv in receivers:
            if not isinstance(recv, TypeExpr):
                continue
            text = recv.text.strip().removeprefix("readonly ").strip()
            if text.endswith("[]"):
                base, args = "Array", [text[:-2]]
            else:
                base, args = text.split("<", 1)[0].strip(), type_arguments(text)
            positions = CALLBACK_ELEMENTS.get(base, {}).get(call.callee[-1], ())
            if j < len(positions) and positions[j] < len(args):
                arg = args[positions[j]]
                out.append(TypeExpr(recv.mod, arg, f"{recv.evidence}; {name} is an element ({arg}) of "
                                                   f"{base}.{call.callee[-1]}'s callback at {mod.path}:{call.line}"))
        return out

    def _spread_array_types(self, mod: ModuleRef, call) -> list[Typed]:  # type: ignore[no-untyped-def]
        """`[...this.sessions.values()].map(…)`: an array literal of one spread is an array of what the spread
        iterates (`Map<K, V>.values()` → `V[]`; an `X[]` or `Set<X>` value → `X[]`)."""
        m = re.fullmatch(r"\[\s*\.\.\.\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(\(\))?\s*\]\s*\??\.[\w$]+",
                         call.text or "")
        if m is None:
            return []
        chain = m.group(1).split(".")
        if m.group(2):
            found = [t for callee in self.callee_targets(mod, call.scope, chain, call.line)
                     for t in self._call_types(mod, call.scope, chain, call.line, callee)]
            if not found and len(chain) >= 2:
                found = self._builtin_call_types(mod, call.scope, chain, call.line, f"{mod.path}:{call.line}")
        else:
            found = self.chain_types(mod, call.scope, chain, call.line)
        out: list[Typed] = []
        for t in found:
            if not isinstance(t, TypeExpr):
                continue
            text = _strip_optional(t.text).strip().removeprefix("readonly ").strip()
            base, args = text.split("<", 1)[0].strip(), type_arguments(text)
            if text.endswith("[]"):
                out.append(TypeExpr(t.mod, text, f"{t.evidence}; spread into an array literal"))
            elif base in SPREAD_ITERABLES and len(args) == 1:
                out.append(TypeExpr(t.mod, f"{args[0]}[]", f"{t.evidence}; spread into an array of {args[0]}"))
        return out

    def _property_param_types(self, mod: ModuleRef, d: Definition, j: int) -> list[Typed]:
        """An untyped parameter of a function property takes its type from the literal's declared type:
        `pi.registerCommand("x", { handler: async (args, ctx) => … })` where the options type declares
        `handler: (args: string, ctx: CommandContext) => Promise<void>` (or `handler(args, ctx): …`)."""
        if d.kind != "object_method" or not d.object_id:
            return []
        key = (mod, d.qualname, j)
        cached = self._param_cache.get(key)
        if cached is not None:
            return cached
        self._param_cache[key] = []
        obj = self.p.object_literal(mod, d.object_id)
        out: list[Typed] = []
        if obj is not None:
            for nt in self._literal_types(mod, obj):
                why = f"{mod.path}:{d.line}: {d.params[j].name} is parameter {j + 1} of {d.name} in a literal typed " \
                      f"{nt.ref.qualname}"
                for m in self.find_member(nt.ref, d.name):
                    if m.definition is not None and j < len(m.definition.params) and m.definition.params[j].type:
                        out.append(TypeExpr(m.owner.module, m.definition.params[j].type or "", why))
                    elif m.field is not None and m.field.type:
                        ptypes = function_type_parameters(_strip_optional(m.field.type))
                        if j < len(ptypes) and ptypes[j]:
                            out.append(TypeExpr(m.owner.module, ptypes[j], f"{why} ({m.field.type})"))
            for inline in self._literal_inline(mod, obj, 0):
                # `{ invoke: (api, r) => … }` as a value of `{ [K in keyof M]: { invoke(api: Api, …): … } }`
                declared = object_type_members(inline.text).get(d.name)
                ptypes = function_type_parameters(_strip_optional(declared)) if declared else []
                if j < len(ptypes) and ptypes[j]:
                    out.append(TypeExpr(inline.mod, ptypes[j], f"{mod.path}:{d.line}: {d.params[j].name} is "
                                        f"parameter {j + 1} of {d.name} in a literal typed {inline.text[:60]} "
                                        f"({inline.evidence})"))
        self._param_cache[key] = out
        return out

    def _value_call_types(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int) -> list[Typed]:
        """What calling a function-typed property returns: `r.faceOf(k)` with `faceOf: (key: string) => Store`.
        Not for a bare parameter (`(await load()).stream()`): a loader's module is the lazy-loader rule's."""
        if len(chain) < 2 or chain[0] in ("<expr>", "<literal>") or any(seg.endswith("()") for seg in chain):
            return []
        out: list[Typed] = []
        for t in self.chain_types(mod, scope, chain, line):
            if isinstance(t, TypeExpr):
                ret = function_type_return(_strip_optional(t.text))
                if ret:
                    out.append(TypeExpr(t.mod, ret, f"{t.evidence}; calling it returns {ret}"))
        return out

    def _call_types(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int,
                    callee: DefRef) -> list[Typed]:
        """What the call `chain(…)` returns: `ctx.get('jobs')`'s keyed member, else the callee's return types
        with its class's type parameters replaced by the receiver's type arguments (`layers.peek()` with
        `peek(): L | undefined` on a `ScopedLayers<ToolLayer>` is a ToolLayer)."""
        found = self._call_result_types(mod, scope, chain, line, callee)  # `ctx.get('jobs')`: keyed there
        if self._keyed_return(callee) is not None:
            return found
        if len(chain) < 2 or not any(isinstance(t, TypeExpr) for t in found):
            return found
        cls = self.p.enclosing_class(callee)
        if cls is None or not self._class_type_params(cls):
            return found
        receivers = [r for r in self.chain_types(mod, scope, chain[:-1], line)
                     if isinstance(r, TypeExpr) and "<" in r.text]
        if not receivers:
            return found
        out: list[Typed] = []
        for t in found:
            out.extend(dict.fromkeys(self._instantiated(cls, t, r) for r in receivers) if isinstance(t, TypeExpr)
                       else [t])
        return out

    def _class_type_params(self, cls: DefRef) -> list[str]:
        """`class ScopedLayers<L extends ScopeLayer, M = string>` → ["L", "M"] (the class's own `<…>`)."""
        cd = self.p.defs.get(cls)
        head = re.match(r"^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:class|interface)\s+"
                        r"[\w$]+\s*(<.*)", cd.signature if cd is not None and cd.signature else "")
        if head is None:
            return []
        depth, end = 0, 0
        for end, ch in enumerate(head.group(1)):  # the class's own `<…>`, not an `extends Base<…>` after it
            depth += {"<": 1, ">": -1}.get(ch, 0) if not (ch == ">" and head.group(1)[end - 1] == "=") else 0
            if depth == 0:
                break
        return [re.split(r"[\s=]", a.strip(), maxsplit=1)[0] for a in type_arguments("C" + head.group(1)[:end + 1])]

    def _instantiated(self, owner: DefRef, t: Typed, receiver: TypeExpr) -> Typed:
        """`t` (a member type declared in generic `owner`) with owner's type parameters replaced by the
        receiver's type arguments — only when every name `t` mentions is such a parameter (`L`, `L[]`,
        `L | undefined`), so the result reads wholly in the receiver's module. Else `t` unchanged."""
        if not isinstance(t, TypeExpr):
            return t
        text = _strip_optional(receiver.text).strip()
        d = self.p.defs.get(owner)
        if d is None or base_name(text) not in (d.name, owner.qualname):
            return t
        names, args = self._class_type_params(owner), type_arguments(text)
        mentioned = set(named_types(t.text))
        if not names or not args or not mentioned or not mentioned <= set(names[:len(args)]):
            return t
        out = t.text
        for name, arg in zip(names, args, strict=False):
            out = re.sub(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", arg, out)
        return TypeExpr(receiver.mod, out, f"{t.evidence}; {', '.join(names[:len(args)])} of {text[:60]} "
                                           f"({receiver.evidence})")

    def _inferred_new(self, mod: ModuleRef, scope: str | None, line: int, cls_text: str) -> str:
        """`new ScopedLayers(scope => new ToolLayer(scope), …)` with `constructor(make: (s) => L, …)`: the
        type `ScopedLayers<ToolLayer>` — a class type parameter inferred from a closure argument that
        returns `new X(…)`, as TypeScript infers it. The bare class name when nothing is inferred."""
        call = next((c for c in self._calls_by_scope(mod).get(scope, [])
                     if c.kind == "new" and c.line == line and ".".join(c.callee) == cls_text), None)
        if call is None:
            return cls_text
        targets = [t for t in self.callee_targets(mod, scope, call.callee, line) if self.p.defs[t].kind == "class"]
        if len(targets) != 1:
            return cls_text
        names = self._class_type_params(targets[0])
        ctor_def = next((c for c in self.p.children(targets[0]) if c.kind == "constructor"), None)
        if not names or ctor_def is None:  # an inherited constructor's parameters speak of the base's own
            return cls_text
        inferred: dict[str, str] = {}
        for k, prm in enumerate(ctor_def.params):
            ret = function_type_return(_strip_optional(prm.type or ""))
            if ret is None or ret.strip() not in names or k >= len(call.args) or call.args[k].kind != "function":
                continue
            made = re.search(r"=>\s*\(?\s*new\s+([A-Za-z_$][\w$.]*)\s*[(<]", call.args[k].text)
            if made is not None:
                inferred.setdefault(ret.strip(), made.group(1))
        if not inferred:
            return cls_text
        upto = max(names.index(n) for n in inferred) + 1
        return f"{cls_text}<{', '.join(inferred.get(n, 'unknown') for n in names[:upto])}>"

    def _keyed_call_types(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int,
                          callee: DefRef, type_key: str) -> list[Typed]:
        """`typeof ctx.get<'goals'>` with `get<K extends keyof this>(name: K): undefined | this[K]`: the
        receiver's member named by the explicit type argument of the first type parameter (`this[K]`; or
        `Services[K]` for a named type). A call with a string argument is `_call_result_types`' case."""
        d = self.p.defs.get(callee)
        if d is None or not d.return_type or "[" not in d.return_type:
            return []
        head = (d.signature or "").split("(", 1)[0]
        out: list[Typed] = []
        for part in split_top(d.return_type, "|"):
            m = re.fullmatch(r"\s*(this|[A-Za-z_$][\w$.]*)\[([A-Z][\w$]*)\]\s*", part)
            if m is None or not re.match(rf"<\s*{m.group(2)}\b", head[head.find("<"):] if "<" in head else ""):
                continue
            key = type_key
            why = f"{mod.path}:{line}: {'.'.join(chain)}<{key!r}> returns {part.strip()} ({callee.path}:{d.line})"
            if m.group(1) == "this":
                bases: list[Typed] = list(self.chain_types(mod, scope, chain[:-1], line)) if len(chain) > 1 else []
            else:
                bases = [TypeExpr(callee.module, m.group(1), why)]
            for base in bases:
                for t in self.members_of(base, key):
                    out.append(TypeExpr(t.mod, t.text, f"{why}; {t.evidence}") if isinstance(t, TypeExpr) else t)
        return out

    def _scoped_return_types(self, target: DefRef, text: str, why: str) -> list[Typed]:
        """`mutation: (goals: NonNullable<ReturnType<typeof ctx.get<'goals'>>>) => …` declared in a function
        nested where `ctx` is a parameter: the `typeof` chain read in the declaring function's scope (type
        texts are otherwise resolved per module, where a local `ctx` is unknown)."""
        m = _SCOPED_RETURN_TYPE_RE.fullmatch(text)
        if m is None or m.group(1).split(".")[0] in ("this", "super"):
            return []
        d = self.p.defs.get(target)
        if d is None:
            return []
        chain, key, mod, scope = m.group(1).split("."), m.group(3), target.module, target.qualname
        if key is None and self.symbols.resolve_name(mod, chain[0]) is not None:
            return []  # a module-level name without a type argument: `_return_type_of` reads it
        out: list[Typed] = []
        for callee in self.callee_targets(mod, scope, chain, d.line):
            found = self._keyed_call_types(mod, scope, chain, d.line, callee, key) if key is not None else \
                self.return_types(callee)
            out.extend(TypeExpr(t.mod, t.text, f"{why}; ReturnType<typeof {m.group(1)}> is {t.text} ({t.evidence})")
                       if isinstance(t, TypeExpr) else t for t in found)
        return out

    def _calls_by_scope(self, mod: ModuleRef) -> dict[str | None, list]:
        cached = self._scope_calls.get(mod)
        if cached is None:
            cached = defaultdict(list)
            for c in self.p.files[mod].calls:
                if any(a.kind == "function" for a in c.args):
                    cached[c.scope].append(c)
            self._scope_calls[mod] = cached
        return cached

    def _builtin_call_types(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int,
                            where: str) -> list[Typed]:
        """`map.get(k)` on a `Map<K, V>` receiver is a V (likewise `array.find`)."""
        out: list[Typed] = []
        for recv in self.chain_types(mod, scope, chain[:-1], line):
            if isinstance(recv, TypeExpr):
                out.extend(self._element_types(recv, chain[-1], where))
                if chain[-1] in SAME_ARRAY_METHODS and _is_array_text(recv.text):  # `xs.filter(…)` is still an X[]
                    out.append(TypeExpr(recv.mod, recv.text, f"{recv.evidence}; .{chain[-1]}(…) keeps the array type"))
                out.extend(self._iterator_types(recv, chain[-1]))
        return out

    def _dictionary_element(self, typed: Typed) -> list[Typed]:
        """`this.store[id]` on a `Dict<Entry>` / `Record<string, Entry>` / `{ [k: string]: Entry }`: an Entry. A
        generic alias (`type Dict<T = any, K extends string = string> = { [key in K]: T }`) is expanded with the
        arguments written at the use; a value that is one of those arguments is resolved where it is written."""
        if not isinstance(typed, TypeExpr):
            return []
        text = _strip_optional(typed.text).strip()
        value = dictionary_value(text)
        if value:
            return [TypeExpr(typed.mod, value, f"{typed.evidence}; an element of {text[:60]} is {value}")]
        args = type_arguments(text) if "<" in text else []
        out: list[Typed] = []
        for nt in self.resolve_text(typed.mod, text.split("<", 1)[0].strip(), ""):
            d = self.p.defs[nt.ref]
            cut = _top_level_equals(d.signature) if d.kind == "type_alias" else -1
            if cut < 0:
                continue
            head, rhs = d.signature[:cut], d.signature[cut + 1:].strip().rstrip(";")
            names = [re.split(r"[\s=]", a.strip(), maxsplit=1)[0] for a in type_arguments(head)] if "<" in head else []
            value = dictionary_value(rhs)
            if not value:
                continue
            value = value.strip()
            why = f"{typed.evidence}; {nt.ref.path}:{d.line}: type {d.name} is a dictionary of {value}"
            if value in names and names.index(value) < len(args):
                arg = args[names.index(value)].strip()
                out.append(TypeExpr(typed.mod, arg, f"{why} = {arg}"))
            elif value not in names:
                out.append(TypeExpr(nt.ref.module, value, why))
        return out

    def _iterator_types(self, typed: TypeExpr, method: str) -> list[Typed]:
        """`map.values()` on a `Map<K, V>` iterates Vs (`keys()` Ks; `Set`/array `values()` their elements): as a
        `V[]`, so `for (const s of this.sessions.values())` gives s the type V."""
        text = typed.text.strip().removeprefix("readonly ").strip()
        base = "Array" if text.endswith("[]") else text.split("<", 1)[0].strip()
        args = [text[:-2]] if text.endswith("[]") else type_arguments(text)
        index = ITERATOR_ELEMENTS.get(base, {}).get(method)
        if index is None or index >= len(args):
            return []
        return [TypeExpr(typed.mod, f"{args[index]}[]", f"{typed.evidence}; {base}.{method}() iterates {args[index]}")]

    def _element_types(self, typed: Typed, method: str = "at", where: str = "") -> list[Typed]:
        if not isinstance(typed, TypeExpr):
            return []
        text = typed.text.strip()
        base = text.split("<", 1)[0].strip()
        if text.endswith("[]"):
            base, args = "Array", [text[:-2]]
        else:
            args = type_arguments(text)
        index = BUILTIN_ELEMENT_METHODS.get(base, {}).get(method)
        if index is None or index >= len(args):
            return []
        return [TypeExpr(typed.mod, args[index], f"{typed.evidence}; {base}.{method} yields {args[index]}")]

    def callee_targets(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int) -> list[DefRef]:
        """Definitions a call chain statically names (functions, methods, classes for `new`)."""
        if len(chain) == 1:
            name = chain[0]
            local = self.p.local_function(mod, scope, name)
            if local is not None:
                return [DefRef(mod.repo, mod.path, local.qualname)]
            sym = self.symbols.resolve_name(mod, name)
            if sym is not None and sym.definition is not None:
                return [sym.definition]
            return []
        out: list[DefRef] = []
        for recv in self.chain_types(mod, scope, chain[:-1], line):
            if isinstance(recv, NamespaceType):
                sym = self.symbols.resolve_export(recv.module, chain[-1])
                if sym is not None and sym.definition is not None:
                    out.append(sym.definition)
                continue
            named = self.resolve_text(recv.mod, recv.text, recv.evidence) if isinstance(recv, TypeExpr) else [recv]
            for nt in named:
                for m in self.find_member(nt.ref, chain[-1]):
                    if m.definition is not None:
                        out.append(DefRef(m.owner.repo, m.owner.path, m.definition.qualname))
        return out

    # --- implementations ----------------------------------------------------------------------
    def _subtype_index(self) -> dict[DefRef, list[tuple[DefRef, str]]]:
        if self._impl_index is None:
            index: dict[DefRef, list[tuple[DefRef, str]]] = defaultdict(list)
            for cref, d in self.p.defs.items():
                if d.kind not in ("class", "interface"):
                    continue
                for sup in self.supertypes(cref):
                    verb = "extends" if sup.ref.qualname in _names(d.extends) else "implements"
                    index[sup.ref].append((cref, f"{cref.path}:{d.line}: {d.kind} {d.name} {verb} {sup.ref.qualname}"))
            self._impl_index = index
        return self._impl_index

    def subtypes(self, ref: DefRef) -> list[tuple[DefRef, str]]:
        """Classes and interfaces below `ref` (transitively), each with the line that says so.
        Memoised (do not mutate the list): the index is fixed once built, and every interface call asks."""
        found = self._subtypes.get(ref)
        if found is None:
            found = self._subtypes[ref] = self._walk_subtypes(ref)
        return found

    def _walk_subtypes(self, ref: DefRef) -> list[tuple[DefRef, str]]:
        index = self._subtype_index()
        seen: dict[DefRef, str] = {}
        stack = list(index.get(ref, []))
        while stack:
            cref, why = stack.pop()
            if cref in seen:
                continue
            seen[cref] = why
            stack.extend(index.get(cref, []))
        return sorted(seen.items())

    def implementations(self, ref: DefRef) -> list[tuple[DefRef, str]]:
        """Classes that extend/implement `ref`, directly or through interfaces (memoised: do not mutate)."""
        found = self._implementations.get(ref)
        if found is None:
            found = self._implementations[ref] = [(c, why) for c, why in self.subtypes(ref)
                                                  if self.p.defs[c].kind == "class"]
        return found

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
                    for nt in self._literal_types(mod, obj, wrapped=wrapped):
                        index[nt.ref].append((mod, obj.object_id, nt.evidence[0]))
            self._object_impls = index
        out = self._object_impls_of.get(ref)
        if out is None:  # memoised (do not mutate): both indexes are fixed once built
            out = list(self._object_impls.get(ref, []))
            for sub, _ in self.subtypes(ref):
                out.extend(self._object_impls.get(sub, []))
            self._object_impls_of[ref] = out
        return out

    def _literal_types(self, mod: ModuleRef, obj: ObjectLiteral, depth: int = 0,
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
        if typed:
            type_mod, holder_type = typed
            why = f"{mod.path}:{obj.line}: object literal ({obj.holder}) typed {holder_type}"
            return self.resolve_text(type_mod, holder_type, why)
        out: list[NamedType] = []
        if obj.holder == "return" and obj.nested == 0 and obj.scope is not None and depth < 4:
            # `faceOf: (key) => { return { … } }` in a literal whose type declares `faceOf: (key: string) => Face`
            d = self.p.defs.get(DefRef(mod.repo, mod.path, obj.scope))
            owner = self.p.object_literal(mod, d.object_id) if d is not None and d.object_id else None
            if d is not None and owner is not None and d.kind == "object_method":
                for pt in self._literal_types(mod, owner, depth + 1):
                    why = (f"{mod.path}:{obj.line}: object literal returned by {d.name} of a literal typed "
                           f"{pt.ref.qualname}")
                    for m in self.find_member(pt.ref, d.name):
                        ret = m.definition.return_type if m.definition is not None else \
                            function_type_return(_strip_optional(m.field.type)) if m.field and m.field.type else None
                        if ret:
                            out.extend(self.resolve_text(m.owner.module, ret, f"{why} ({ret})"))
        elif obj.holder == "return" and obj.returned_to:
            out.extend(self._callback_return_types(mod, obj))
        elif obj.holder.startswith("property:") and depth < 4:
            parent_id, _, key = obj.holder[len("property:"):].partition(".")
            parent = self.p.object_literal(mod, parent_id)
            if parent is not None:
                for pt in self._literal_types(mod, parent, depth + 1):
                    why = f"{mod.path}:{obj.line}: object literal is {key!r} of a literal typed {pt.ref.qualname}"
                    for t in self.member_types(pt, key):
                        out.extend(self._named(t, why))
                for inline in self._literal_inline(mod, parent, depth + 1):
                    why = f"{mod.path}:{obj.line}: object literal is {key!r} of a literal typed {inline.text[:60]}"
                    for t in self.members_of(inline, key):
                        out.extend(self._named(t, f"{why} ({inline.evidence})"))
                for value in self._dictionary_values(mod, parent, depth + 1):
                    out.extend(self._named(value, f"{mod.path}:{obj.line}: object literal is {key!r} of a dictionary"))
        elif obj.holder.startswith("field:"):  # `readonly scheduler: Scheduler = { … }`
            owner_name, _, name = obj.holder[len("field:"):].rpartition(".")
            if name.endswith("]") and "[" in obj.holder:  # a computed key may hold dots: `[Keys.A]`
                cut = obj.holder.rfind(".[")
                owner_name, name = obj.holder[len("field:"):cut], obj.holder[cut + 1:]
            ref = DefRef(mod.repo, mod.path, owner_name)
            fld = self.p.fields(ref).get(name)
            if fld is not None and fld.type:
                why = f"{mod.path}:{obj.line}: object literal initialises {owner_name}.{name}: {fld.type}"
                out.extend(self.resolve_text(mod, fld.type, why))
        elif obj.holder.startswith("assign:") and depth < 4:
            chain = obj.holder[len("assign:"):].split(".")
            why = f"{mod.path}:{obj.line}: object literal assigned to {'.'.join(chain)}"
            for t in self.chain_types(mod, obj.scope, chain, obj.line):
                out.extend(self._named(t, why))
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
        targets = self.callee_targets(mod, obj.scope, chain, obj.line)
        if not targets:  # a function-typed value: `open: <R>(make: () => Widget) => R`
            for t in self.chain_types(mod, obj.scope, chain, obj.line):
                if not isinstance(t, TypeExpr):
                    continue
                params = function_type_parameters(_strip_generic(_strip_optional(t.text)))
                ret = function_type_return(_strip_optional(params[i])) if i < len(params) and params[i] else None
                if ret:
                    why = f"{mod.path}:{obj.line}: object literal returned by the closure passed to {callee} ({t.text})"
                    out.extend(self.resolve_text(t.mod, ret, why))
        for target in targets:
            target = self.constructor_of(target)
            d = self.p.defs.get(target)
            declared = d.params[i].type if d is not None and i < len(d.params) else None
            ret = function_type_return(_strip_optional(declared)) if declared else None
            if ret:
                why = (f"{mod.path}:{obj.line}: object literal returned by the closure passed to {callee} "
                       f"(parameter {i + 1} of {target.qualname}: {declared})")
                out.extend(self.resolve_text(target.module, ret, why))
        return out

    def _literal_inline(self, mod: ModuleRef, obj: ObjectLiteral, depth: int) -> list[TypeExpr]:
        """Inline object types a literal is declared with (`(): Injected => ({ hooks: { sections: {…} } })` with
        `hooks: { sections: Observable }`): not named, so `_literal_types` has nothing to return for them, but
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
                declared: list[Typed] = [*self._literal_types(mod, parent, depth + 1),
                                         *self._literal_inline(mod, parent, depth + 1)]
                for t in declared:
                    out.extend(m for m in self.members_of(t, key)
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
        for nt in self._literal_types(mod, obj, depth):
            d = self.p.defs[nt.ref]
            if d.kind == "type_alias":
                rhs = _alias_target(d.signature) or d.signature.partition("=")[2].strip()
                texts.append((nt.ref.module, rhs, f"{nt.ref.path}:{d.line}: type {d.name}"))
        out: list[TypeExpr] = []
        for tmod, text, why in texts:
            value = dictionary_value(text)
            if value:
                out.append(TypeExpr(tmod, value, f"{why}: a dictionary of {value[:60]}"))
        return out

    def _named(self, t: Typed, why: str) -> list[NamedType]:
        if isinstance(t, TypeExpr):
            return self.resolve_text(t.mod, t.text, f"{why} ({t.evidence})")
        if isinstance(t, NamedType) and not t.static:
            return [NamedType(t.ref, (why, *t.evidence))]
        return []

    def _wrapped_return_type(self, mod: ModuleRef, holder: str, scope: str | None) -> tuple[ModuleRef, str] | None:
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
        for target in self.callee_targets(mod, scope, callee.split("."), 0):
            target = self.constructor_of(target)
            d = self.p.defs.get(target)
            if d is not None and int(index) < len(d.params) and d.params[int(index)].type:
                return target.module, d.params[int(index)].type or ""
        return None

    def constructor_of(self, ref: DefRef, depth: int = 0) -> DefRef:
        """For a class, the constructor `new C(…)` runs (its own, else the inherited one); else `ref`."""
        d = self.p.defs.get(ref)
        if d is None or d.kind != "class" or depth > MAX_DEPTH:
            return ref
        ctor = next((c for c in self.p.children(ref) if c.kind == "constructor"), None)
        if ctor is not None:
            return DefRef(ref.repo, ref.path, ctor.qualname)
        for sup in self.supertypes(ref):
            if self.p.defs[sup.ref].kind == "class" and not sup.mixin:
                found = self.constructor_of(sup.ref, depth + 1)
                if found != sup.ref:
                    return found
        return ref


def _matching_overloads(signatures: list[list], call) -> list[list]:  # type: ignore[no-untyped-def]
    """The overloads a call can mean: `on("session_start", h)` picks `on(event: "session_start", …)` by its
    string-literal parameter types, like TypeScript's overload resolution; all of them when none decides."""
    if len(signatures) == 1:
        return signatures
    picked = []
    for params in signatures:
        fits = True
        for k, arg in enumerate(call.args):
            literal = (params[k].type or "").strip() if k < len(params) else ""
            if arg.kind == "string" and len(literal) >= 2 and literal[0] == literal[-1] and literal[0] in "'\"":
                fits = fits and literal[1:-1] == arg.text
        if fits:
            picked.append(params)
    return picked or signatures


def _latest(bindings: list[Binding], name: str, line: int) -> Binding | None:
    best = None
    for b in bindings:
        if b.name == name and (best is None or (b.line <= line and b.line >= best.line) or best.line > line):
            best = b
    return best


def _top_level_equals(signature: str) -> int:
    """Index of the `=` that starts a type alias's right-hand side (not a default in `<T = any>`, not `=>`); -1."""
    depth = 0
    for i, ch in enumerate(signature):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and signature[i - 1:i + 1] != "=>":
            depth -= 1
        elif ch == "=" and depth == 0 and signature[i + 1:i + 2] != ">":
            return i
    return -1


def _declares_type_parameter(d: Definition, name: str) -> bool:
    """Is `name` one of `d`'s own type parameters (`get<K extends keyof this>(…)`)?"""
    return re.search(rf"[<,]\s*{re.escape(name)}\b", d.signature.split("(", 1)[0]) is not None


def _alias_target(signature: str) -> str | None:
    """The right-hand side of `type X<T = D> = Y<T> | Z` (None for object types, which are members)."""
    depth = 0
    for i, ch in enumerate(signature):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "=" and depth == 0 and signature[i + 1:i + 2] != ">":
            rhs = signature[i + 1:].strip().rstrip(";")
            return None if not rhs or rhs.startswith("{") else rhs
    return None


def _strip_generic(text: str) -> str:
    """`<T>(select: (s: S) => T) => T` → `(select: (s: S) => T) => T` (a generic function type's parameters)."""
    text = text.strip()
    if not text.startswith("<"):
        return text
    depth = 0
    for i, ch in enumerate(text):
        depth += {"<": 1, ">": -1}.get(ch, 0) if text[i - 1:i + 1] != "=>" else 0
        if depth == 0:
            return text[i + 1:].strip()
    return text


def _is_array_text(text: str) -> bool:
    text = text.strip()
    return text.endswith("[]") or text.startswith(("Array<", "ReadonlyArray<"))


def _strip_optional(text: str) -> str:
    """`((a: A) => void) | undefined` → `(a: A) => void` (an optional callback property)."""
    parts = [p.strip() for p in split_top(text, "|") if p.strip() not in ("undefined", "null")]
    return parts[0] if len(parts) == 1 else text


def _names(texts: list[str]) -> set[str]:
    return {n for t in texts for n in named_types(t)}
