"""Expression typing: what an expression in a scope is (the part of receiver typing that calls ask; see
`analyzer.resolve.receivers`).

A receiver chain (`this.llm.stream`, `ctx.services.get(K)`, `(await import('./x')).f`) is typed root
first — a parameter, a binding, an import, `this` — then member by member; call results through return
types (declared, `return new`, generic instantiation, built-in collections' element types). Owns the
memo tables of bindings, scope parameters and scope calls. A callback's parameter without an annotation
(`(s) => s.run()`) is typed by context, in a part above (`analyzer.resolve.contextual`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Protocol

from analyzer.index.model import Binding, Call, Definition, Field
from analyzer.index.types import base_name
from analyzer.resolve.declarations import Declarations
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import DefRef, Program
from analyzer.resolve.symbols import SymbolResolver
from analyzer.resolve.typed import (
    KEYED_RE,
    RETURN_TYPE_RE,
    NamedType,
    NamespaceType,
    Typed,
    TypeExpr,
    declares_type_parameter,
    strip_optional,
)
from analyzer.resolve.typetext import (
    dictionary_value,
    function_type_return,
    named_types,
    object_pattern_names,
    object_type_members,
    split_top,
    type_arguments,
)
from analyzer.rules.typescript import typescript

# built-in collections: methods returning an element, an iterator of elements, the same array type; the
# generic array types (analyzer/rules/typescript.toml)
BUILTIN_ELEMENT_METHODS = typescript().element_methods
ITERATOR_ELEMENTS = typescript().iterator_elements
SAME_ARRAY_METHODS = typescript().same_array_methods
ARRAY_GENERICS = tuple(f"{name}<" for name in typescript().arrays)
_SCOPED_RETURN_TYPE_RE = re.compile(r"\s*(?:(?:NonNullable|Awaited)<\s*)*ReturnType<\s*typeof\s+"
                                    r"([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)\s*(?:<\s*(['\"])([^'\"]*)\2\s*>)?"
                                    r"\s*>(?:\s*>)*\s*")


class ParameterContext(Protocol):
    """What expression typing needs from contextual typing: parameters typed by where they are passed."""

    def closure_params(self, mod: ModuleRef, scope: str | None) -> dict[str, list[tuple[Call, int, list[str]]]]: ...

    def contextual_param_types(self, mod: ModuleRef, b: Binding) -> list[Typed]: ...

    def property_param_types(self, mod: ModuleRef, d: Definition, j: int) -> list[Typed]: ...


class _NoContext:
    """The stand-in until `Types` hands the contextual part in, and after it lets go (see `Types.release`)."""

    def closure_params(self, mod: ModuleRef, scope: str | None) -> dict[str, list[tuple[Call, int, list[str]]]]:
        raise RuntimeError(_UNWIRED)

    def contextual_param_types(self, mod: ModuleRef, b: Binding) -> list[Typed]:
        raise RuntimeError(_UNWIRED)

    def property_param_types(self, mod: ModuleRef, d: Definition, j: int) -> list[Typed]:
        raise RuntimeError(_UNWIRED)


_UNWIRED = "Expressions asked for a contextual type before Types handed it the contextual part"


class Expressions:
    """Types of expressions, asking `Declarations` what a type text names. Contextual typing of callback
    parameters and option properties recurses back into expression typing, so the contextual part (built on
    this one) is handed in as `contextual` once it exists."""

    def __init__(self, program: Program, symbols: SymbolResolver, decls: Declarations) -> None:
        self.p = program
        self.symbols = symbols
        self.decls = decls
        self.contextual: ParameterContext = _NoContext()
        self._returning: set[DefRef] = set()
        self._binding_cache: dict[tuple[ModuleRef, str | None, str, int, int], list[Typed]] = {}
        self._scope_params: dict[tuple[ModuleRef, str], dict[str, tuple[Definition, int, str | None]]] = {}
        self._scope_calls: dict[ModuleRef, dict[str | None, list]] = {}

    def return_type_of(self, mod: ModuleRef, text: str) -> list[NamedType]:
        """`ReturnType<typeof f>` / `ReturnType<typeof ns.f>`: the named types `f`'s declared or inferred return
        type resolves to (a `Promise<X>` gives X, as everywhere in receiver typing)."""
        out: list[NamedType] = []
        for m in RETURN_TYPE_RE.finditer(text):
            chain = m.group(1).split(".")
            for ref in self.callee_targets(mod, None, chain, 0):
                why = f"{mod.path}: ReturnType<typeof {m.group(1)}> is what {ref.qualname} returns"
                for t in self.return_types(ref):
                    if isinstance(t, TypeExpr):
                        out.extend(self.decls.resolve_text(t.mod, t.text, f"{why} ({t.evidence})"))
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

    def member_types(self, nt: NamedType, name: str) -> list[Typed]:
        out: list[Typed] = []
        if nt.static:
            for m in self.decls.find_member(nt.ref, name):
                if m.definition is not None and "static" in m.definition.modifiers:
                    out.extend(self.return_types(DefRef(m.owner.repo, m.owner.path, m.definition.qualname)))
            return out
        for m in self.decls.find_member(nt.ref, name):
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
        m = KEYED_RE.match(parts[0]) if len(parts) == 1 else None
        if m is None or not declares_type_parameter(d, m.group(2)):
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
                current = keyed or [t for c in current for t in (*self.element_types(c),
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
            having = self.decls.types_having(typed.mod, typed.text, typed.evidence, name)[1]
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
                     for t in self.call_types(mod, scope, chain, line, callee)]
            if not found and len(chain) >= 2:  # `this.sessions.get(id)?.handle()`: a V of the `Map<K, V>`
                found = self.builtin_call_types(mod, scope, chain, line, f"{mod.path}:{line}")
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
                        return self.contextual.property_param_types(mod, d, j)
                    why = f"{mod.path}:{d.line}: {root} is {key!r} of parameter {prm.name}: {prm.type}"
                    return self.members_of(TypeExpr(mod, prm.type or "", why), key)
        # a parameter of an anonymous callback (`(streams) => streams.run()`); most roots get here (imports,
        # module names), and a name no closure of the scope declares types as nothing (`contextual_param_types`)
        if scope is not None and root in self.contextual.closure_params(mod, scope):
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
        so the module stands for it — only when the module declares such a namespace (`has_namespace`)."""
        if not self.decls.has_namespace(ref.module, d.name):
            return []
        return [NamespaceType(ref.module, (*evidence, f"{ref.path}:{d.line}: {d.kind} {d.name} merges with namespace "
                                                      f"{d.name} (flattened into {ref.path})"))]

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
            return self.contextual.contextual_param_types(mod, b)
        if b.type:
            out.append(TypeExpr(mod, b.type, f"{where}: {b.name}: {b.type}"))
        elif b.new_class:
            out.append(TypeExpr(mod, self._inferred_new(mod, b.scope, b.line, b.new_class),
                                f"{where}: {b.name} = new {b.new_class}(…)"))
        elif b.init_callee:
            for callee in self.callee_targets(mod, b.scope, b.init_callee, b.line):
                out.extend(self.call_types(mod, b.scope, b.init_callee, b.line, callee))
            if not out and len(b.init_callee) >= 2:
                out.extend(self.builtin_call_types(mod, b.scope, b.init_callee, b.line, where))
            if not out:
                out.extend(self._value_call_types(mod, b.scope, b.init_callee, b.line))
        elif b.init_chain:
            out.extend(self.chain_types(mod, b.scope, b.init_chain, b.line))
        if b.kind == "for_of":  # `for (const x of xs)`: x is an element of xs
            out = [t for typed in out for t in self.element_types(typed)]
        if b.destructure_key:
            return [t for typed in out for t in self.members_of(typed, b.destructure_key)]
        return out

    def _value_call_types(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int) -> list[Typed]:
        """What calling a function-typed value returns: `r.faceOf(k)` with `faceOf: (key: string) => Store`, and a
        parameter or local called bare — `(await load()).stream()` with `load: () => Promise<Streams>` is a
        Streams, as the compiler reads it (the module a lazy loader is given is the lazy-loader rule's: both)."""
        if not chain or chain[0] in ("<expr>", "<literal>") or any(seg.endswith("()") for seg in chain):
            return []
        out: list[Typed] = []
        for t in self.chain_types(mod, scope, chain, line):
            if isinstance(t, TypeExpr):
                ret = function_type_return(strip_optional(t.text))
                if ret:
                    out.append(TypeExpr(t.mod, ret, f"{t.evidence}; calling it returns {ret}"))
        return out

    def call_types(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int,
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
        if cls is None or not self.decls.class_type_params(cls):
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

    def _instantiated(self, owner: DefRef, t: Typed, receiver: TypeExpr) -> Typed:
        """`t` (a member type declared in generic `owner`) with owner's type parameters replaced by the
        receiver's type arguments — only when every name `t` mentions is such a parameter (`L`, `L[]`,
        `L | undefined`), so the result reads wholly in the receiver's module. Else `t` unchanged."""
        if not isinstance(t, TypeExpr):
            return t
        text = strip_optional(receiver.text).strip()
        d = self.p.defs.get(owner)
        if d is None or base_name(text) not in (d.name, owner.qualname):
            return t
        names, args = self.decls.class_type_params(owner), type_arguments(text)
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
        call = next((c for c in self.calls_by_scope(mod).get(scope, [])
                     if c.kind == "new" and c.line == line and ".".join(c.callee) == cls_text), None)
        if call is None:
            return cls_text
        targets = [t for t in self.callee_targets(mod, scope, call.callee, line) if self.p.defs[t].kind == "class"]
        if len(targets) != 1:
            return cls_text
        names = self.decls.class_type_params(targets[0])
        ctor_def = next((c for c in self.p.children(targets[0]) if c.kind == "constructor"), None)
        if not names or ctor_def is None:  # an inherited constructor's parameters speak of the base's own
            return cls_text
        inferred: dict[str, str] = {}
        for k, prm in enumerate(ctor_def.params):
            ret = function_type_return(strip_optional(prm.type or ""))
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

    def scoped_return_types(self, target: DefRef, text: str, why: str) -> list[Typed]:
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
            return []  # a module-level name without a type argument: `return_type_of` reads it
        out: list[Typed] = []
        for callee in self.callee_targets(mod, scope, chain, d.line):
            found = self._keyed_call_types(mod, scope, chain, d.line, callee, key) if key is not None else \
                self.return_types(callee)
            out.extend(TypeExpr(t.mod, t.text, f"{why}; ReturnType<typeof {m.group(1)}> is {t.text} ({t.evidence})")
                       if isinstance(t, TypeExpr) else t for t in found)
        return out

    def calls_by_scope(self, mod: ModuleRef) -> dict[str | None, list]:
        cached = self._scope_calls.get(mod)
        if cached is None:
            cached = defaultdict(list)
            for c in self.p.files[mod].calls:
                if any(a.kind == "function" for a in c.args):
                    cached[c.scope].append(c)
            self._scope_calls[mod] = cached
        return cached

    def builtin_call_types(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int,
                            where: str) -> list[Typed]:
        """`map.get(k)` on a `Map<K, V>` receiver is a V (likewise `array.find`)."""
        out: list[Typed] = []
        for recv in self.chain_types(mod, scope, chain[:-1], line):
            if isinstance(recv, TypeExpr):
                out.extend(self.element_types(recv, chain[-1], where))
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
        text = strip_optional(typed.text).strip()
        value = dictionary_value(text)
        if value:
            return [TypeExpr(typed.mod, value, f"{typed.evidence}; an element of {text[:60]} is {value}")]
        args = type_arguments(text) if "<" in text else []
        out: list[Typed] = []
        for nt in self.decls.resolve_text(typed.mod, text.split("<", 1)[0].strip(), ""):
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

    def element_types(self, typed: Typed, method: str = "at", where: str = "") -> list[Typed]:
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
            named = (self.decls.resolve_text(recv.mod, recv.text, recv.evidence) if isinstance(recv, TypeExpr)
                     else [recv])
            for nt in named:
                for m in self.decls.find_member(nt.ref, chain[-1]):
                    if m.definition is not None:
                        out.append(DefRef(m.owner.repo, m.owner.path, m.definition.qualname))
        return out


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


def _is_array_text(text: str) -> bool:
    text = text.strip()
    return text.endswith("[]") or text.startswith(ARRAY_GENERICS)
