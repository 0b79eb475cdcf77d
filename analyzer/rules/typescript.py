"""TypeScript's built-in types and collection methods, read once from `typescript.toml` beside this file.

The resolver (receiver typing, type texts, function types, stored values) and the index's type reader
take their built-in knowledge from here instead of Python constants, so teaching them another built-in
(`ReadonlyMap`, a new array method) is a data change. A malformed or incomplete file is one `error:` line
naming it. The file is not a dispatch-rule file: `analyzer.resolve.rules.load_rules` skips it (`FILE`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from analyzer.errors import AnalyzerError

FILE = "typescript.toml"
SHOWN = f"analyzer/rules/{FILE}"


@dataclass(frozen=True)
class TypeScriptBuiltins:
    """The tables of `typescript.toml` (see its comments for what each means)."""

    primitive: frozenset[str]
    transparent_generics: frozenset[str]
    named_through: frozenset[str]
    same_members: frozenset[str]
    member_subsets: frozenset[str]
    dictionary_views: frozenset[str]
    containers: frozenset[str]
    arrays: tuple[str, ...]
    same_array_methods: frozenset[str]
    spread_iterables: frozenset[str]
    add_methods: dict[str, int]
    element_callbacks: frozenset[str]
    element_methods: dict[str, dict[str, int]]
    iterator_elements: dict[str, dict[str, int]]
    callback_elements: dict[str, dict[str, tuple[int, ...]]]


@cache
def typescript() -> TypeScriptBuiltins:
    """The built-ins, parsed once per process."""
    text = resources.files("analyzer.rules").joinpath(FILE).read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
        return _builtins(data["types"], data["collections"])
    except tomllib.TOMLDecodeError as exc:
        raise AnalyzerError(f"{SHOWN}: malformed ({exc}); fix the TOML syntax") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise AnalyzerError(f"{SHOWN}: a table or entry is missing or of the wrong kind ({exc!r}); "
                            f"compare it with the shipped file") from None


def _builtins(types: dict[str, Any], collections: dict[str, Any]) -> TypeScriptBuiltins:
    def names(table: dict[str, Any], key: str) -> frozenset[str]:
        return frozenset(_strings(table[key], key))

    def positions(table: dict[str, Any]) -> dict[str, dict[str, int]]:
        return {owner: {method: int(at) for method, at in methods.items()} for owner, methods in table.items()}

    return TypeScriptBuiltins(
        primitive=names(types, "primitive"),
        transparent_generics=names(types, "transparent_generics"),
        named_through=names(types, "named_through"),
        same_members=names(types, "same_members"),
        member_subsets=names(types, "member_subsets"),
        dictionary_views=names(types, "dictionary_views"),
        containers=names(types, "containers"),
        arrays=tuple(_strings(types["arrays"], "arrays")),
        same_array_methods=names(collections, "same_array_methods"),
        spread_iterables=names(collections, "spread_iterables"),
        add_methods={method: int(at) for method, at in collections["add_methods"].items()},
        element_callbacks=names(collections, "element_callbacks"),
        element_methods=positions(collections["element_methods"]),
        iterator_elements=positions(collections["iterator_elements"]),
        callback_elements={owner: {method: tuple(int(i) for i in at) for method, at in methods.items()}
                           for owner, methods in collections["callback_elements"].items()},
    )


def _strings(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of strings")
    return value


__all__ = ["FILE", "TypeScriptBuiltins", "typescript"]
