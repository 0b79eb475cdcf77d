"""Which tree-sitter grammar reads which file, and cached parsers for them.

Grammar choice follows the file extension as TypeScript itself does: `.ts/.mts/.cts` → typescript,
`.tsx` → tsx, `.js/.mjs/.cjs/.jsx` → javascript. `.d.ts` files are TypeScript declaration files.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version

import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Language, Parser, Tree

EXTENSION_LANGUAGE = {
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
}
DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")


def language_for_path(path: str) -> str | None:
    """The grammar name for a path, or None when it is not a TS/JS source."""
    dot = path.rfind(".")
    if dot < 0:
        return None
    return EXTENSION_LANGUAGE.get(path[dot:].lower())


def is_declaration_file(path: str) -> bool:
    return path.lower().endswith(DECLARATION_SUFFIXES)


@cache
def get_language(name: str) -> Language:
    if name == "typescript":
        return Language(tree_sitter_typescript.language_typescript())
    if name == "tsx":
        return Language(tree_sitter_typescript.language_tsx())
    if name == "javascript":
        return Language(tree_sitter_javascript.language())
    raise ValueError(f"unknown grammar {name!r}")


@cache
def get_parser(name: str) -> Parser:
    return Parser(get_language(name))


def parse_bytes(source: bytes, language: str) -> Tree:
    """Parse source text; tree-sitter recovers from syntax errors, so this never raises on bad input."""
    return get_parser(language).parse(source)


@cache
def grammar_versions() -> str:
    """Versions that decide parse results; part of the per-file cache key."""
    parts = []
    for dist in ("tree-sitter", "tree-sitter-typescript", "tree-sitter-javascript"):
        try:
            parts.append(f"{dist}={version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist}=?")
    return ";".join(parts)
