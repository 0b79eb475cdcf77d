"""Questions asked of the graph: find symbols, name → nodes (with suggestions), callers, callees."""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import networkx as nx

from analyzer.errors import AnalyzerError

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


def node_label(g: nx.MultiDiGraph, node: str) -> str:
    a = g.nodes[node]
    return f"{a['repo']}:{a['path']}:{a['line']} {a['qualname']}"


def find_symbols(g: nx.MultiDiGraph, pattern: str, kinds: Iterable[str] | None = None) -> list[str]:
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


def resolve_symbol(g: nx.MultiDiGraph, spec: str) -> list[SymbolMatch]:
    """All definitions a spec may mean. Forms: `name`, `Class.method`, `Class`, `repo:path:Qualified.name`.

    Raises AnalyzerError (with the closest names) when nothing matches."""
    if spec.count(":") >= 2:
        candidates = [spec] if spec in g else []
    else:
        real = [(n, a) for n, a in g.nodes(data=True) if a.get("kind") not in ("module", "unknown")]
        candidates = [n for n, a in real if a.get("qualname") == spec or (
            "." not in spec and a.get("name") == spec and a.get("kind") in (*CONTAINER_KINDS, "function"))]
        if not candidates and "." not in spec:  # a bare method name: every method so named (ambiguous)
            candidates = [n for n, a in real if a.get("name") == spec and a.get("kind") in MEMBER_KINDS]
    if not candidates:
        raise AnalyzerError(f"unknown symbol {spec!r}; closest: {', '.join(suggest(g, spec)) or 'none'}")
    matches = []
    for node in sorted(candidates):
        a = g.nodes[node]
        members = []
        if a["kind"] in CONTAINER_KINDS:
            members = sorted(n for n in g.nodes if g.nodes[n].get("parent") == node
                             and g.nodes[n]["kind"] in ("method", "getter", "setter", "constructor"))
        matches.append(SymbolMatch(spec, node, members))
    return matches


def resolve_one(g: nx.MultiDiGraph, spec: str) -> SymbolMatch:
    """Like `resolve_symbol`, but an ambiguous name is an error listing the candidates and their places."""
    matches = resolve_symbol(g, spec)
    if len(matches) > 1:
        listed = "; ".join(f"{m.node} (line {g.nodes[m.node]['line']})" for m in matches[:8])
        more = f" and {len(matches) - 8} more" if len(matches) > 8 else ""
        raise AnalyzerError(f"ambiguous symbol {spec!r}: {listed}{more}; pass one as repo:path:Name")
    return matches[0]


def words(name: str) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(name)}


def suggest(g: nx.MultiDiGraph, spec: str, limit: int = 6) -> list[str]:
    """Closest existing names: by edit distance, and by shared camel-case words (`SystemPromptProjection`
    → `RuntimeContextProjection`, `renderPrompt`)."""
    name = spec.rsplit(":", 1)[-1]
    names = sorted({a["qualname"] for _, a in g.nodes(data=True)
                    if a.get("kind") not in ("module", "unknown", "constructor")})
    close = difflib.get_close_matches(name, names, n=limit, cutoff=0.6)
    target = words(name)
    scored = []
    for q in names:
        shared = target & words(q.rsplit(".", 1)[-1])
        if shared:
            ratio = difflib.SequenceMatcher(None, name.lower(), q.lower()).ratio()
            scored.append((len(shared), ratio, q))
    scored.sort(key=lambda t: (-t[0], -t[1], t[2]))
    out: list[str] = []
    for q in [*close[:3], *(q for _, _, q in scored)]:
        if q not in out:
            out.append(q)
        if len(out) >= limit:
            break
    return out


def edges_out(g: nx.MultiDiGraph, node: str, allow: set[str] | None = None) -> list[tuple[str, dict]]:
    return sorted(((v, d) for _, v, d in g.out_edges(node, data=True) if allow is None or d["kind"] in allow),
                  key=lambda t: (t[1]["line"], t[1].get("column", 0), t[0]))


def edges_in(g: nx.MultiDiGraph, node: str, allow: set[str] | None = None) -> list[tuple[str, dict]]:
    return sorted(((u, d) for u, _, d in g.in_edges(node, data=True) if allow is None or d["kind"] in allow),
                  key=lambda t: (t[0], t[1]["line"]))
