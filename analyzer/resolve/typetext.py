"""Reduce TypeScript type texts to the named types a receiver may have.

Built on `analyzer.index.types` (bracket-aware splitting, generic arguments). Deliberately small: enough
for `Promise<X | undefined>`, `readonly X[]`, `Map<K, V>` and inline object types `{ a: A; b?: B }`, which
is what receiver typing meets in practice. Unlike `candidate_types`, a wrapper such as `AsyncIterable<T>`
stays itself here: its methods are not T's.
"""

from __future__ import annotations

import functools
import re

from analyzer.index.types import split_top_level, top_level_indices, type_arguments
from analyzer.rules.typescript import typescript

# read through when naming the types a text mentions; keywords and primitive types; mapped types a
# dictionary is read through (analyzer/rules/typescript.toml)
WRAPPERS = typescript().named_through
NON_TYPES = typescript().primitive
DICTIONARY_VIEWS = typescript().dictionary_views
_IDENT_RE = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*")


def split_top(text: str, seps: str) -> list[str]:
    """Split at any of the single-character `seps` where not nested (brackets, strings, `=>` aware)."""
    parts = [text]
    for sep in seps:
        parts = [piece for part in parts for piece in split_top_level(part, sep)]
    return [p.strip() for p in parts if p.strip()]


def named_types(text: str | None) -> list[str]:
    """Candidate type names: `Promise<PreparedLlmCall | undefined>` → ["PreparedLlmCall"]."""
    if not text:
        return []
    return list(_named_types(text))  # a fresh list: callers may extend it


@functools.lru_cache(maxsize=65536)
def _named_types(text: str) -> tuple[str, ...]:
    """Pure in its text, and resolution asks the same few thousand texts hundreds of thousands of times."""
    out: list[str] = []
    for part in split_top(text, "|&"):
        part = part.strip()
        if part.startswith("readonly "):
            part = part[len("readonly "):].strip()
        while part.endswith("[]"):
            part = part[:-2].strip()
        if part.startswith("(") and part.endswith(")"):
            out.extend(named_types(part[1:-1]))
            continue
        if part.startswith("typeof "):
            part = part[len("typeof "):]
        m = _IDENT_RE.match(part)
        if not m:
            continue
        name = m.group(0)
        if name in WRAPPERS:
            for arg in type_arguments(part)[:1]:
                out.extend(named_types(arg))
            continue
        if name not in NON_TYPES:
            out.append(name)
    return tuple(dict.fromkeys(out))


def object_type_members(text: str | None) -> dict[str, str]:
    """Members of an inline object type (after unwrapping Promise etc.): `{ a: A; b?: B }`."""
    if not text:
        return {}
    return dict(_object_type_members(strip_comments(text).strip()))  # a fresh dict: callers may change it


@functools.lru_cache(maxsize=65536)
def _object_type_members(text: str) -> tuple[tuple[str, str], ...]:
    """Pure in its text; memoised for the same reason as `_named_types`."""
    for part in split_top(text, "|&"):
        part = part.strip()
        m = _IDENT_RE.match(part)
        if m and m.group(0) in WRAPPERS:
            args = type_arguments(part)
            if args:
                found = object_type_members(args[0])
                if found:
                    return tuple(found.items())
        if part.startswith("{") and part.endswith("}"):
            members: dict[str, str] = {}
            for member in (m for folded in split_top(part[1:-1], ";,\n") for m in _unfold_members(folded)):
                method = _method_signature(member)
                if method is not None:  # `invoke(api: Api, r: R): Out` is the member `invoke: (api: Api, r: R) => Out`
                    members.setdefault(*method)
                    continue
                key, sep, value = member.partition(":")
                key = key.strip().removeprefix("readonly ").rstrip("?").strip()
                if sep and re.match(r"^[A-Za-z_$][\w$]*$", key):
                    members[key] = value.strip()
            if members:
                return tuple(members.items())
    return ()


_MEMBER_START_RE = re.compile(r"(?:readonly\s+)?[A-Za-z_$][\w$]*\??\s*(?::|\(|<[^()]*>\s*\()")
_NOT_A_TYPE_END = {"new", "keyof", "typeof", "infer", "extends", "is", "asserts", "readonly", "unique", "abstract"}


def _unfold_members(member: str) -> list[str]:
    """Members a folded type text ran together: extracted signatures join lines with one space, so
    `{ schema: S\n invoke(api: A): R }` (no `;`) reads `schema: S invoke(api: A): R`. A new member starts
    where, at the top level after a complete type, a name is followed by `:` or `(` — no type continues
    that way. Not after a conditional type's `?` (`A extends B ? C: D`), whose `:` belongs to it."""
    out, depth, start, prev, quote = [], 0, 0, "", ""
    for pos, ch in enumerate(member):
        if quote:  # inside a string literal type (`"a b: c"`): nothing there starts a member
            if ch == quote and member[pos - 1] != "\\":
                quote, prev = "", ch
            continue
        if ch in "'\"`":
            quote = ch
            continue
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>" and not (ch == ">" and pos and member[pos - 1] == "="):
            depth -= 1
        elif ch == "?" and depth == 0 and member[pos + 1:pos + 2] not in (":", "("):
            break  # a conditional type (an optional member's `?` is checked above): the rest stays one member
        if ch.isspace() and depth == 0 and pos > start and prev and (prev[-1] in "$)]}>'\"" or prev[-1].isalnum()
                                                                      or prev[-1] == "_"):
            word = re.findall(r"[\w$]+$", member[start:pos].rstrip())
            rest = member[pos + 1:]
            if not member[pos - 2:pos] == "=>" and (not word or word[0] not in _NOT_A_TYPE_END) \
                    and ":" in member[start:pos] and _MEMBER_START_RE.match(rest):
                out.append(member[start:pos].strip())
                start = pos + 1
        if not ch.isspace():
            prev = ch
    out.append(member[start:].strip())
    return [m for m in out if m]


_METHOD_HEAD_RE = re.compile(r"^\s*(?:readonly\s+)?([A-Za-z_$][\w$]*)\??\s*(<[^()]*>)?\s*\(")


def _method_signature(member: str) -> tuple[str, str] | None:
    """A method signature of an inline object type, `name?<T>(params): R`, as (name, `(params) => R`): the
    function type a property `name: (params) => R` would declare (TypeScript treats both alike)."""
    m = _METHOD_HEAD_RE.match(member)
    if m is None or m.group(1) == "new":  # `new (…): T` is a construct signature
        return None
    start, depth = m.end() - 1, 0
    for pos in range(start, len(member)):
        depth += {"(": 1, ")": -1}.get(member[pos], 0)
        if depth == 0:
            rest = member[pos + 1:].strip()
            ret = rest[1:].strip() if rest.startswith(":") else "void"
            return m.group(1), f"{member[start:pos + 1]} => {ret or 'void'}"
    return None


_ARROW_HEAD_RE = re.compile(r"^\s*(?:async\s+)?(?:function\s*\*?\s*[\w$]*\s*)?(\(|[A-Za-z_$][\w$]*\s*=>)")


def arrow_parameters(text: str) -> list[str]:
    """Parameter names of a function expression's source text: `(a, b: T) => …`, `x => …`, `async (a) => …`.
    Memoised: the function-value pass asks it for the same argument texts millions of times."""
    return list(_arrow_parameters(text))


@functools.lru_cache(maxsize=1 << 16)
def _arrow_parameters(text: str) -> tuple[str, ...]:
    m = _ARROW_HEAD_RE.match(text)
    if not m:
        return ()
    if m.group(1) != "(":
        return (m.group(1).split("=>")[0].strip(),)
    start = m.end(1)
    depth, i = 1, start
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    inner = text[start: i - 1]
    names = []
    for part in split_top(inner, ","):
        name = re.split(r"[?:=]", part.removeprefix("...").strip(), maxsplit=1)[0].strip()
        names.append(name)
    return tuple(names)


def function_type_parameters(text: str) -> list[str]:
    """Parameter types of a function type: `(streams: S, n?: number) => R` → ["S", "number"]."""
    text = text.strip()
    while text.startswith("((") and text.endswith(")"):  # a parenthesised function type
        text = text[1:-1].strip()
    if not text.startswith("("):
        return []
    depth, end = 0, len(text)
    for pos, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            end = pos
            break
    types = []
    for part in split_top(text[1:end], ","):
        _, sep, typ = part.partition(":")
        types.append(typ.strip() if sep else "")
    return types


def function_type_return(text: str) -> str | None:
    """The return type of a function type: `(key: string) => Face` → "Face"; None for anything else."""
    text = text.strip()
    while text.startswith("((") and text.endswith(")"):
        text = text[1:-1].strip()
    if not text.startswith("("):
        return None
    depth = 0
    for pos, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            rest = text[pos + 1:].strip()
            return rest[2:].strip() or None if rest.startswith("=>") else None
    return None


def object_pattern_names(text: str) -> list[tuple[str, str]]:
    """(key, local name) pairs of a simple object pattern's top level: `{ a, b: c, d = 1 }`."""
    inner = text.strip()
    if not (inner.startswith("{") and "}" in inner):
        return []
    inner = inner[1:inner.rindex("}")]
    out = []
    depth = 0
    part = ""
    for ch in inner + ",":
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            piece = part.split("=", 1)[0].strip()
            key, sep, local = piece.partition(":")
            key, local = key.strip(), (local.strip() if sep else key.strip())
            if key.isidentifier() and local.isidentifier():
                out.append((key, local))
            part = ""
        else:
            part += ch
    return out


_INDEX_KEY_RE = re.compile(r"^\[\s*[A-Za-z_$][\w$]*\s*(?::\s*(?:string|number|symbol)|in\s[^\]]+)\s*\]\s*\??\s*:")


def dictionary_value(text: str | None) -> str | None:
    """The value type of a dictionary type: `Record<K, V>` (also inside `Partial<…>`/`Readonly<…>`), an index
    signature `{ [k: string]: V }` or a mapped type `{ [K in keyof M]: V }` as its only member; else None."""
    if not text:
        return None
    text = text.strip().rstrip(";").strip()
    head = text.split("<", 1)[0].strip()
    if head in DICTIONARY_VIEWS and type_arguments(text):
        return dictionary_value(type_arguments(text)[0])
    if head == "Record":
        args = type_arguments(text)
        return args[1].strip() if len(args) == 2 else None
    if not (text.startswith("{") and text.endswith("}")):
        return None
    members = split_top(text[1:-1], ";,\n")
    if len(members) != 1:
        return None
    m = _INDEX_KEY_RE.match(members[0].lstrip().removeprefix("readonly ").lstrip())
    if m is None:
        return None
    rest = members[0].lstrip().removeprefix("readonly ").lstrip()[m.end():].strip()
    return rest or None


# --- declared types read through: conditionals, type parameters, mapped types (new helpers) ------------------
_COMMENT_RE = re.compile(r"/\*.*?\*/", re.S)


def strip_comments(text: str) -> str:
    """`{ /** doc (with, commas) */ t: T }` → `{ t: T }`: a folded signature keeps JSDoc inside type literals."""
    return _COMMENT_RE.sub(" ", text) if "/*" in text else text


def _top_level_marks(text: str) -> list[tuple[int, str]]:
    """Positions of `?` and `:` outside brackets and strings (`=>` and `?.` aware)."""
    return [(i, text[i]) for i in top_level_indices(text) if text[i] in "?:"]


def conditional_parts(text: str) -> tuple[str, str, str, str] | None:
    """`C extends E ? T : F` → (C, E, T, F) at the top level (nested conditionals stay in T or F); else None."""
    marks = _top_level_marks(text)
    if not marks or marks[0][1] != "?":
        return None
    head = text[:marks[0][0]]
    at = re.search(r"\sextends\s", head)
    if at is None:
        return None
    pending = 0
    for pos, ch in marks[1:]:
        if ch == "?":
            pending += 1
        elif pending:
            pending -= 1
        else:
            return (head[:at.start()].strip(), head[at.end():].strip(), text[marks[0][0] + 1:pos].strip(),
                    text[pos + 1:].strip())
    return None


def type_parameters(signature: str) -> list[tuple[str, str | None]]:
    """(name, default) of `type Name<A extends X = D, B> = …`'s type parameters, in order."""
    m = re.match(r"^(?:export\s+)?(?:declare\s+)?type\s+[\w$]+\s*<", signature)
    if m is None:
        return []
    depth, end = 1, m.end()
    while end < len(signature) and depth:
        ch = signature[end]
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and signature[end - 1] != "=":
            depth -= 1
        end += 1
    out: list[tuple[str, str | None]] = []
    for part in split_top(signature[m.end():end - 1], ","):
        name = re.match(r"^(?:const\s+|in\s+|out\s+)*([A-Za-z_$][\w$]*)", part)
        if name is None:
            return []
        piece = re.search(r"=(?!>)", part)  # `=>` belongs to a function type in the constraint
        default = part[piece.end():].strip() or None if piece else None
        out.append((name.group(1), default))
    return out


def literal_keys(text: str) -> set[str] | None:
    """`'a' | "b"` → {"a", "b"}; None unless every part is a string literal."""
    keys: set[str] = set()
    for part in split_top(text, "|"):
        m = re.match(r"""^(['"])([^'"]*)\1$""", part)
        if m is None:
            return None
        keys.add(m.group(2))
    return keys or None


_MAPPED_RE = re.compile(r"^\s*(?:readonly\s+|[+-]readonly\s+)?\[\s*([A-Za-z_$][\w$]*)\s+in\s+(.+?)"
                        r"(?:\s+as\s+(`[^`]*`))?\s*\]\s*[-+]?\??\s*:\s*(.+)$", re.S)


def mapped_type(text: str) -> tuple[str, str, str | None, str] | None:
    """`{ [K in C as `use${Capitalize<K>}`]: V }` (one member) → (K, C, the `as` template or None, V)."""
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    members = split_top(text[1:-1], ";,\n")
    if len(members) != 1:
        return None
    m = _MAPPED_RE.match(members[0])
    return (m.group(1), m.group(2).strip(), m.group(3), m.group(4).strip()) if m else None


def template_key(template: str, var: str, key: str) -> str | None:
    """The source key a key-remapping template turns into `key`: `` `use${Capitalize<N>}` `` and "useSession" →
    "session"; None when `key` is not of that form (only `${N}` and `${Capitalize<N>}`/`${Uncapitalize<N>}`)."""
    m = re.match(r"^`([^`$]*)\$\{\s*(?:(Capitalize|Uncapitalize)\s*<\s*)?" + re.escape(var) + r"\s*>?\s*\}([^`$]*)`$",
                 template.strip())
    if m is None or not key.startswith(m.group(1)) or not key.endswith(m.group(3)) \
            or len(key) <= len(m.group(1)) + len(m.group(3)):
        return None
    core = key[len(m.group(1)): len(key) - len(m.group(3))]
    if m.group(2) == "Capitalize":
        return core[0].lower() + core[1:] if core[0].isupper() else None
    if m.group(2) == "Uncapitalize":
        return core[0].upper() + core[1:] if core[0].islower() else None
    return core


def template_prefixes(text: str) -> set[str]:
    """The fixed prefixes of key-remapping templates in a type text (`as `use${…}`` → "use")."""
    return {m.group(1) for m in re.finditer(r"\bas\s+`([A-Za-z_$][\w$]*)\$\{", text)}


_FOLDED_KEY_RE = re.compile(r"(?:^|(?<=[\s;,{]))(?:readonly\s+)?([A-Za-z_$][\w$]*)\s*\??\s*:(?!:)")


def folded_object_members(text: str) -> dict[str, str]:
    """Members of an object type whose line breaks were folded away (`{ node: N active: boolean t: T }`, as
    a parameter's annotation is stored): a member starts at each top-level `key:` not after a `?`."""
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return {}
    inner = text[1:-1]
    starts: list[tuple[int, int, str]] = []
    skip_to = 0
    for i in top_level_indices(inner):
        if i < skip_to or not (i == 0 or inner[i - 1] in " \t;,"):
            continue
        m = _FOLDED_KEY_RE.match(inner, i)
        if m and not inner[:i].rstrip().endswith("?"):  # `? a : b` of a conditional type is no member
            starts.append((i, m.end(), m.group(1)))
            skip_to = m.end()
    members: dict[str, str] = {}
    for k, (_, value_at, key) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(inner)
        members.setdefault(key, inner[value_at:end].strip().rstrip(";,").strip())
    return members
