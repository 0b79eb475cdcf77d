"""The read-only graph every query is written against: the subset of `nx.MultiDiGraph` that the stored
lazy view (`analyzer.graph.view.LazyGraph`) answers without loading the whole graph.

Both the view and a built networkx graph satisfy `CallGraph`, so one algorithm serves the warm path
(the view decodes only the adjacency lists a query touches) and the cold one (the graph just built).
Code that needs more of networkx than this (hazards' engine, `number_of_edges`, whole-graph walks)
asks for the full graph by name: `Analysis.materialise()` or `LazyGraph.materialise()`. Nothing loads
it silently: an attribute outside this protocol raises `AttributeError` on the view.

Node ids are `repo:path:Qualified.name` strings; node and edge attributes are plain dicts (see
`analyzer.graph.build` for their keys). `g[u]` maps each successor to `{edge key: edge attributes}`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

NodeAttrs = dict[str, Any]
EdgeAttrs = dict[str, Any]
Adjacency = Mapping[str, Mapping[Any, EdgeAttrs]]


class NodeTable(Protocol):
    """`g.nodes`: called (`data=True` for `(node, attrs)` pairs), indexed, iterated, like a NodeView."""

    def __call__(self, data: bool | str = False, default: Any = None) -> Any: ...

    def __getitem__(self, node: str) -> NodeAttrs: ...

    def __iter__(self) -> Iterator[str]: ...

    def __contains__(self, node: object) -> bool: ...

    def __len__(self) -> int: ...


class CallGraph(Protocol):
    """The queries' view of the call graph (see the module docstring)."""

    @property
    def graph(self) -> dict[str, Any]:
        """Graph attributes: pins, stats, index stats, format."""
        ...

    @property
    def nodes(self) -> NodeTable: ...

    def __contains__(self, node: object) -> bool: ...

    def __iter__(self) -> Iterator[str]: ...

    def __len__(self) -> int: ...

    def __getitem__(self, node: str) -> Adjacency: ...

    def has_node(self, node: str) -> bool: ...

    def number_of_nodes(self) -> int: ...

    def has_edge(self, u: str, v: str, key: Any = None) -> bool: ...

    def successors(self, node: str) -> Iterator[str]: ...

    def predecessors(self, node: str) -> Iterator[str]: ...

    def out_edges(self, node: str, data: bool = False, keys: bool = False) -> Iterable[tuple[Any, ...]]: ...

    def in_edges(self, node: str, data: bool = False, keys: bool = False) -> Iterable[tuple[Any, ...]]: ...
