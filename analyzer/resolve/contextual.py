"""Contextual typing: a parameter with no annotation gets its type from where its function is passed, as
TypeScript types it (the last part of receiver typing; see `analyzer.resolve.receivers`).

`items.map((x) => x.run())` (the collection's element type), `on("start", (e) => …)` (the overload the
string picks), `register({ handler(ctx) { … } })` (the property's declared function type), a callback of
a generic class method (`effect(ctx, fn: (layer: L) => R)` with `L` inferred). Owns the closure index and
the property-parameter memo.
"""

from __future__ import annotations

import re

from analyzer.index.model import CALL_SIGNATURE_FIELD, Binding, Call, Definition
from analyzer.index.types import base_name
from analyzer.resolve.declarations import Declarations
from analyzer.resolve.expressions import Expressions
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.objectliterals import Literals
from analyzer.resolve.program import DefRef, Program
from analyzer.resolve.typed import (
    KEYED_RE,
    Typed,
    TypeExpr,
    alias_target,
    declares_type_parameter,
    strip_generic,
    strip_optional,
)
from analyzer.resolve.typetext import (
    arrow_parameters,
    function_type_parameters,
    object_type_members,
    type_arguments,
)
from analyzer.rules.typescript import typescript

# Callbacks of the built-in collections: `xs.map((x) => …)` gives x the element type (TypeScript infers it
# from the generic signature): type → method → which type argument each callback parameter gets, by
# position; iterables whose spread is an array of their element (analyzer/rules/typescript.toml).
CALLBACK_ELEMENTS = typescript().callback_elements
SPREAD_ITERABLES = typescript().spread_iterables


class Contextual:
    """Callback and option-property parameters typed by their context."""

    def __init__(self, program: Program, decls: Declarations, exprs: Expressions, literals: Literals) -> None:
        self.p = program
        self.decls = decls
        self.exprs = exprs
        self.literals = literals
        self._closure_index: dict[tuple[ModuleRef, str | None], dict[str, list[tuple[Call, int, list[str]]]]] = {}
        self._param_cache: dict[tuple[ModuleRef, str, int], list[Typed]] = {}

    def contextual_param_types(self, mod: ModuleRef, b: Binding) -> list[Typed]:
        """An untyped closure parameter takes its type from the callee's parameter annotation:
        `dispatch(m, (streams) => streams.run())` with `dispatch(m, run: (streams: S) => R)` types `streams`
        as S (TypeScript's contextual typing, for the direct-call case)."""
        for call, i, params in self.closure_params(mod, b.scope).get(b.name, ()):
            if call.line <= b.line:  # the nearest call at or before the binding's line decides
                j = params.index(b.name)
                out: list[Typed] = []
                targets = self.exprs.callee_targets(mod, call.scope, call.callee, call.line)
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
                            scoped = self.exprs.scoped_return_types(target, ptypes[j], why)
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

    def closure_params(self, mod: ModuleRef, scope: str | None) -> dict[str, list[tuple[Call, int, list[str]]]]:
        """Per scope: parameter name → (call, argument index, that closure's parameters) for each call with a
        closure argument that declares the name — the first such argument of each call, the calls latest line
        first (stable, as the scan it replaces sorted them). Built once per scope from fixed facts: every
        untyped closure parameter asked the scan again."""
        key = (mod, scope)
        index = self._closure_index.get(key)
        if index is None:
            index = {}
            calls = self.exprs.calls_by_scope(mod).get(scope, [])
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
        for t in self.exprs.chain_types(mod, call.scope, call.callee, call.line):
            if not isinstance(t, TypeExpr):
                continue
            text = strip_generic(strip_optional(t.text))
            outer = function_type_parameters(text)
            if not outer and (alias := self._function_alias(t.mod, text)) is not None:  # `useSession: UseSession`
                outer = function_type_parameters(strip_generic(alias))
            declared = outer[i] if i < len(outer) else ""
            ptypes = function_type_parameters(strip_optional(declared)) if declared else []
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
            m = KEYED_RE.match(strip_optional(prm.type or "").strip())
            if m is None or m.group(1) == "this" or not declares_type_parameter(d, m.group(2)):
                continue
            k = next((n for n, q in enumerate(params) if (q.type or "").strip() == m.group(2)), None)
            if k is None or k >= len(call.args) or call.args[k].kind != "string" or i >= len(call.args) \
                    or call.args[i].kind != "function":
                continue
            key = call.args[k].text
            for nt in self.decls.resolve_text(target.module, m.group(1), ""):
                for member in self.decls.find_member(nt.ref, key):
                    if member.definition is not None:
                        types = [q.type or "" for q in member.definition.params if q.name != "this"]
                        where = f"{member.owner.path}:{member.definition.line}"
                    elif member.field is not None and member.field.type:
                        types = function_type_parameters(strip_optional(member.field.type))
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
        text = strip_optional(text).strip()
        if not re.fullmatch(r"[A-Za-z_$][\w$.]*(<.*>)?", text):  # a type reference, not `Events[K]` or a union
            return mod, [], ""
        for nt in self.decls.resolve_text(mod, text.split("<", 1)[0].strip(), ""):
            for m in self.decls.find_member(nt.ref, CALL_SIGNATURE_FIELD):
                if m.field is not None and m.field.type:
                    return m.owner.module, function_type_parameters(m.field.type), \
                        f" ({m.owner.path}:{m.field.line}: {m.owner.qualname} is called as {m.field.type})"
        return mod, [], ""

    def _function_alias(self, mod: ModuleRef, text: str) -> str | None:
        """`handler: ExtensionHandler<E>` with `type ExtensionHandler<E, R = undefined> = (event: E, ctx: Ctx) => …`:
        the alias's function type, its type parameters replaced by the arguments written at the use."""
        for nt in self.decls.resolve_text(mod, text.split("<", 1)[0].strip(), ""):
            d = self.p.defs[nt.ref]
            rhs = alias_target(d.signature) if d.kind == "type_alias" else None
            if not rhs or not function_type_parameters(strip_generic(rhs)):
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
            found = self.exprs.chain_types(mod, call.scope, arg.text.split("."), call.line)
            if element:
                found = [t for typed in found for t in self.exprs.element_types(typed)]
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
        names = self.decls.class_type_params(cls) if cls is not None else []
        if name not in names:
            return None
        k = names.index(name)
        assert cd is not None and cls is not None
        out: list[Typed] = []
        for recv in self.exprs.chain_types(mod, call.scope, call.callee[:-1], call.line):
            if not isinstance(recv, TypeExpr):
                continue
            text = strip_optional(recv.text).strip()
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
            self.exprs.chain_types(mod, call.scope, call.callee[:-1], call.line)
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
            found = [t for callee in self.exprs.callee_targets(mod, call.scope, chain, call.line)
                     for t in self.exprs.call_types(mod, call.scope, chain, call.line, callee)]
            if not found and len(chain) >= 2:
                found = self.exprs.builtin_call_types(mod, call.scope, chain, call.line, f"{mod.path}:{call.line}")
        else:
            found = self.exprs.chain_types(mod, call.scope, chain, call.line)
        out: list[Typed] = []
        for t in found:
            if not isinstance(t, TypeExpr):
                continue
            text = strip_optional(t.text).strip().removeprefix("readonly ").strip()
            base, args = text.split("<", 1)[0].strip(), type_arguments(text)
            if text.endswith("[]"):
                out.append(TypeExpr(t.mod, text, f"{t.evidence}; spread into an array literal"))
            elif base in SPREAD_ITERABLES and len(args) == 1:
                out.append(TypeExpr(t.mod, f"{args[0]}[]", f"{t.evidence}; spread into an array of {args[0]}"))
        return out

    def property_param_types(self, mod: ModuleRef, d: Definition, j: int) -> list[Typed]:
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
            for nt in self.literals.literal_types(mod, obj):
                why = f"{mod.path}:{d.line}: {d.params[j].name} is parameter {j + 1} of {d.name} in a literal typed " \
                      f"{nt.ref.qualname}"
                for m in self.decls.find_member(nt.ref, d.name):
                    if m.definition is not None and j < len(m.definition.params) and m.definition.params[j].type:
                        out.append(TypeExpr(m.owner.module, m.definition.params[j].type or "", why))
                    elif m.field is not None and m.field.type:
                        ptypes = function_type_parameters(strip_optional(m.field.type))
                        if j < len(ptypes) and ptypes[j]:
                            out.append(TypeExpr(m.owner.module, ptypes[j], f"{why} ({m.field.type})"))
            for inline in self.literals.literal_inline(mod, obj, 0):
                # `{ invoke: (api, r) => … }` as a value of `{ [K in keyof M]: { invoke(api: Api, …): … } }`
                declared = object_type_members(inline.text).get(d.name)
                ptypes = function_type_parameters(strip_optional(declared)) if declared else []
                if j < len(ptypes) and ptypes[j]:
                    out.append(TypeExpr(inline.mod, ptypes[j], f"{mod.path}:{d.line}: {d.params[j].name} is "
                                        f"parameter {j + 1} of {d.name} in a literal typed {inline.text[:60]} "
                                        f"({inline.evidence})"))
        self._param_cache[key] = out
        return out


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
