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
