"""Load the `.scm` query files that hold the language knowledge, combined into one query per grammar.

Each aspect (definitions, members, modules, …) lives in its own file, `<aspect>.ts.scm` for
TypeScript/TSX and `<aspect>.js.scm` for JavaScript, or `<aspect>.scm` when the node types are shared;
`<aspect>.<language>.scm` (`jsx.tsx.scm`) serves one grammar only, and a grammar without a file for an
aspect has none of its node types (plain TypeScript has no JSX).

A file whose first line is `; inherits: NAME[,NAME…]` starts with `<aspect>.NAME.scm`, as tree-sitter's
own query files do: the patterns JavaScript and TypeScript share live once in `<aspect>.ecma.scm` and
both dialects inherit them, adding only what their grammar spells differently or alone has. (TypeScript
cannot inherit the JavaScript files whole: `field_definition`, the `optional_chain` field and identifier
class names are JavaScript's spellings, which the TypeScript grammar rejects or never matches.)
They are concatenated into one `Query` so a file's tree is traversed once; every pattern names its
purpose with `(#set! role "…")`, which the extractor dispatches on.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from tree_sitter import Query

from analyzer.parse.languages import get_language

QUERY_DIR = Path(__file__).resolve().parent / "queries"
FULL_ASPECTS = ("definitions", "heritage", "members", "modules", "code", "tokens", "jsx", "values")
DECLARATION_ASPECTS = ("definitions", "heritage", "members", "modules", "tokens")
_INHERITS = re.compile(r";\s*inherits:\s*([\w.-]+(?:\s*,\s*[\w.-]+)*)\s*")


def dialect(language: str) -> str:
    """`ts` for typescript/tsx (tsx shares the TypeScript queries), `js` for javascript."""
    return "js" if language == "javascript" else "ts"


def query_source(aspect: str, language: str) -> str:
    for name in (f"{aspect}.{language}.scm", f"{aspect}.{dialect(language)}.scm", f"{aspect}.scm"):
        path = QUERY_DIR / name
        if path.exists():
            return _with_inherited(aspect, path)
    return ""  # an aspect this grammar has no node types for


def _with_inherited(aspect: str, path: Path, seen: tuple[Path, ...] = ()) -> str:
    """The file's text after the text of the files its `; inherits:` line names (inherited first)."""
    if path in seen:
        raise ValueError(f"query files inherit in a circle: {' → '.join(p.name for p in (*seen, path))}")
    text = path.read_text(encoding="utf-8")
    head = _INHERITS.fullmatch(text.split("\n", 1)[0])
    if head is None:
        return text
    parents = [_with_inherited(aspect, QUERY_DIR / f"{aspect}.{name.strip()}.scm", (*seen, path))
               for name in head.group(1).split(",")]
    return "\n".join((*parents, text))


@cache
def combined_query(language: str, aspects: tuple[str, ...]) -> tuple[Query, tuple[str, ...], tuple[dict, ...]]:
    """The query for these aspects, each pattern's role, and each pattern's other settings."""
    source = "\n".join(query_source(a, language) for a in aspects)
    query = Query(get_language(language), source)
    settings = tuple(dict(query.pattern_settings(i)) for i in range(query.pattern_count))
    roles = tuple(str(s.get("role", "")) for s in settings)
    return query, roles, settings


def file_query(language: str, declaration: bool) -> tuple[Query, tuple[str, ...], tuple[dict, ...]]:
    """The combined query a file gets: a declaration file (`.d.ts`) gets no code or JSX aspects."""
    return combined_query(language, DECLARATION_ASPECTS if declaration else FULL_ASPECTS)


@cache
def error_query(language: str) -> Query:
    return Query(get_language(language), query_source("errors", language))
