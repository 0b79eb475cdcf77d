"""Build the call graph from a `Program`: one node per definition, one edge per resolved call.

Only assembly: the edges come from the resolver pipeline (`analyzer.resolve.pipeline`); this module turns
definitions into nodes, edges into networkx's adjacency and the counts into the graph's `stats`."""

from __future__ import annotations

import time
from collections import Counter
from operator import attrgetter

import networkx as nx

from analyzer import __version__
from analyzer.index.testcode import is_test_path
from analyzer.resolve.edges import Edge
from analyzer.resolve.modules import Resolution
from analyzer.resolve.parallel import worker_count
from analyzer.resolve.pipeline import resolve_program
from analyzer.resolve.program import MODULE_QUALNAME, Program
from analyzer.resolve.rules import RuleSet

GRAPH_FORMAT = 2


def build_graph(program: Program, rules: RuleSet, workers: int | None = None) -> nx.MultiDiGraph:
    """`workers` > 1 resolves files in that many forked processes (default: `$ANALYZER_RESOLVE_WORKERS`, else 1)."""
    started = time.perf_counter()

    g = nx.MultiDiGraph()
    g.graph.update({
        "format": GRAPH_FORMAT,
        "analyzer_version": __version__,
        "pins": {name: repo.commit for name, repo in program.repos.items()},
        "rules": {"files": rules.sources, "hash": rules.text_hash},
    })
    nodes = g._node  # filled directly (see `_add_edges`): same dicts and order as add_node/add_edge
    for ref, d in program.defs.items():
        nodes[ref.node_id] = {
            "repo": ref.repo, "path": ref.path, "qualname": d.qualname, "name": d.name, "kind": d.kind,
            "line": d.line, "end_line": d.end_line, "signature": d.signature, "body_hash": d.body_hash,
            "parent": (f"{ref.repo}:{ref.path}:{d.parent}" if d.parent else None), "exported": d.exported,
            "modifiers": list(d.modifiers), "test": is_test_path(ref.path), "has_body": d.has_body}
    succ, pred = g._succ, g._pred
    for n in nodes:
        succ[n] = {}
        pred[n] = {}

    # the resolvers and their memo tables are freed when this returns, before the graph grows (peak RSS)
    resolved = resolve_program(program, rules, worker_count() if workers is None else workers)
    edges, unresolved, external_calls = resolved.edges, resolved.unresolved, resolved.external_calls
    matches, by_kind = resolved.rule_matches, dict(Counter(map(attrgetter("kind"), edges)))
    n_edges = len(edges)  # one new key per edge (counted here: `_add_edges` consumes the list)
    del resolved
    _add_edges(g, edges)

    files = list(program.files.values())
    unresolved_imports = _unresolved_imports(program)
    g.graph["stats"] = {
        "files": len(files),
        "files_with_parse_errors": sum(1 for f in files if f.parse_errors),
        "nodes": g.number_of_nodes(),
        "edges": n_edges,
        "edges_by_kind": by_kind,
        "unresolved_calls": len(unresolved),
        "external_calls": sum(external_calls.values()),
        "external_packages": len({r.external for _, r in unresolved_imports if r.external}),
        "unresolved_imports": len(unresolved_imports),
        "external_imports": sum(1 for _, r in unresolved_imports if r.external),
        "rule_matches": matches,
        "resolve_seconds": round(time.perf_counter() - started, 3),
    }
    _add_external_nodes(g, unresolved_imports, external_calls)
    g.graph["unresolved_reasons"] = dict(Counter(_reason_class(r[3]) for r in unresolved).most_common())
    g.graph["unresolved"] = unresolved  # (source node, line, call text, reason); stored beside the graph
    g.graph["unresolved_imports"] = [
        {"file": f, "specifier": r.specifier, "external": r.external, "how": r.how} for f, r in unresolved_imports
    ]
    return g


def _add_edges(g: nx.MultiDiGraph, edges: list[Edge]) -> None:
    """Add every edge in order, as `g.add_edge(source, target, **attrs)` would — the same node order
    (unknown endpoints appended on first use), keys (0, 1, … per node pair) and one key dict shared by
    `_succ` and `_pred` — but straight into networkx's dicts: its per-call overhead (argument dicts,
    attribute copies, cache clearing) was most of graph assembly for 190,000 edges. Consumes `edges`
    (left all None), so the Edge objects and their attribute dicts are not all alive at once."""
    nodes, succ, pred = g._node, g._succ, g._pred
    for i, e in enumerate(edges):
        edges[i] = None  # type: ignore[call-overload]  # consumed: each Edge is freed once its attrs exist
        source, target = e.source, e.target
        for node in (source, target):
            if node not in nodes:
                repo, path, qual = node.split(":", 2)
                nodes[node] = {"repo": repo, "path": path, "qualname": qual, "name": qual,
                               "kind": "module" if qual == MODULE_QUALNAME else "unknown", "line": 1,
                               "end_line": 1, "signature": "", "body_hash": "", "parent": None,
                               "exported": False, "modifiers": [], "test": is_test_path(path)}
                succ[node] = {}
                pred[node] = {}
        attrs = e.to_dict()
        del attrs["source"], attrs["target"]
        keyed = succ[source].get(target)
        if keyed is None:
            keyed = succ[source][target] = {}
            pred[target][source] = keyed
        keyed[len(keyed)] = attrs  # networkx's new_edge_key: the lowest unused integer
    clear = getattr(nx, "_clear_cache", None)  # networkx ≥ 3.3 caches views of a graph
    if clear is not None:
        clear(g)


def _unresolved_imports(program: Program) -> list[tuple[str, Resolution]]:
    out: list[tuple[str, Resolution]] = []
    for mod, facts in program.files.items():
        for imp in facts.imports:
            res = program.resolver.resolve(mod.repo, mod.path, imp.specifier)
            if res.module is None:
                out.append((f"{mod.repo}:{mod.path}:{imp.line}", res))
    return out


def _add_external_nodes(g: nx.MultiDiGraph, imports: list[tuple[str, Resolution]], calls: Counter[str]) -> None:
    """One node per third-party npm package (`npm:<name>`): counted, never followed, never an error."""
    importers: dict[str, set[str]] = {}
    for where, res in imports:
        if res.external:
            importers.setdefault(res.external, set()).add(where.rsplit(":", 1)[0])
    for package, files in importers.items():
        g.add_node(f"npm:{package}", repo="npm", path=package, qualname=package, name=package, kind="external",
                   line=0, end_line=0, signature="", body_hash="", parent=None, exported=True, modifiers=[],
                   test=False, importing_files=len(files), calls=calls.get(package, 0))


def _reason_class(reason: str) -> str:
    """Group reasons for the stats line (drop the names they mention)."""
    for prefix in ("receiver type of", "no member", "cannot resolve", "no indexed superclass"):
        if reason.startswith(prefix):
            return prefix
    return reason.split(" (", 1)[0] if "(" in reason else reason.split(" is ", 1)[-1]
