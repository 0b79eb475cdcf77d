"""Literal-text lookup on the index: which pinned file and line holds a piece of text as a string literal.

First the facts the index records (string call arguments, string object-property values, with their lines).
The index does not record template literals with substitutions (`Current directory: ${cwd}`) or array
elements, which is how prompts are usually written; for those, the indexed files at the pinned commit whose
text holds the needle are parsed (same tree-sitter grammars as the indexer) and the hit is kept only when it
lies inside a string or template literal, with that literal's line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from analyzer.parse.languages import language_for_path, parse_bytes
from analyzer.prefix.attribute import LiteralSite

if TYPE_CHECKING:
    from tree_sitter import Node

    from analyzer.index.build import RepoIndex

LITERAL_NODES = ("string", "template_string")
SHOWN_CHARS = 80


@dataclass
class _Repo:
    name: str
    commit: str
    facts: list[tuple[str, int, str]]                     # (path, line, literal text) from the index's facts
    index: RepoIndex
    _texts: dict[str, bytes] | None = field(default=None, repr=False)

    @property
    def texts(self) -> dict[str, bytes]:
        """path → content of each indexed file (read once, only when the facts do not hold a needle)."""
        if self._texts is None:
            self._texts = {f.path: self.index.read_bytes(f.path) for f in self.index.files
                           if not f.declaration_only}
        return self._texts


class IndexLiterals:
    """A `LiteralLookup` over one or more `RepoIndex` (callable: needle → sites, best first)."""

    def __init__(self, indexes: list[RepoIndex]) -> None:
        self._repos: list[_Repo] = []
        for idx in indexes:
            facts = []
            for f in idx.files:
                for call in f.calls:
                    facts += [(f.path, call.line, a.text) for a in call.args if a.kind == "string"]
                for obj in f.objects:
                    facts += [(f.path, p.line, p.value_text) for p in obj.properties if p.value_kind == "string"]
            self._repos.append(_Repo(idx.name, idx.commit, facts, idx))
        self._trees: dict[tuple[str, str], Node] = {}

    def __call__(self, needle: str) -> list[LiteralSite]:
        """Every literal that holds `needle`: the index's facts and the syntax trees, application code first."""
        hits = [LiteralSite(r.name, r.commit, path, line, _short(text), needle, "", "index facts", full=text,
                            first_line=line, last_line=line)
                for r in self._repos for path, line, text in r.facts if needle in text]
        seen = {(h.repo, h.path, h.line) for h in hits}
        data = needle.encode("utf-8")
        for r in self._repos:
            for path, content in r.texts.items():
                at = content.find(data)
                while at >= 0:
                    line = content.count(b"\n", 0, at) + 1
                    node = None if (r.name, path, line) in seen else self._literal_at(r, path, content, at,
                                                                                      at + len(data))
                    if node is not None:
                        text = content[node.start_byte:node.end_byte].decode("utf-8", "replace")
                        hits.append(LiteralSite(r.name, r.commit, path, line, _short(text), needle, "",
                                                "syntax tree", full=text[1:-1], first_line=node.start_point[0] + 1,
                                                last_line=node.end_point[0] + 1))
                        seen.add((r.name, path, line))
                    at = content.find(data, at + 1)
        later = tuple(_later_paths())
        return sorted(hits, key=lambda h: any(m in f"/{h.path}" for m in later))

    def _literal_at(self, repo: _Repo, path: str, content: bytes, start: int, end: int) -> Node | None:
        """The string/template literal that holds bytes start..end of the file, if any."""
        key = (repo.name, path)
        if key not in self._trees:
            language = language_for_path(path)
            if language is None:
                return None
            self._trees[key] = parse_bytes(content, language).root_node
        node: Node | None = self._trees[key].descendant_for_byte_range(start, end)
        while node is not None and node.type not in LITERAL_NODES:
            node = node.parent
        return node


def _later_paths() -> list[str]:
    from analyzer.prefix.attribute import literal_settings

    return list(literal_settings().get("later_paths", []))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
