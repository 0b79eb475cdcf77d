"""Literal-text lookup on the index: which pinned file and line holds a piece of text as a string literal.

Two kinds of index facts, in this order: the string facts resolution reads (string call arguments, string
object-property values, at their call's or property's line), then the literal texts the index records for
lookups like this one (`Value` facts of kind `literal`: every string and template literal of at least
`LITERAL_MIN_CHARS` characters as written, `${…}` included — template literals with substitutions and array
elements, which is how prompts are usually written). A needle is a plain substring of a literal's text; the
line is the one the needle starts on (a template literal runs over many). No file is read or parsed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from analyzer.prefix.attribute import LiteralSite

if TYPE_CHECKING:
    from analyzer.index.build import RepoIndex

SHOWN_CHARS = 80


@dataclass
class _Repo:
    name: str
    commit: str
    facts: list[tuple[str, int, str]]           # (path, line, text) of the string facts
    literals: list[tuple[str, int, str]]        # (path, first line, text as written) of the literal facts


class IndexLiterals:
    """A `LiteralLookup` over one or more `RepoIndex` (callable: needle → sites, best first)."""

    def __init__(self, indexes: list[RepoIndex]) -> None:
        self._repos: list[_Repo] = []
        for idx in indexes:
            facts, literals = [], []
            for f in idx.files:
                for call in f.calls:
                    facts += [(f.path, call.line, a.text) for a in call.args if a.kind == "string"]
                for obj in f.objects:
                    facts += [(f.path, p.line, p.value_text) for p in obj.properties if p.value_kind == "string"]
                literals += [(f.path, v.line, v.text) for v in f.values if v.kind == "literal"]
            self._repos.append(_Repo(idx.name, idx.commit, facts, literals))

    def __call__(self, needle: str) -> list[LiteralSite]:
        """Every literal that holds `needle`: the string facts, then the literal texts, application code first."""
        hits = [LiteralSite(r.name, r.commit, path, line, _short(text), needle, "", "index facts", full=text,
                            first_line=line, last_line=line)
                for r in self._repos for path, line, text in r.facts if needle in text]
        seen = {(h.repo, h.path, h.line) for h in hits}
        for r in self._repos:
            # per line the innermost literal (a string inside a template's `${…}` is in the template's text too)
            found: dict[tuple[str, int], tuple[int, str]] = {}
            order: dict[str, int] = {}  # the files in index order, as a file's lines are in line order
            for path, first, text in r.literals:
                order.setdefault(path, len(order))
                at = text.find(needle)
                while at >= 0:
                    key = (path, first + text.count("\n", 0, at))
                    if (r.name, *key) not in seen and (key not in found or len(text) < len(found[key][1])):
                        found[key] = (first, text)
                    at = text.find(needle, at + 1)
            for (path, line), (first, text) in sorted(found.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
                hits.append(LiteralSite(r.name, r.commit, path, line, _short(text), needle, "", "index literals",
                                        full=text[1:-1], first_line=first, last_line=first + text.count("\n")))
        later = tuple(_later_paths())
        return sorted(hits, key=lambda h: any(m in f"/{h.path}" for m in later))


def _later_paths() -> list[str]:
    from analyzer.prefix.attribute import literal_settings

    return list(literal_settings().get("later_paths", []))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
