"""Questions asked of the graph: find symbols, name → nodes (with suggestions), callers, callees."""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.graph.protocol import CallGraph  # the stored view and networkx graphs alike

CONTAINER_KINDS = ("class", "interface", "type_alias")
MEMBER_KINDS = ("method", "getter", "setter", "object_method")
_WORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@dataclass
class SymbolMatch:
    """What a user-given symbol means: one definition, or a class standing for all its methods."""

    spec: str
    node: str  # the definition itself (function, method, or class)
    members: list[str] = field(default_factory=list)  # for classes: its methods (the trace endpoints)

    @property
    def endpoints(self) -> list[str]:
        return self.members or [self.node]


def find_symbols(g: CallGraph, pattern: str, kinds: Iterable[str] | None = None) -> list[str]:
    """Nodes whose qualified name matches a glob (`*Usage*`), or contains the text (case-insensitive)."""
    wanted = set(kinds) if kinds else None
    glob = any(ch in pattern for ch in "*?[")
    low = pattern.lower()
    out = []
    for node, a in g.nodes(data=True):
        if a.get("kind") in ("module", "unknown") or (wanted and a.get("kind") not in wanted):
            continue
        q = a.get("qualname", "")
        if (glob and (fnmatch.fnmatchcase(q, pattern) or fnmatch.fnmatchcase(a.get("name", ""), pattern))) or (
                not glob and low in q.lower()):
            out.append(node)
    return sorted(out, key=lambda n: (g.nodes[n]["qualname"], n))


def resolve_symbol(g: CallGraph, spec: str,
                   connected: Callable[[str], float | None] | None = None) -> list[SymbolMatch]:
    """All definitions a spec may mean. Forms: `name`, `Class.method`, `Class`, `repo:path:Qualified.name`.

    Raises AnalyzerError (with the closest names) when nothing matches."""
    if spec.count(":") >= 2:
        candidates = [spec] if spec in g else []
    else:
        real = [(n, a) for n, a in g.nodes(data=True) if a.get("kind") not in ("module", "unknown", "external")]
        candidates = [n for n, a in real if a.get("qualname") == spec or (
            "." not in spec and a.get("name") == spec and a.get("kind") in (*CONTAINER_KINDS, "function"))]
        if not candidates and "." not in spec:  # a bare method name: every method so named (ambiguous)
            candidates = [n for n, a in real if a.get("name") == spec and a.get("kind") in MEMBER_KINDS]
    # declaration merging (`type CallId` + `function CallId`): the name means the value half
    candidates = [n for n in candidates if not (n.endswith("#type") and n[: -len("#type")] in candidates)]
    if not candidates:
        close = suggest(g, spec, connected=connected)
        raise AnalyzerError(f"unknown symbol {spec!r}; closest: {', '.join(close) or 'none'}")
    matches = []
    for node in sorted(candidates):
        a = g.nodes[node]
        members = []
        if a["kind"] in CONTAINER_KINDS:
            members = sorted(n for n in g.nodes if g.nodes[n].get("parent") == node
                             and g.nodes[n]["kind"] in ("method", "getter", "setter", "constructor"))
        matches.append(SymbolMatch(spec, node, members))
    return matches


def production_first(g: CallGraph, matches: list[SymbolMatch], include_tests: bool) -> list[SymbolMatch]:
    """Production definitions before test ones; without `include_tests` the test ones are dropped when a
    production definition exists (a name defined only in test code still resolves, marked as test)."""
    def is_test(m: SymbolMatch) -> bool:
        return bool(g.nodes[m.node].get("test", False))

    ordered = sorted(matches, key=is_test)
    if not include_tests and any(not is_test(m) for m in ordered):
        return [m for m in ordered if not is_test(m)]
    return ordered


def resolve_one(g: CallGraph, spec: str, *, include_tests: bool = True) -> SymbolMatch:
    """Like `resolve_symbol`, but an ambiguous name is an error listing the candidates and their places
    (production definitions first, test ones marked `[test]`)."""
    matches = production_first(g, resolve_symbol(g, spec), include_tests)
    if len(matches) > 1:
        listed = "; ".join(f"{m.node} (line {g.nodes[m.node]['line']})"
                           + (" [test]" if g.nodes[m.node].get("test", False) else "") for m in matches[:8])
        more = f" and {len(matches) - 8} more" if len(matches) > 8 else ""
        raise AnalyzerError(f"ambiguous symbol {spec!r}: {listed}{more}; pass one as repo:path:Name")
    return matches[0]


def words(name: str) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(name)}


def suggest(g: CallGraph, spec: str, limit: int = 6,
            connected: Callable[[str], float | None] | None = None) -> list[str]:
    """Closest existing names to an unknown one.

    Candidates share a camel-case word with the name (weighted by how rare the word is, so a shared
    `Projection` counts for more than a shared `get`) or are close by edit distance. When `connected` is
    given (trace: the cost of the best request path between a candidate and the other endpoint, or None)
    the candidates with the cheapest paths come first — at a pin where `SystemPromptProjection` does not
    exist yet, `renderPrompt` and `RuntimeContextProjection` play its role and are offered."""
    import math

    name = spec.rsplit(":", 1)[-1]
    places: dict[str, set[str]] = {}
    for _, a in g.nodes(data=True):
        if a.get("kind") in ("function", "class", "method") and not a.get("test", False):
            places.setdefault(a["qualname"], set()).add(a["path"])
    pool = sorted(places)
    bare = {q: q.rsplit(".", 1)[-1] for q in pool}
    df: dict[str, int] = {}
    for q in pool:
        for w in words(bare[q]) | _path_words(places[q]):
            df[w] = df.get(w, 0) + 1
    target = words(name)
    scored = []
    for q in pool:
        shared = target & words(bare[q])
        in_path = (target & _path_words(places[q])) - shared  # `renderPrompt` in …/system-prompt/…
        ratio = difflib.SequenceMatcher(None, name.lower(), bare[q].lower()).ratio()
        if not shared and ratio < 0.75:
            continue
        weight = sum(math.log(len(pool) / df[w]) for w in shared)
        weight += 0.5 * sum(math.log(len(pool) / df[w]) for w in in_path)
        head = _head_word(bare[q]) == _head_word(name)  # same kind of thing: *Projection, *Runtime
        scored.append((weight + 4 * ratio + (3 if head else 0), q))
    scored.sort(key=lambda t: (-t[0], t[1]))
    top = [q for _, q in scored]
    if connected is not None:  # a cost: candidates that share a short request path with the other end first
        costs = {q: connected(q) for q in top}
        rank = {q: i for i, q in enumerate(top)}
        linked = sorted((q for q in top if costs[q] is not None), key=lambda q: (costs[q], rank[q]))
        return _two_groups(top, linked, limit)
    out: list[str] = []
    for q in top:
        if q not in out:
            out.append(q)
        if len(out) >= limit:
            break
    return out


def _two_groups(by_name: list[str], linked: list[str], limit: int) -> list[str]:
    """A few closest names, then names that stand on a request path with the other end (marked)."""
    names = by_name[: max(2, limit // 2)]
    path = [f"{q} (on a request path)" for q in linked if q not in names][: limit - len(names) + 2]
    return names + path


def _path_words(paths: set[str]) -> set[str]:
    return {w for p in paths for part in re.split(r"[/._-]", p) for w in words(part)} - _PATH_NOISE


_PATH_NOISE = {"src", "packages", "ts", "tsx", "js", "index", "lib", "dist"}


def _head_word(name: str) -> str:
    found = _WORD_RE.findall(name)
    return found[-1].lower() if found else ""


def edges_out(g: CallGraph, node: str, allow: set[str] | None = None) -> list[tuple[str, dict]]:
    return sorted(((v, d) for _, v, d in g.out_edges(node, data=True) if allow is None or d["kind"] in allow),
                  key=lambda t: (t[1]["line"], t[1].get("column", 0), t[0]))


def edges_in(g: CallGraph, node: str, allow: set[str] | None = None) -> list[tuple[str, dict]]:
    return sorted(((u, d) for u, _, d in g.in_edges(node, data=True) if allow is None or d["kind"] in allow),
                  key=lambda t: (t[0], t[1]["line"]))
