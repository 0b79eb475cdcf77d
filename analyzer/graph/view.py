"""The stored graph, loaded only as far as a query reads it (`analyze callers|callees|symbols|trace`).

Unpickling the whole networkx graph (37k nodes, 160k edges with evidence at dsh rc.2 + Pi v0.82.1) was
most of a warm query, yet a trace reads the adjacency of a few hundred nodes and `callers` of one. The
view file is the only stored form of a graph (`to_networkx()` rebuilds the full graph from it). It keeps
the graph attributes and every node's attributes in one small section (loaded at open) and each node's
out-edges and in-edges as separate blobs, found through an offset table and decoded on first use. Edge
order is networkx's (`_succ`/`_pred` insertion order), so every answer is the one the full graph gives.

Layout: MAGIC, header (section lengths, CRC-32 of head and table), head (pickle of graph attrs, node
ids and node attrs), table (offset, length, CRC-32 of every blob), blobs: first each node's out-list
`(target, key, attrs)` pickled, then each node's in-list as (source index, position in its out-list)
pairs, so each edge is stored once and in- and out-views share the same attribute dicts. Truncation is
caught at open (sizes), corruption of the head or table at open (CRC), of one blob when it is read
(CRC): the view then warns once, drops the file and answers from a rebuilt graph instead.

`LazyGraph` offers the read-only subset of the `nx.MultiDiGraph` API that queries use, the
`analyzer.graph.protocol.CallGraph` protocol (`nodes`, `in`, `g[u][v]`, `predecessors`, `successors`,
`in_edges`, `out_edges`, `graph`). Anything else raises `AttributeError`: a caller that needs networkx
asks for it with `materialise()`, so a query never decodes every adjacency list without saying so.
"""

from __future__ import annotations

import mmap
import pickle
import struct
import zlib
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.atomic import write_bytes_atomic

if TYPE_CHECKING:
    import networkx as nx

MAGIC = b"analyzer-graph-view/2\n"
HEADER = struct.Struct("<QQQII")  # head length, table length, blobs length, head CRC, table CRC
Warn = Callable[[str], None]


class ViewDamaged(ValueError):
    """The view file is not what was written."""


def encode_view(g: nx.MultiDiGraph, graph_attrs: dict[str, Any]) -> bytes:
    """The view file's bytes for `g` (its `graph` dict replaced by `graph_attrs`)."""
    return b"".join(encode_view_parts(g, graph_attrs))


def encode_view_parts(g: nx.MultiDiGraph, graph_attrs: dict[str, Any]) -> list[bytes | bytearray]:
    """The view file's bytes for `g` in the order they are written: written part by part, the ~100 MB of
    edge blobs are never copied into one joined buffer (the copy was the peak RSS of a cold build).

    Out-lists hold the edges, `(target, key, attrs)`; in-lists only point at them: `(source index,
    position in the source's out-list)` pairs in `_pred` order, so each edge is pickled once."""
    nodes = list(g.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    head = pickle.dumps((graph_attrs, nodes, [g.nodes[n] for n in nodes]), protocol=pickle.HIGHEST_PROTOCOL)
    table = array("Q")
    blobs = bytearray()
    succ, pred = g._succ, g._pred  # networkx's own adjacency: exactly its iteration order
    position: dict[tuple[str, str, Any], int] = {}
    for n in nodes:
        out: list[tuple[str, Any, dict[str, Any]]] = []
        for other, keyed in succ[n].items():
            for key, attrs in keyed.items():
                position[(n, other, key)] = len(out)
                out.append((other, key, attrs))
        blob = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
        table.extend((len(blobs), len(blob), zlib.crc32(blob)))
        blobs += blob
    for n in nodes:
        refs = array("Q")
        for other, keyed in pred[n].items():
            for key in keyed:
                refs.extend((index[other], position[(other, n, key)]))
        blob = refs.tobytes()
        table.extend((len(blobs), len(blob), zlib.crc32(blob)))
        blobs += blob
    del position, index
    table_bytes = table.tobytes()
    header = HEADER.pack(len(head), len(table_bytes), len(blobs), zlib.crc32(head), zlib.crc32(table_bytes))
    return [MAGIC, header, head, table_bytes, blobs]


def save_view(path: Path, g: nx.MultiDiGraph, graph_attrs: dict[str, Any]) -> None:
    write_bytes_atomic(path, encode_view_parts(g, graph_attrs))


class _Nodes:
    """`g.nodes`: call it (`data=True`), index it, iterate it, like networkx's NodeView."""

    def __init__(self, attrs: dict[str, dict[str, Any]]) -> None:
        self._attrs = attrs

    def __call__(self, data: bool | str = False, default: Any = None) -> Any:
        if data is False:
            return iter(self._attrs)
        if data is True:
            return iter(self._attrs.items())
        return ((n, a.get(data, default)) for n, a in self._attrs.items())

    def __getitem__(self, node: str) -> dict[str, Any]:
        return self._attrs[node]

    def __iter__(self) -> Iterator[str]:
        return iter(self._attrs)

    def __contains__(self, node: object) -> bool:
        return node in self._attrs

    def __len__(self) -> int:
        return len(self._attrs)

    def items(self) -> Any:
        return self._attrs.items()

    def data(self, data: bool | str = True, default: Any = None) -> Any:
        return self(data=data, default=default)


class LazyGraph:
    """Read-only graph backed by a view file; adjacency decoded per node on first use."""

    def __init__(self, path: Path, rebuild: Callable[[], nx.MultiDiGraph] | None = None,
                 warn: Warn | None = None) -> None:
        self.path = path
        self._rebuild = rebuild
        self._full: nx.MultiDiGraph | None = None
        self._warn = warn
        with open(path, "rb") as handle:
            try:
                self._map: mmap.mmap | bytes = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file cannot be mapped
                self._map = b""
        data = self._map
        start = len(MAGIC) + HEADER.size
        if len(data) < start or data[:len(MAGIC)] != MAGIC:
            raise ViewDamaged("not a graph view file (or truncated header)")
        head_len, table_len, blobs_len, head_crc, table_crc = HEADER.unpack_from(data, len(MAGIC))
        if len(data) != start + head_len + table_len + blobs_len:
            raise ViewDamaged(f"truncated: {len(data)} of {start + head_len + table_len + blobs_len} bytes")
        head = data[start:start + head_len]
        table = data[start + head_len:start + head_len + table_len]
        if zlib.crc32(head) != head_crc or zlib.crc32(table) != table_crc:
            raise ViewDamaged("checksum mismatch")
        self.graph, ids, attrs = pickle.loads(head)  # noqa: S301 - our own file, checksum-verified
        self._ids: list[str] = ids
        self._attrs: dict[str, dict[str, Any]] = dict(zip(ids, attrs, strict=True))
        self._index = {n: i for i, n in enumerate(ids)}
        self._table = array("Q")
        self._table.frombytes(table)
        self._blobs_at = start + head_len + table_len
        self._out: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
        self._in: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
        self._lists: dict[str, list[tuple[str, int, dict[str, Any]]]] = {}  # decoded out-lists
        self.nodes = _Nodes(self._attrs)

    # -- decoding -------------------------------------------------------------------------------

    def _blob(self, slot: int) -> bytes | None:
        offset, length, crc = self._table[slot * 3:slot * 3 + 3]
        blob = self._map[self._blobs_at + offset:self._blobs_at + offset + length]
        return blob if zlib.crc32(blob) == crc else None

    def _out_list(self, node: str) -> list[tuple[str, int, dict[str, Any]]] | None:
        found = self._lists.get(node)
        if found is None:
            blob = self._blob(self._index[node])
            if blob is None:
                return None
            found = self._lists[node] = pickle.loads(blob)  # noqa: S301 - our own file, checksum-verified
        return found

    def _adjacency(self, node: str, which: int) -> dict[str, dict[int, dict[str, Any]]]:
        cache = self._out if which == 0 else self._in
        found = cache.get(node)
        if found is not None:
            return found
        if self._full is not None:  # fell back after damage
            full_adj = (self._full._succ if which == 0 else self._full._pred)[node]
            cache[node] = full_adj
            return full_adj
        adj: dict[str, dict[int, dict[str, Any]]] = {}
        if which == 0:
            edges = self._out_list(node)
            if edges is None:
                return self._fall_back(node, which, "checksum mismatch in an adjacency list")
            for other, key, attrs in edges:
                adj.setdefault(other, {})[key] = attrs
        else:
            blob = self._blob(len(self._ids) + self._index[node])
            if blob is None:
                return self._fall_back(node, which, "checksum mismatch in an adjacency list")
            refs = array("Q")
            refs.frombytes(blob)
            for i in range(0, len(refs), 2):
                source = self._ids[refs[i]]
                edges = self._out_list(source)
                if edges is None:
                    return self._fall_back(node, which, "checksum mismatch in an adjacency list")
                _target, key, attrs = edges[refs[i + 1]]
                adj.setdefault(source, {})[key] = attrs
        cache[node] = adj
        return adj

    def _fall_back(self, node: str, which: int, why: str) -> dict[str, dict[int, dict[str, Any]]]:
        """A damaged blob: warn, drop the file, answer everything from a rebuilt graph from now on."""
        self._damaged(why)
        return self._adjacency(node, which)

    def _damaged(self, why: str) -> None:
        if self._warn is not None:
            self._warn(f"stored {self.path.name} in {self.path.parent} is damaged ({why}); discarded it, rebuilding")
        self.path.unlink(missing_ok=True)
        self._out.clear()
        self._in.clear()
        self._lists.clear()
        if self._rebuild is None:
            raise ViewDamaged(why)
        self._full = self._rebuild()

    def materialise(self) -> nx.MultiDiGraph:
        """The full networkx graph, for the callers that need more than `CallGraph` (built once, with
        the cyclic GC paused: hundreds of thousands of small dicts only slow it down)."""
        from analyzer.gcpause import gc_paused

        with gc_paused():
            return self.to_networkx()

    def to_networkx(self) -> nx.MultiDiGraph:
        """The full networkx graph, built once from the view: same node, edge and predecessor order as
        the graph that was stored, and one attribute dict per edge shared by `_succ` and `_pred`."""
        if self._full is not None:
            return self._full
        import networkx as nx

        g = nx.MultiDiGraph()
        g.graph.update(self.graph)
        succ, pred, attrs = g._succ, g._pred, g._node
        for n in self._ids:
            attrs[n] = self._attrs[n]
            succ[n] = {}
            pred[n] = {}
        for n in self._ids:
            edges = self._out_list(n)
            if edges is None:
                self._damaged("checksum mismatch in an adjacency list")
                assert self._full is not None
                return self._full
            out = succ[n]
            for other, key, data in edges:
                keyed = out.get(other)
                if keyed is None:
                    keyed = out[other] = {}
                keyed[key] = data
        count = len(self._ids)
        for i, n in enumerate(self._ids):
            blob = self._blob(count + i)
            if blob is None:
                self._damaged("checksum mismatch in an adjacency list")
                assert self._full is not None
                return self._full
            refs = array("Q")
            refs.frombytes(blob)
            inc = pred[n]
            for j in range(0, len(refs), 2):
                source = self._ids[refs[j]]
                _target, key, data = self._lists[source][refs[j + 1]]
                keyed = inc.get(source)
                if keyed is None:
                    keyed = inc[source] = {}
                keyed[key] = data
        self._full = g
        return g

    # -- the networkx subset ----------------------------------------------------------------------

    def __contains__(self, node: object) -> bool:
        return node in self._attrs

    def __iter__(self) -> Iterator[str]:
        return iter(self._attrs)

    def __len__(self) -> int:
        return len(self._attrs)

    def __getitem__(self, node: str) -> dict[str, dict[int, dict[str, Any]]]:
        return self._adjacency(node, 0)

    def has_node(self, node: str) -> bool:
        return node in self._attrs

    def number_of_nodes(self) -> int:
        return len(self._attrs)

    def has_edge(self, u: str, v: str, key: int | None = None) -> bool:
        """Answered from u's out-list alone (traces ask this at every step; the full graph is not needed)."""
        if u not in self._attrs:
            return False
        keyed = self._adjacency(u, 0).get(v)
        return keyed is not None and (key is None or key in keyed)

    def successors(self, node: str) -> Iterator[str]:
        return iter(self._adjacency(node, 0))

    def predecessors(self, node: str) -> Iterator[str]:
        """From the in-list's source indexes alone: the callers' out-lists are decoded only when asked."""
        if self._full is not None or node in self._in:
            return iter(self._adjacency(node, 1))
        blob = self._blob(len(self._ids) + self._index[node])
        if blob is None:
            return iter(self._fall_back(node, 1, "checksum mismatch in an adjacency list"))
        refs = array("Q")
        refs.frombytes(blob)
        return iter(dict.fromkeys(self._ids[i] for i in refs[::2]))

    def out_edges(self, node: str, data: bool = False, keys: bool = False) -> list[tuple[Any, ...]]:
        return _edges(node, self._adjacency(node, 0), data, keys, outgoing=True)

    def in_edges(self, node: str, data: bool = False, keys: bool = False) -> list[tuple[Any, ...]]:
        return _edges(node, self._adjacency(node, 1), data, keys, outgoing=False)


def _edges(node: str, adj: dict[str, dict[int, dict[str, Any]]], data: bool, keys: bool,
           outgoing: bool) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for other, keyed in adj.items():
        u, v = (node, other) if outgoing else (other, node)
        for key, attrs in keyed.items():
            row: tuple[Any, ...] = (u, v)
            if keys:
                row += (key,)
            if data:
                row += (attrs,)
            out.append(row)
    return out


def open_view(path: Path, rebuild: Callable[[], nx.MultiDiGraph] | None = None,
              warn: Warn | None = None) -> LazyGraph | None:
    """The view at `path`, or None when absent or damaged (then warned and removed)."""
    if not path.exists():
        return None
    try:
        return LazyGraph(path, rebuild, warn)
    except (OSError, ViewDamaged, pickle.UnpicklingError, EOFError, ValueError, TypeError) as exc:
        path.unlink(missing_ok=True)
        if warn is not None:
            warn(f"stored {path.name} in {path.parent} is damaged ({exc}); discarded it, rebuilding")
        return None
