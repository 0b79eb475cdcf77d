"""Names → declarations: the part of receiver typing every other part asks (see `analyzer.resolve.receivers`).

A type written in a module (`Foo`, `ns.Foo`, `import('./x').Foo`, `typeof f`) becomes the class,
interface or alias it names — through imports, namespaces and module augmentations — and a member name on
a declaration becomes the members found on it and its supertypes (`extends`, `implements`, interface
merging, `Pick`/`Omit` mixins). Owns the memo tables of those two questions.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Protocol

from analyzer.index.model import Field
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import TYPE_KINDS, DefRef, Program
from analyzer.resolve.symbols import Symbol, SymbolResolver
from analyzer.resolve.typed import (
    RETURN_TYPE_RE,
    Member,
    NamedType,
    Typed,
    TypeExpr,
    alias_target,
)
from analyzer.resolve.typetext import (
    named_types,
    type_arguments,
)
from analyzer.rules.typescript import typescript

MAX_DEPTH = 12
# `interface C extends Pick<Fiber, 'effect'>`: members mixed in at run time (analyzer/rules/typescript.toml)
MIXIN_TYPES = typescript().member_subsets
_IMPORT_TYPE_RE = re.compile(r"import\(\s*['\"]([^'\"]+)['\"]\s*\)\.([A-Za-z_$][\w$]*)")
_INDEXED_RE = re.compile(r"^\s*([A-Za-z_$][\w$.]*(?:<[^\[\]]*>)?)\[\s*['\"]([A-Za-z_$][\w$]*)['\"]\s*\]\s*$")


class ReturnTypes(Protocol):
    """What declarations need from expression typing: `ReturnType<typeof f>` is what `f` returns."""

    def return_type_of(self, mod: ModuleRef, text: str) -> list[NamedType]: ...


class _NoExpressions:
    """The stand-in until `Types` hands the expression part in, and after it lets go (see `Types.release`)."""

    def return_type_of(self, mod: ModuleRef, text: str) -> list[NamedType]:
        raise RuntimeError("Declarations asked for a ReturnType<…> before Types handed it the expression part")


class Declarations:
    """Declarations a type text names, their supertypes and members. `ReturnType<typeof f>` needs expression
    typing: the expression part is handed in as `exprs` once it exists (it is built on this one)."""

    def __init__(self, program: Program, symbols: SymbolResolver) -> None:
        self.p = program
        self.symbols = symbols
        self.exprs: ReturnTypes = _NoExpressions()
        self._resolved: dict[tuple[ModuleRef, str], list[NamedType]] = {}
        self._text_cache: dict[tuple[ModuleRef, str], list[NamedType]] = {}
        # (module, text, evidence) → the NamedTypes resolve_text made: a pure function of the cached base
        self._typed_cache: dict[tuple[ModuleRef, str, str], list[NamedType]] = {}
        self._member_cache: dict[tuple[DefRef, str], list[Member]] = {}
        self._having: dict[tuple[ModuleRef, str, str, str], tuple[bool, list[NamedType]]] = {}
        self._having_base: dict[tuple[ModuleRef, str, str], tuple[bool, list[NamedType]]] = {}
        self._super_cache: dict[DefRef, list[NamedType]] = {}
        self._aug_cache: dict[DefRef, list[NamedType]] = {}
        self._aug_by_name: dict[str, list[tuple[str, list[DefRef]]]] = defaultdict(list)
        for (spec, name), refs in program.augmentations.items():
            self._aug_by_name[name].append((spec, refs))
        self._namespaces: dict[tuple[ModuleRef, str], bool] = {}  # does the module declare namespace name?

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
                base += self.exprs.return_type_of(mod, text)
                text = RETURN_TYPE_RE.sub("unknown", text)
            base += [nt for name in named_types(text) for nt in self.resolve_name(mod, name)]
            self._text_cache[key] = base
        return base

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
        if not self.has_namespace(declaring, head):
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
                rhs = alias_target(d.signature)
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

    def has_namespace(self, mod: ModuleRef, name: str) -> bool:
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

    def class_type_params(self, cls: DefRef) -> list[str]:
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

    def as_named(self, t: Typed, why: str) -> list[NamedType]:
        if isinstance(t, TypeExpr):
            return self.resolve_text(t.mod, t.text, f"{why} ({t.evidence})")
        if isinstance(t, NamedType) and not t.static:
            return [NamedType(t.ref, (why, *t.evidence))]
        return []

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
