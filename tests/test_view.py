"""The lazily-loaded graph view answers exactly what the full networkx graph answers."""

from __future__ import annotations

import contextlib
import io
import shutil
from array import array
from pathlib import Path

import pytest
from graphfixtures import build_world

from analyzer.analysis import analyze
from analyzer.cli import main
from analyzer.graph.store import graph_key
from analyzer.graph.store import graph_path as view_path
from analyzer.graph.view import HEADER, MAGIC, LazyGraph, open_view


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    w = build_world(tmp_path_factory.mktemp("view"), trace=("PromptProjection", "parseChunkUsage"))
    analyze(w.ctx)  # build and store
    return w


def _key(world) -> str:
    return graph_key(list(world.ctx.lock.repos.values()))


def test_warm_analysis_serves_queries_from_the_view_and_loads_the_full_graph_on_demand(world) -> None:
    warm = analyze(world.ctx)
    assert warm.from_cache and isinstance(warm.view, LazyGraph)
    assert warm._graph is None  # nothing built the full graph yet
    full = warm.graph
    assert warm.view.to_networkx() is full and full.number_of_edges() > 0


@pytest.fixture(scope="module")
def built(world):
    """The networkx graph as the builder made it (not read back from the store)."""
    return analyze(world.ctx, rebuild=True).graph


def test_the_full_graph_read_back_is_the_built_one(world, built) -> None:
    back = analyze(world.ctx).graph
    assert list(back.nodes(data=True)) == list(built.nodes(data=True))
    assert list(back.edges(keys=True, data=True)) == list(built.edges(keys=True, data=True))
    assert {n: list(back._pred[n].items()) for n in back} == {n: list(built._pred[n].items()) for n in built}
    for u, v, k in back.edges(keys=True):
        assert back._succ[u][v][k] is back._pred[v][u][k]  # one attribute dict per edge, as networkx has it
    assert {k: v for k, v in built.graph.items() if k != "unresolved"} == back.graph


def test_the_view_matches_networkx_node_for_node(world, built) -> None:
    view, full = analyze(world.ctx).view, built
    assert list(view.nodes(data=True)) == list(full.nodes(data=True))
    assert list(view.nodes) == list(full.nodes) and len(view) == len(full)
    for n in full:
        assert n in view and view.nodes[n] == full.nodes[n]
        assert list(view.successors(n)) == list(full.successors(n))
        assert list(view.predecessors(n)) == list(full.predecessors(n))
        for data in (False, True):
            for keys in (False, True):
                assert list(view.out_edges(n, data=data, keys=keys)) == list(full.out_edges(n, data=data, keys=keys))
                assert list(view.in_edges(n, data=data, keys=keys)) == list(full.in_edges(n, data=data, keys=keys))
        for v in full.successors(n):
            assert dict(view[n][v]) == dict(full[n][v])
            assert view.has_edge(n, v) and all(view.has_edge(n, v, k) for k in full[n][v])
        for v in list(full.predecessors(n))[:3]:
            assert view.has_edge(n, v) == full.has_edge(n, v)
    assert not view.has_edge("no:such:node", next(iter(full)))
    assert "no:such:node" not in view
    assert view.materialise().number_of_edges() == full.number_of_edges()  # not in the subset: asked by name


def test_an_undeclared_attribute_raises_instead_of_loading_the_full_graph(world, monkeypatch) -> None:
    """Only `CallGraph` is answered from the view; anything else of networkx must be asked for with
    `materialise()`, never built behind the caller's back (it decodes every adjacency list)."""
    view = analyze(world.ctx).view
    assert isinstance(view, LazyGraph)
    built: list[bool] = []
    real = LazyGraph.to_networkx
    monkeypatch.setattr(LazyGraph, "to_networkx", lambda self: built.append(True) or real(self))
    for name in ("number_of_edges", "edges", "out_degree", "subgraph", "copy"):
        with pytest.raises(AttributeError):
            getattr(view, name)
    assert built == [] and view._full is None and view._lists == {}
    full = view.materialise()
    assert built == [True] and full.number_of_edges() > 0 and view.materialise() is full


def test_both_graph_forms_satisfy_the_protocol(world, built) -> None:
    """Every member `CallGraph` declares exists on the stored view and on the built networkx graph."""
    from analyzer.graph.protocol import CallGraph, NodeTable

    view = analyze(world.ctx).view
    members = {m for m in vars(CallGraph) if not m.startswith("_") or m in ("__getitem__", "__contains__",
                                                                             "__iter__", "__len__")}
    members -= {"__dict__", "__weakref__", "__module__", "__doc__", "__annotations__", "__protocol_attrs__",
                "__parameters__", "__abstractmethods__", "__non_callable_proto_members__", "__orig_bases__",
                "__subclasshook__", "__init__", "__slots__"}
    assert {"graph", "nodes", "has_edge", "predecessors", "in_edges", "out_edges"} <= members
    for g in (view, built):
        for m in members:
            assert hasattr(g, m), (type(g).__name__, m)
        for m in ("__call__", "__getitem__", "__iter__", "__contains__", "__len__"):
            assert hasattr(g.nodes, m) and m in vars(NodeTable)


def _cli(world, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--lock", str(world.lock_path), "--cache-dir", str(world.ctx.cache_dir), *args])
    # a build's stage lines (`indexing …: N files in T s`) say how the graph was made, not what it answers
    said = "".join(line for line in err.getvalue().splitlines(keepends=True)
                   if not line.startswith(("indexing ", "resolving calls: ")))
    return code, out.getvalue(), said


QUERIES = [("--json", "trace"), ("trace", "-v"), ("--json", "callers", "parseChunkUsage"),
           ("callees", "-v", "AgentLoop.step"), ("--json", "symbols", "Usage"),
           ("trace", "NoSuchThing", "parseChunkUsage"), ("--json", "index", "--stats")]


def test_commands_print_the_same_from_the_view_and_from_the_full_graph(world) -> None:
    path = view_path(world.ctx.cache_dir, _key(world))
    with_view = [_cli(world, *q) for q in QUERIES]
    assert path.exists()
    path.unlink()  # no view: the commands read the full graph (and store a new view)
    without = [_cli(world, *q) for q in QUERIES]
    assert path.exists()
    for q, a, b in zip(QUERIES, with_view, without, strict=True):
        if "index" in q:  # the load time differs; the rest must not
            a, b = (a[0], a[1].split('"seconds"')[0], a[2]), (b[0], b[1].split('"seconds"')[0], b[2])
        assert a == b, q
    assert with_view[0][0] == 0 and "parseChunkUsage" in with_view[0][1]


def test_a_corrupt_adjacency_list_is_noticed_when_read_and_answered_from_the_full_graph(world, tmp_path) -> None:
    src = view_path(world.ctx.cache_dir, _key(world))
    path = tmp_path / src.name
    shutil.copy(src, path)
    data = bytearray(path.read_bytes())
    start = len(MAGIC) + HEADER.size
    head_len, table_len, _blobs, _hc, _tc = HEADER.unpack_from(data, len(MAGIC))
    table = array("Q")
    table.frombytes(bytes(data[start + head_len:start + head_len + table_len]))
    full = analyze(world.ctx, rebuild=True).graph
    node = next(n for n in full if full.out_degree(n) > 0)
    slot = list(full.nodes).index(node) * 3  # out-lists first, one (offset, length, crc) per node
    offset, length = table[slot], table[slot + 1]
    data[start + head_len + table_len + offset + length // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    warnings: list[str] = []
    view = open_view(path, lambda: full, warnings.append)
    assert view is not None  # head and table are sound
    assert list(view.out_edges(node, data=True)) == list(full.out_edges(node, data=True))
    assert len(warnings) == 1 and "damaged" in warnings[0] and not path.exists()
    assert list(view.in_edges(node, data=True)) == list(full.in_edges(node, data=True))  # keeps answering


@pytest.mark.parametrize("cut", [0, 10, 0.5, -1])
def test_a_truncated_view_is_refused_at_open(world, tmp_path: Path, cut: float) -> None:
    src = view_path(world.ctx.cache_dir, _key(world))
    data = src.read_bytes()
    path = tmp_path / src.name
    path.write_bytes(data[: int(len(data) * cut) if isinstance(cut, float) else cut])
    warnings: list[str] = []
    assert open_view(path, lambda: None, warnings.append) is None  # type: ignore[arg-type, return-value]
    assert len(warnings) == 1 and not path.exists()



def test_a_warm_trace_never_builds_the_full_graph(world, monkeypatch: pytest.MonkeyPatch) -> None:
    """The path search must ask only the view's subset (has_edge, predecessors, edges): falling back to the
    full networkx graph decodes every adjacency list and loses the warm-query speed (seen: 2 s instead of 0.3)."""
    analyze(world.ctx)  # the view is stored
    built: list[bool] = []
    real = LazyGraph.to_networkx

    def counting(self: LazyGraph) -> object:
        built.append(True)
        return real(self)

    monkeypatch.setattr(LazyGraph, "to_networkx", counting)
    code, out, _ = _cli(world, "--json", "trace")
    assert code == 0 and "parseChunkUsage" in out
    assert built == []


def test_view_parts_are_the_view_bytes_and_write_without_a_join(tmp_path) -> None:
    """The stored view is written part by part (no joined copy of the edge blobs: the cold build's peak RSS)."""
    import networkx as nx

    from analyzer.graph.view import encode_view, encode_view_parts, open_view, save_view

    g = nx.MultiDiGraph()
    g.add_node("a", kind="function")
    g.add_node("b", kind="function")
    g.add_edge("a", "b", kind="direct", line=3)
    parts = encode_view_parts(g, {"format": 2})
    assert len(parts) > 1 and b"".join(parts) == encode_view(g, {"format": 2})
    path = tmp_path / "g.view"
    save_view(path, g, {"format": 2})
    assert path.read_bytes() == encode_view(g, {"format": 2})
    assert list(open_view(path).out_edges("a", data=True)) == [("a", "b", {"kind": "direct", "line": 3})]


def test_a_warm_library_trace_decodes_only_the_adjacency_lists_it_walks(world) -> None:
    """`api.trace` on a stored graph reads the view: a few out-lists near the path, never all of them."""
    from analyzer import api

    analysis = api.open_analysis(api.open_session(world.lock_path, cache_dir=world.ctx.cache_dir))
    view = analysis.view
    assert analysis.from_cache and isinstance(view, LazyGraph) and view._lists == {}
    result = api.trace(analysis)
    assert result.found and result.document["hops"]
    decoded = len(view._lists)
    assert view._full is None and analysis._graph is None
    assert 0 < decoded and decoded * 10 < len(view), (decoded, len(view))
