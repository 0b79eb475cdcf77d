"""Reduce a TypeScript type text (as written in an annotation) to the named types a receiver may have.

Resolution only needs candidate class/interface names: `Promise<PreparedLlmCall | undefined>` can
only be a `PreparedLlmCall` once awaited, `readonly Foo[]` iterates `Foo`s, `ns.Client` is `Client` in
namespace `ns`. Wrappers that do not change what a value *is* are peeled; anything else keeps its
base name (`Map<string, X>` → `Map`; its arguments are available from `type_arguments`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from analyzer.rules.typescript import typescript

# Generic wrappers whose (first) argument is the value's type for call resolution; keywords and primitive
# types (analyzer/rules/typescript.toml).
TRANSPARENT_GENERICS = typescript().transparent_generics
NON_TYPES = typescript().primitive
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def top_level_indices(text: str) -> Iterator[int]:
    """Indices of the characters of `text` outside <>, (), [], {} and strings (`=>` is not a bracket): the
    one bracket walk the type-text readers share (`split_top_level` keeps its own copy: it is the hot one)."""
    depth = 0
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            if not (ch == ">" and i > 0 and text[i - 1] == "="):
                depth -= 1
        elif depth == 0:
            yield i
        i += 1


def split_top_level(text: str, sep: str) -> list[str]:
    """Split on `sep` where it is not nested in <>, (), [], {} or a string."""
    if sep not in text:  # most type texts have no `|`/`&`/`,` at all: nothing to scan for
        stripped = text.strip()
        return [stripped] if stripped else []
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            if not (ch == ">" and i > 0 and text[i - 1] == "="):  # `=>` is not a closing bracket
                depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def base_name(text: str) -> str | None:
    """`Map<string, X>` → `Map`; `ns.Foo<T>` → `ns.Foo`; None when the text does not start with a name."""
    m = _NAME.match(text.strip())
    return m.group(0) if m else None


def type_arguments(text: str) -> list[str]:
    """`Map<string, A>` → ["string", "A"] (top-level arguments of the outermost generic, as written)."""
    text = text.strip()
    open_at = text.find("<")
    if open_at < 0 or not text.endswith(">"):
        return []
    return split_top_level(text[open_at + 1:-1], ",")


def candidate_types(text: str | None) -> list[str]:
    """Named types a value annotated with `text` may have, most specific first, without duplicates.

    `Promise<PreparedLlmCall | undefined>` → ["PreparedLlmCall"]; `readonly Foo[]` → ["Foo"];
    `typeof X` → ["X"]; `ns.Client` → ["ns.Client", "Client"]; `Map<string, A>` → ["Map"].
    """
    out: list[str] = []
    if text:
        _collect(text, out, 0)
    return out


def _collect(text: str, out: list[str], depth: int) -> None:
    if depth > 20:
        return
    text = text.strip()
    if text.startswith(":"):
        text = text[1:].strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    if not text:
        return
    union = split_top_level(text, "|")
    if len(union) > 1:
        for part in union:
            _collect(part, out, depth + 1)
        return
    intersection = split_top_level(text, "&")
    if len(intersection) > 1:
        for part in intersection:
            _collect(part, out, depth + 1)
        return
    for prefix in ("readonly ", "typeof ", "keyof ", "unique ", "asserts "):
        if text.startswith(prefix):
            if prefix == "keyof ":
                return
            _collect(text[len(prefix):], out, depth + 1)
            return
    if " is " in text:  # type predicate `x is Foo`
        _collect(text.split(" is ", 1)[1], out, depth + 1)
        return
    if text.endswith("[]"):
        _collect(text[:-2], out, depth + 1)
        return
    if text[0] in "{[('\"`" or text.startswith("new ") or len(split_top_level(text, "=>")) > 1:
        return  # object/tuple/literal/function types name no class
    name = base_name(text)
    if name is None or name in NON_TYPES:
        return
    rest = text[len(name):].strip()
    if rest.startswith("<"):
        args = type_arguments(text)
        if name.rsplit(".", 1)[-1] in TRANSPARENT_GENERICS and args:
            _collect(args[0], out, depth + 1)
            return
    _add(name, out)


def _add(name: str, out: list[str]) -> None:
    if name not in out:
        out.append(name)
    if "." in name:
        short = name.rsplit(".", 1)[-1]
        if short not in out:
            out.append(short)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0
