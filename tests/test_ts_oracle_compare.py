"""benchmarks/ts_oracle.compare on hand-made rows (no compiler needed): what counts as a hit, a miss, or neither."""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import ts_oracle  # noqa: E402


def _node(g: nx.MultiDiGraph, nid: str, kind: str, line: int, end: int, parent: str | None = None,
          has_body: bool = True) -> None:
    repo, path, qual = nid.split(":", 2)
    g.add_node(nid, repo=repo, path=path, qualname=qual, name=qual.split(".")[-1], kind=kind, line=line,
               end_line=end, parent=parent, has_body=has_body, test=False)


def _graph() -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    _node(g, "r:a.ts:Base", "class", 1, 5)
    _node(g, "r:a.ts:Base.constructor", "constructor", 2, 4, "r:a.ts:Base")
    _node(g, "r:a.ts:Child", "class", 6, 8)
    _node(g, "r:a.ts:make", "function", 10, 20)
    _node(g, "r:a.ts:make.local", "function", 11, 12, "r:a.ts:make")
    _node(g, "r:a.ts:Api", "interface", 30, 33, has_body=False)
    _node(g, "r:a.ts:Api.run", "method", 31, 31, "r:a.ts:Api", has_body=False)
    _node(g, "r:a.ts:use", "function", 40, 45)
    g.add_edge("r:a.ts:Child", "r:a.ts:Base.constructor", kind="direct", line=6, call_text="super")
    g.add_edge("r:a.ts:use", "r:a.ts:Base.constructor", kind="direct", line=41, call_text="Child")
    return g


def test_new_of_a_class_without_constructor_accepts_the_inherited_one() -> None:
    rows = [{"sample": "r:a.ts:use", "line": 41, "text": "Child",
             "defs": [{"file": "r/a.ts", "line": 6, "name": "Child", "cls": "concrete", "holder": "local"}],
             "impls": []}]
    stats, misses = ts_oracle.compare(_graph(), rows)
    assert stats["direct_checked"] == 1 and stats["direct_right"] == 1 and not misses["wrong_direct"]


def test_implementations_without_a_body_or_inside_a_function_are_not_counted() -> None:
    rows = [{"sample": "r:a.ts:use", "line": 42, "text": "api.run",
             "defs": [{"file": "r/a.ts", "line": 31, "name": "run", "cls": "interface", "holder": "local"}],
             "impls": [{"file": "r/a.ts", "line": 31, "cls": "interface"},   # the signature itself
                       {"file": "r/a.ts", "line": 15, "cls": "value"},       # `run: local` inside make
                       {"file": "r/a.ts", "line": 11, "cls": "concrete"}]}]  # make.local: a real one
    stats, misses = ts_oracle.compare(_graph(), rows)
    assert stats["impl_without_body"] == 1 and stats["impl_not_a_function"] == 1
    assert stats["iface_prod_impls"] == 1 and [m[3] for m in misses["interface"]] == ["r:a.ts:make.local"]


def test_the_trace_stratum_is_the_path_its_seam_alternatives_and_their_direct_callees() -> None:
    g = nx.MultiDiGraph()
    for nid, line in (("r:a.ts:start", 1), ("r:a.ts:middle", 10), ("r:a.ts:finish", 20), ("r:a.ts:other", 30),
                      ("r:a.ts:helper", 40), ("r:a.ts:deeper", 50), ("r:a.ts:guessed", 60)):
        _node(g, nid, "function", line, line + 5)
    _node(g, "r:a.test.ts:fake", "function", 1, 5)
    g.nodes["r:a.test.ts:fake"]["test"] = True
    _node(g, "r:a.ts:Api", "interface", 70, 72, has_body=False)
    g.add_edge("r:a.ts:start", "r:a.ts:middle", kind="direct", line=2, path="a.ts", confidence=1.0)
    for target in ("r:a.ts:finish", "r:a.ts:other", "r:a.test.ts:fake"):  # one interface seam, three targets
        g.add_edge("r:a.ts:middle", target, kind="interface", line=11, path="a.ts", confidence=0.5, possible=True)
    g.add_edge("r:a.ts:other", "r:a.ts:helper", kind="direct", line=31, path="a.ts", confidence=1.0)
    g.add_edge("r:a.ts:helper", "r:a.ts:deeper", kind="direct", line=41, path="a.ts", confidence=1.0)
    g.add_edge("r:a.ts:finish", "r:a.ts:guessed", kind="name", line=21, path="a.ts", confidence=0.1)
    got = ts_oracle.trace_stratum(g, "start", "finish")
    # the path, the other production target at its seam and what that calls; not test code, not a guess's
    # target, not two calls away
    assert got == ["r:a.ts:finish", "r:a.ts:helper", "r:a.ts:middle", "r:a.ts:other", "r:a.ts:start"]


def test_an_overload_signature_far_above_its_implementation_maps_to_it() -> None:
    """Go to Definition may name the first of several long overload signatures; the graph's node is the
    implementation below them, however many lines down, and not another function of that name further on."""
    g = nx.MultiDiGraph()
    _node(g, "r:b.ts:convert", "function", 60, 80)
    _node(g, "r:b.ts:Other.convert", "method", 120, 130)
    _node(g, "r:b.ts:caller", "function", 200, 210)
    mapper = ts_oracle.Mapper(g)
    assert mapper.node_at("r/b.ts", 30, "convert") == "r:b.ts:convert"
    assert mapper.node_at("r/b.ts", 100, "convert") == "r:b.ts:Other.convert"
