"""Named function types and the functions that produce their values.

`type Translate = (key: string) => string` plays the part an interface plays for objects: a prop, option
or parameter declared `t: Translate` is called as `t(…)`, and when no caller can be followed to the value
given (slot registries, renderer maps, hooks), the functions that make values of that type are the live
candidates — a function declared with it (`const t: Translate = (…) => …`) or a factory whose declared
return type it is (`function localeSeat(…): Translate { return (key) => … }`: the closure it returns
belongs to it). Both are *possible*, like an interface's implementations. A type made by many producers
says too little about one call, so beyond MAX_PRODUCERS none is named.

The declared type of the value called is often several steps from the function type: `{ t }:
PopupSelectInjected & PropsLocale<'command'>`, where `PropsLocale<N>` is a conditional alias whose object
branch declares `t: TranslateNS<N>` and `TranslateNS<N> = Translate<…>`. `member_texts` reads a member
through such texts (intersections, unions, conditionals with `infer`, generic aliases with their
parameters bound, `Pick`/`Omit`/`Partial`/`Readonly`, mapped types with remapped keys, indexed access,
interfaces and classes), each alias step an evidence line.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from analyzer.index.testcode import is_test_path
from analyzer.index.types import type_arguments
from analyzer.resolve.calls import node_id_for_scope
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import DefRef, Program
from analyzer.resolve.receivers import Types
from analyzer.resolve.typed import NamedType, TypeExpr
from analyzer.resolve.typetext import (
    NON_TYPES,
    conditional_parts,
    folded_object_members,
    function_type_parameters,
    literal_keys,
    mapped_type,
    named_types,
    object_type_members,
    split_top,
    strip_comments,
    template_key,
    template_prefixes,
    type_parameters,
)
from analyzer.rules.typescript import typescript

MAX_PRODUCERS = 16
Producer = tuple[DefRef, tuple[str, ...], bool]  # (function, evidence, whether the value is a closure it returns)
MAX_TYPE_DEPTH = 10  # alias → alias → conditional → … steps when reading a member's declared type
CLASS_LIKE = ("interface", "class")
# mapped types that keep every member's type, or some members; built-in containers (rules/typescript.toml)
SAME_MEMBERS = typescript().same_members
MEMBER_SUBSETS = typescript().member_subsets
CONTAINERS = typescript().containers
PRODUCER_KINDS = ("function", "method", "getter", "object_method")
_INDEXED = re.compile(r"^\s*([A-Za-z_$][\w$.]*)(?:<[^\[\]]*>)?\[\s*['\"]([A-Za-z_$][\w$]*)['\"]\s*\]\s*$")
_ANNOTATED = re.compile(r"^(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*:\s*(.+?)\s*=\s*"
                        r"(?:async\b|function\b|\(|[\w$]+\s*=>)")


_NAME_RE = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
_INDEX_ACCESS = re.compile(r"^(.+)\[\s*(?:(['\"])([A-Za-z_$][\w$]*)\2|([A-Za-z_$][\w$]*))\s*\]$", re.S)


@dataclass(frozen=True)
class TypeText:
    """A type as written: the module its names resolve in, the text, the type parameters bound around it
    (`N` of `PropsLocale<N>` → `'command'` as the use wrote it, `HS` of an `infer HS`) and the lines that
    led there (the evidence an edge made from it cites)."""

    mod: ModuleRef
    text: str
    env: tuple[tuple[str, tuple[TypeText, ...]], ...] = ()
    evidence: tuple[str, ...] = ()

    def bound(self, name: str) -> tuple[TypeText, ...] | None:
        for key, values in reversed(self.env):
            if key == name:
                return values
        return None

    def at(self, text: str, env: tuple | None = None, why: str | None = None) -> TypeText:
        return TypeText(self.mod, text, self.env if env is None else env,
                        self.evidence if why is None else (*self.evidence, why))


def _unparen(text: str) -> str:
    """`(A & B)` → `A & B`, but `(a) => b` and `(A) | (B)` stay."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0 and i < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


def alias_rhs(signature: str) -> str | None:
    """The right-hand side of `type Name<…> = rhs` (a `=` inside the type parameters is a default)."""
    m = re.match(r"^(?:export\s+)?(?:declare\s+)?type\s+[\w$]+", signature)
    if m is None:
        return None
    depth = 0
    for i in range(m.end(), len(signature)):
        ch = signature[i]
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "=" and depth == 0:
            return signature[i + 1:].strip().lstrip("|").strip()
    return None


def is_function_type(rhs: str) -> bool:
    """`(a: A) => R`, `<T>(x: T) => R`, `new (…) => C`, `async`-free arrows only: a callable type literal."""
    return bool(re.match(r"^(?:new\s+)?(?:<[^()]*>\s*)?\(", rhs)) and "=>" in rhs


class FunctionTypes:
    def __init__(self, program: Program, types: Types) -> None:
        self.p = program
        self.types = types
        self._producers: dict[DefRef, list[tuple[DefRef, tuple[str, ...], bool]]] | None = None
        self._typed_names: set[str] | None = None
        self._aliases: set[str] | None = None
        self._member_memo: dict[tuple[ModuleRef, str, str, str], list[NamedType]] = {}

    def typed_names(self) -> set[str]:
        """Names of fields and parameters whose declared type may be a named function type: the only calls
        worth typing (typing every unbound call would cost more than the rest of this pass)."""
        if self._typed_names is None:
            aliases = self._alias_names()
            names: set[str] = set()
            for f in (f for facts in self.p.files.values() for f in facts.fields):
                if f.type and (aliases.intersection(named_types(f.type)) or _INDEXED.match(f.type)):
                    names.add(f.name)
            def candidate(text: str) -> bool:
                return bool(aliases.intersection(named_types(text)) or _INDEXED.match(text))

            for d in self.p.defs.values():
                for prm in d.params:
                    if prm.type and candidate(prm.type):
                        names.add(prm.name)
                    elif prm.type and prm.type.lstrip().startswith("{"):  # `({ t }: { t: Translate })`
                        names.update(k for k, t in object_type_members(prm.type).items() if candidate(t))
            names.update(self._alias_member_names(candidate))
            names.update(self._record_member_names(candidate))
            self._typed_names = names
        return self._typed_names

    def _record_member_names(self, candidate) -> set[str]:  # type: ignore[no-untyped-def]
        """The members `interface L extends Record<Level, LogMethod>` declares, one per literal of `Level`, when
        the value type may be a named function type."""
        names: set[str] = set()
        for ref, d in self.p.defs.items():
            for ext in d.extends:
                if ext.lstrip().startswith("Record<") and len(args := type_arguments(ext.strip())) == 2 \
                        and candidate(args[1]):
                    names |= self._literal_keys(TypeText(ref.module, args[0])) or set()
        return names

    def _alias_member_names(self, candidate) -> set[str]:  # type: ignore[no-untyped-def]
        """Members written inline in aliases (`type PropsLocale<N> = N extends … ? { t: TranslateNS<N> } : object`)
        and the call names a key-remapping mapped type makes (`as `use${Capitalize<N>}`` → `useSession`)."""
        names: set[str] = set()
        prefixes: set[str] = set()
        for d in self.p.defs.values():
            if d.kind != "type_alias":
                continue
            rhs = strip_comments(alias_rhs(d.signature) or "")
            if "{" not in rhs:
                continue
            prefixes |= template_prefixes(rhs)
            for obj in _inline_objects(rhs):
                names.update(k for k, t in folded_object_members(obj).items() if candidate(t))
        if prefixes:
            pattern = re.compile("^(?:" + "|".join(map(re.escape, sorted(prefixes))) + ")[A-Z]")
            for facts in self.p.files.values():
                names.update(c.callee[-1] for c in facts.calls if len(c.callee) <= 2 and pattern.match(c.callee[-1]))
        return names

    def _alias_names(self) -> set[str]:
        """Names of aliases that may be function types: a function type literal, `X['k']`, or one reference
        to such an alias (`type TranslateNS<N> = Translate<LocaleKeysOf<N>>`), to a fixed point."""
        if self._aliases is None:
            rhs = {d.name: alias_rhs(d.signature) or "" for d in self.p.defs.values() if d.kind == "type_alias"}
            names = {n for n, r in rhs.items() if is_function_type(r) or _INDEXED.match(r)}
            grown = True
            while grown:
                more = {n for n, r in rhs.items() if n not in names and len(split_top(r, "|&")) == 1
                        and (m := _NAME_RE.match(r)) and m.group(0) in names}
                names |= more
                grown = bool(more)
            self._aliases = names
        return self._aliases

    def function_aliases(self, nts: list[NamedType], depth: int = 0) -> list[NamedType]:
        """The named function types among `nts`, following `type A = B` and `type A = X['k']`."""
        out: list[NamedType] = []
        for nt in nts:
            d = self.p.defs.get(nt.ref)
            if d is None or d.kind != "type_alias":
                continue
            rhs = alias_rhs(d.signature) or ""
            if is_function_type(rhs):
                out.append(nt)
            elif depth < 3:
                why = f"{nt.ref.path}:{d.line}: type {d.name} = {rhs[:60]}"
                for found in self.function_aliases(self.text_types(nt.ref.module, rhs, why), depth + 1):
                    out.append(NamedType(found.ref, (*nt.evidence, *found.evidence)))
        return out

    def text_types(self, mod, text: str, why: str) -> list[NamedType]:
        """Named types of a type text, an indexed access `Props['t']` read through to the member's type."""
        if _INDEXED.match(text) is None:
            return self.types.decls.resolve_text(mod, text, why)
        return self.value_types(TypeText(mod, text, (), (why,)))

    def member_types(self, mod: ModuleRef, text: str, key: str, why: str) -> list[NamedType]:
        """Named types of member `key` of the type `text` declares (`{ t }: A & PropsLocale<'x'>` → TranslateNS)."""
        cache_key = (mod, text, key, why)
        found = self._member_memo.get(cache_key)
        if found is None:
            found = [nt for tt in self.member_texts(TypeText(mod, text, (), (why,)), key)
                     for nt in self.value_types(tt)]
            self._member_memo[cache_key] = found
        return list(found)

    def value_types(self, tt: TypeText, depth: int = 0) -> list[NamedType]:
        """The named types a member's declared type text stands for: a type parameter is what the use bound
        it to, `X['k']` / `X[K]` is that member's type, anything else resolves where it is written."""
        text = _unparen(strip_comments(tt.text).strip())
        if depth > MAX_TYPE_DEPTH or not text:
            return []
        cond = conditional_parts(text)  # `t: N extends K ? Translate : never`: either branch
        parts = [cond[2], cond[3]] if cond is not None else split_top(text, "|")
        if len(parts) > 1:  # `T | undefined` with T a bound type parameter
            return [nt for part in parts for nt in self.value_types(tt.at(part), depth + 1)]
        bound = tt.bound(text)
        if bound is not None:
            return [nt for b in bound for nt in self.value_types(b, depth + 1)]
        indexed = self._indexed(tt, text)
        if indexed is not None:
            base, key = indexed
            return [nt for inner in self.member_texts(base, key, depth + 1)
                    for nt in self.value_types(inner, depth + 1)]
        why = tt.evidence[-1] if tt.evidence else f"{tt.mod.path}: {text[:60]}"
        return [NamedType(nt.ref, (*tt.evidence[:-1], *nt.evidence), nt.static)
                for nt in self.types.decls.resolve_text(tt.mod, text, why)]

    def _indexed(self, tt: TypeText, text: str) -> tuple[TypeText, str] | None:
        """`Props['t']` → (Props, "t"); `HS[N]` with `N` bound to `'session'` → (HS, "session")."""
        m = _INDEX_ACCESS.match(text)
        if m is None:
            return None
        key = m.group(3)
        if key is None:
            bound = tt.bound(m.group(4)) or ()
            keys = {k for b in bound for k in (literal_keys(b.text) or ())}
            if len(keys) != 1:
                return None
            key = keys.pop()
        return tt.at(m.group(1).strip()), key

    def member_texts(self, tt: TypeText, key: str, depth: int = 0) -> list[TypeText]:
        """The declared type texts of member `key` of a type: through intersections and unions (each part
        that has it), conditional types (each branch that has it, `infer X` bound), generic aliases (their
        parameters bound to the use's arguments), `Pick`/`Omit`/`Partial`/`Readonly`, mapped types, indexed
        access, interfaces and classes (their fields, inherited ones included)."""
        text = _unparen(strip_comments(tt.text).strip())
        if depth > MAX_TYPE_DEPTH or not text:
            return []
        text = text.removeprefix("readonly ").strip()
        cond = conditional_parts(text)
        if cond is not None:
            check, extends, yes, no = cond
            infer = self._inferred(tt, check, extends, depth)
            return [*self.member_texts(tt.at(yes, (*tt.env, *infer)), key, depth + 1),
                    *self.member_texts(tt.at(no), key, depth + 1)]
        for sep in "|&":
            parts = split_top(text, sep)
            if len(parts) > 1:
                return [found for part in parts for found in self.member_texts(tt.at(part), key, depth + 1)]
        if text.startswith("{"):
            mapped = mapped_type(text)
            if mapped is not None:
                return self._mapped_member(tt, mapped, key, depth)
            member = folded_object_members(text).get(key)  # a stored annotation's line breaks are folded
            return [tt.at(member)] if member else []
        bound = tt.bound(text)
        if bound is not None:
            return [found for b in bound for found in self.member_texts(b, key, depth + 1)]
        indexed = self._indexed(tt, text)
        if indexed is not None:
            base, inner_key = indexed
            return [found for inner in self.member_texts(base, inner_key, depth + 1)
                    for found in self.member_texts(inner, key, depth + 1)]
        m = _NAME_RE.match(text)
        if m is None or m.group(0) in NON_TYPES:
            return []
        name, rest = m.group(0), text[m.end():].strip()
        args = type_arguments(text) if rest.startswith("<") else []
        if name in ("Pick", "Omit") and len(args) == 2:
            keys = self._literal_keys(tt.at(args[1]))
            if keys is not None and (key in keys) != (name == "Pick"):
                return []
            return self.member_texts(tt.at(args[0]), key, depth + 1)
        if name in SAME_MEMBERS and args:
            return self.member_texts(tt.at(args[0]), key, depth + 1)
        if name == "Record" and len(args) == 2:  # `extends Record<Level, LogMethod>`: a member per literal key
            keys = self._literal_keys(tt.at(args[0]))
            return [tt.at(args[1])] if keys is not None and key in keys else []
        return self._named_member(tt, name, args, key, depth)

    def _named_member(self, tt: TypeText, name: str, args: list[str], key: str, depth: int) -> list[TypeText]:
        out: list[TypeText] = []
        for nt in self.types.decls.resolve_name(tt.mod, name):
            d = self.p.defs.get(nt.ref)
            if d is None:
                continue
            if d.kind == "type_alias":
                rhs = alias_rhs(d.signature)
                if not rhs:
                    continue
                env = tuple((param, (tt.at(args[i]),) if i < len(args) else
                             (TypeText(nt.ref.module, default),) if default else ())
                            for i, (param, default) in enumerate(type_parameters(d.signature)))
                written = re.sub(r"^(?:export\s+)?(?:declare\s+)?", "", " ".join(strip_comments(d.signature).split()))
                why = f"{nt.ref.path}:{d.line}: {written[:100]}"
                out.extend(self.member_texts(TypeText(nt.ref.module, rhs, env, (*tt.evidence, why)), key, depth + 1))
            elif d.kind in CLASS_LIKE:
                found = [m for m in self.types.decls.find_member(nt.ref, key) if m.field is not None and m.field.type]
                for m in found:
                    f = m.field
                    assert f is not None and f.type is not None
                    out.append(TypeText(m.owner.module, f.type, (),
                                        (*tt.evidence, f"{m.owner.path}:{f.line}: {f.owner}.{key}: {f.type}")))
                if not found:  # `interface P extends PropsLocale<'x'>`: a supertype only text can read
                    half = self.p.defs.get(DefRef(nt.ref.repo, nt.ref.path, d.merges)) if d.merges else None
                    for line, ext in [(x.line, e) for x in (d, half) if x is not None for e in x.extends]:
                        why = f"{nt.ref.path}:{line}: {d.name} extends {ext}"
                        out.extend(self.member_texts(TypeText(nt.ref.module, ext, (), (*tt.evidence, why)), key,
                                                     depth + 1))
        return out

    def _literal_keys(self, tt: TypeText, depth: int = 0) -> set[str] | None:
        text = tt.text.strip()
        bound = tt.bound(text)
        if bound is not None and len(bound) == 1:
            return self._literal_keys(bound[0], depth + 1)
        keys = literal_keys(text)
        if keys is None and depth < 3 and _NAME_RE.fullmatch(text):  # `type Level = 'error' | 'warn'`
            for nt in self.types.decls.resolve_name(tt.mod, text):
                d = self.p.defs.get(nt.ref)
                rhs = alias_rhs(d.signature) if d is not None and d.kind == "type_alias" else None
                if rhs:
                    return self._literal_keys(TypeText(nt.ref.module, strip_comments(rhs)), depth + 1)
        return keys

    def _inferred(self, tt: TypeText, check: str, extends: str, depth: int) -> tuple:
        """`I extends { hooks: infer HS } ? …`: HS is I's `hooks` member (only object patterns are read)."""
        out = []
        for member, value in object_type_members(extends).items():
            m = re.match(r"^infer\s+([A-Za-z_$][\w$]*)", value)
            if m is not None:
                out.append((m.group(1), tuple(self.member_texts(tt.at(check), member, depth + 1))))
        return tuple(out)

    def _mapped_member(self, tt: TypeText, mapped: tuple[str, str, str | None, str], key: str,
                       depth: int) -> list[TypeText]:
        """`{ [N in keyof HS & string as `use${Capitalize<N>}`]: V }`: `useSession` is V with N = 'session',
        when HS has a `session` (a constraint other than `keyof X` or literals is not checked)."""
        var, constraint, template, value = mapped
        source = template_key(template, var, key) if template else key
        if source is None:
            return []
        keys_of = re.match(r"^keyof\s+(.+?)(?:\s*&\s*string)?$", constraint)
        if keys_of is not None:
            if not self.member_texts(tt.at(keys_of.group(1)), source, depth + 1):
                return []
        elif (keys := self._literal_keys(tt.at(constraint))) is not None and source not in keys:
            return []
        where = tt.evidence[-1].split(": ", 1)[0] if tt.evidence else tt.mod.path
        why = f"{where}: {key} is a member of the mapped type [{var} in {constraint}] with {var} = {source!r}"
        return [tt.at(value, (*tt.env, (var, (TypeText(tt.mod, repr(source)),))), why)]

    def producers(self, alias: DefRef) -> list[tuple[DefRef, tuple[str, ...], bool]]:
        """(function, evidence, whether the value is a closure it returns) for one named function type."""
        if self._producers is None:
            self._producers = self._index()
        found = self._producers.get(alias, [])
        return found if len(found) <= MAX_PRODUCERS else []

    def _index(self) -> dict[DefRef, list[tuple[DefRef, tuple[str, ...], bool]]]:
        names = self._alias_names()
        out: dict[DefRef, list[tuple[DefRef, tuple[str, ...], bool]]] = defaultdict(list)
        for ref, d in self.p.defs.items():
            if d.kind not in PRODUCER_KINDS or not d.has_body:
                continue
            declared = _ANNOTATED.match(d.signature) if d.kind == "function" else None
            for text, returned in ((declared.group(1) if declared else None, False), (d.return_type, True)):
                if not text or not names.intersection(_value_heads(text)):
                    continue  # `Speak[]`, `Promise<Speak>`: no function of that type is handed out
                how = f"returns {text} (a function type): the function it returns" if returned else f"is a {text}"
                why = f"{ref.path}:{d.line}: {d.qualname} {how}"
                for nt in self.function_aliases(self.types.decls.resolve_text(ref.module, text, why)):
                    out[nt.ref].append((ref, nt.evidence, returned))
        passed: dict[DefRef, list[Producer]] = defaultdict(list)
        self._passed_producers(names, passed)
        for alias, found in passed.items():  # only for a type nothing declares or returns (see _passed_producers)
            if not out.get(alias):
                out[alias] = found
        return {alias: _named_closures_first(found) for alias, found in out.items()}

    def _passed_producers(self, names: set[str], out: dict[DefRef, list[Producer]]) -> None:
        """`installer(ctx, (message) => { throw … })`: where the called function's parameter (or the called
        value's function type) declares that argument a named function type, the closure given is a value of
        it — its writer's, like any inline closure. A weaker sign than a declaration (listener types are handed
        hundreds of closures, mostly by tests), so these count only for a type nothing declares or returns, and
        closures written in test code do not count."""
        carriers = {d.name for d in self.p.defs.values() if d.kind in PRODUCER_KINDS
                    and any(prm.type and names.intersection(named_types(prm.type)) for prm in d.params)}
        carriers |= self.typed_names()
        for mod, facts in self.p.files.items():
            if is_test_path(mod.path):
                continue
            for call in facts.calls:
                if call.kind != "call" or call.callee[-1] not in carriers \
                        or not any(a.kind == "function" for a in call.args):
                    continue
                writer = DefRef(*node_id_for_scope(mod, call.scope).split(":", 2))
                for i, pmod, ptype, why in self._parameter_types(mod, call):
                    if i >= len(call.args) or call.args[i].kind != "function" \
                            or not names.intersection(named_types(ptype)):
                        continue
                    here = (f"{mod.path}:{call.line}: {'.'.join(call.callee)}(…) passes a closure as argument {i + 1} "
                            f"({why}): the closure is {writer.qualname}'s")
                    for nt in self.function_aliases(self.types.decls.resolve_text(pmod, ptype, here)):
                        out[nt.ref].append((writer, nt.evidence, True))

    def _parameter_types(self, mod: ModuleRef, call) -> list[tuple[int, ModuleRef, str, str]]:
        """(index, module, declared type, evidence) of the parameters of what `call` calls: a function's own
        parameters, else the parameters of the called value's named function type."""
        out: list[tuple[int, ModuleRef, str, str]] = []
        for target in self.types.exprs.callee_targets(mod, call.scope, call.callee, call.line):
            d = self.p.defs.get(target)
            if d is None or d.kind not in PRODUCER_KINDS:
                continue
            out += [(i, target.module, prm.type, f"{target.path}:{d.line}: parameter {prm.name} of {d.qualname}: "
                     f"{prm.type}") for i, prm in enumerate(d.params) if prm.type]
        if out:
            return out
        named = []
        for t in self.types.exprs.chain_types(mod, call.scope, call.callee, call.line):
            named += self.text_types(t.mod, t.text, t.evidence) if isinstance(t, TypeExpr) else \
                [t] if isinstance(t, NamedType) else []
        for alias in self.function_aliases(named):
            d = self.p.defs[alias.ref]
            rhs = alias_rhs(d.signature) or ""
            out += [(i, alias.ref.module, typ, f"{alias.ref.path}:{d.line}: parameter {i + 1} of {d.name}: {typ}")
                    for i, typ in enumerate(function_type_parameters(rhs)) if typ]
        return out


def _value_heads(text: str) -> set[str]:
    """The type names a value of type `text` itself has: `Translate | undefined` → {Translate}; an array, a
    promise or another wrapper of it (`Speak[]`, `Promise<Speak>`) is not a function of that type."""
    heads: set[str] = set()
    for part in split_top(text, "|"):
        part = _unparen(part.strip())
        if part in ("undefined", "null"):
            continue
        m = _NAME_RE.match(part)
        if m is None or m.group(0) in CONTAINERS \
                or (part[m.end():].strip() and not part[m.end():].strip().startswith("<")) or part.endswith("]"):
            continue
        heads.add(m.group(0))
    return heads


def _named_closures_first(found: list[Producer]) -> list[Producer]:
    """A factory whose returned closure is a declared local of the type (`const t: Translate = …; return t`)
    hands out that closure, which has a node of its own: the factory itself is then no producer."""
    declared = {r for r, _, returned in found if not returned}
    return [(r, ev, returned) for r, ev, returned in found
            if not returned or not any(d.path == r.path and d.repo == r.repo and d.qualname.startswith(r.qualname + ".")
                                       for d in declared)]


def _inline_objects(text: str, depth: int = 0) -> list[str]:
    """The object type literals a type text spells at its top level: in conditional branches, unions,
    intersections, parentheses and `Partial`-like wrappers."""
    text = _unparen(text.strip())
    if depth > MAX_TYPE_DEPTH or not text:
        return []
    cond = conditional_parts(text)
    if cond is not None:
        return [*_inline_objects(cond[2], depth + 1), *_inline_objects(cond[3], depth + 1)]
    for sep in "|&":
        parts = split_top(text, sep)
        if len(parts) > 1:
            return [obj for part in parts for obj in _inline_objects(part, depth + 1)]
    if text.startswith("{"):
        return [text]
    m = _NAME_RE.match(text)
    if m is not None and (m.group(0) in SAME_MEMBERS or m.group(0) in MEMBER_SUBSETS) and type_arguments(text):
        return _inline_objects(type_arguments(text)[0], depth + 1)
    return []
