"""Persist built graphs in the cache dir so a warm `trace`/`callers` only loads a file.

The key covers everything that decides the graph: analyzer version, graph format, the pins (name →
commit and aliases) and a fingerprint of the code and rule files that build it. A graph is one view file
(analyzer.graph.view: opened lazily, every section checksummed) plus a framed sidecar of unresolved calls
(`MAGIC, payload length, CRC-32, payload`), both written atomically: a truncated or corrupt file (disk
full, a copy cut short, flipped bytes) fails the length or checksum test, is discarded with one warning
and rebuilt, never unpickled. Loading imports nothing of the indexer, resolver, GitPython or networkx
(until a caller asks for the full networkx graph).
"""

from __future__ import annotations

import hashlib
import json
import pickle
import struct
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer import __version__
from analyzer.atomic import write_bytes_atomic
from analyzer.lock import RepoPin

if TYPE_CHECKING:
    import networkx as nx

    from analyzer.graph.view import LazyGraph

MAGIC = b"analyzer-graph/3\n"
HEADER = struct.Struct("<QI")  # payload length, CRC-32 of the payload
GRAPH_FORMAT = 2  # = analyzer.graph.build.GRAPH_FORMAT (a test keeps them equal; build imports the resolver)
Warn = Callable[[str], None]


class Damaged(ValueError):
    """A stored file that is not what we wrote (truncated, corrupt, foreign)."""


@cache
def code_fingerprint() -> str:
    """Hash of the code that decides the graph (parse, index, resolve, graph, rules): an upgraded analyzer
    never loads a graph an older one built, even when the version number did not change. It covers the
    rule files and the extractor, so the key needs neither the parsed rules nor the extractor module."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha1()
    for folder in ("parse", "index", "resolve", "graph", "rules"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".py", ".scm", ".toml") and path.is_file() and not _hazard_rule(path, root):
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _hazard_rule(path: Path, root: Path) -> bool:
    """The hazard rules are read by `analyze hazards` over a built graph, never while building it: a change
    to them re-runs the scan (its cache key has them), not the graph build. The same holds for the prefix
    rules (`analyze prefix` reads them over the stored graph) and the cache rules (`analyzer.cachemodel` reads
    them over a log, never the graph)."""
    return path.relative_to(root).parts[:2] in (("rules", "hazards"), ("rules", "prefix"), ("rules", "cache"))


def graph_key(pins: list[RepoPin], rules_hash: str = "", extractor: str = "") -> str:
    payload = json.dumps({
        "v": __version__, "format": GRAPH_FORMAT, "rules": rules_hash, "extractor": extractor,
        "code": code_fingerprint(),
        "pins": sorted((p.name, p.commit, list(p.aliases)) for p in pins),
    }, sort_keys=True)
    return hashlib.sha1(payload.encode()).hexdigest()[:20]


def graph_path(cache_dir: Path, key: str) -> Path:
    """The stored graph: a view file (analyzer.graph.view), loaded lazily by warm queries."""
    return cache_dir / "graphs" / f"{key}.view"


def unresolved_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / "graphs" / f"{key}.unresolved.pickle"


def frame(payload: bytes) -> bytes:
    """MAGIC + length + CRC-32 + payload (the unresolved-calls sidecar)."""
    return MAGIC + HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def unframe(data: bytes) -> memoryview:
    """The payload of a framed file, or `Damaged` saying what is wrong with it."""
    if not data.startswith(MAGIC):
        raise Damaged("not an analyzer graph file (or written by another analyzer version)")
    start = len(MAGIC) + HEADER.size
    if len(data) < start:
        raise Damaged("truncated header")
    length, crc = HEADER.unpack_from(data, len(MAGIC))
    payload = memoryview(data)[start:]
    if len(payload) != length:
        raise Damaged(f"truncated: {len(payload)} of {length} bytes")
    if zlib.crc32(payload) != crc:
        raise Damaged("checksum mismatch")
    return payload


def save_graph(cache_dir: Path, key: str, g: nx.MultiDiGraph) -> Path:
    """Store the graph as a view file; the (large) unresolved-call list goes to a sidecar loaded only on
    demand. The view is written last: its presence means the set is complete."""
    from analyzer.graph.view import save_view

    path = graph_path(cache_dir, key)
    unresolved = g.graph.get("unresolved", [])
    write_bytes_atomic(unresolved_path(cache_dir, key),
                       frame(pickle.dumps(unresolved, protocol=pickle.HIGHEST_PROTOCOL)))
    save_view(path, g, {k: v for k, v in g.graph.items() if k != "unresolved"})
    return path


def _discard(path: Path, why: str, warn: Warn | None) -> None:
    try:
        path.unlink()
    except OSError:
        pass
    if warn is not None:
        warn(f"stored {path.name} in {path.parent} is damaged ({why}); discarded it, rebuilding")


def load_unresolved(cache_dir: Path, key: str, warn: Warn | None = None) -> list[tuple[str, int, str, str]]:
    """(source node, line, call text, reason) of every call the resolver could not bind."""
    path = unresolved_path(cache_dir, key)
    try:
        data = path.read_bytes()
    except OSError:
        return []
    try:
        found = pickle.loads(unframe(data))  # noqa: S301 - our own file, length- and checksum-verified
    except Exception as exc:
        _discard(path, str(exc), warn)
        return []
    return found if isinstance(found, list) else []


def load_view(cache_dir: Path, key: str, warn: Warn | None = None,
              rebuild: Callable[[], nx.MultiDiGraph] | None = None) -> LazyGraph | None:
    """The stored graph as a lazily-loaded view, or None when absent, damaged (warned and removed) or
    of another analyzer. `rebuild` answers for a view found damaged later, while it is being read."""
    from analyzer.graph.view import open_view

    path = graph_path(cache_dir, key)
    view = open_view(path, rebuild, warn)
    if view is None:
        return None
    if view.graph.get("format") != GRAPH_FORMAT or view.graph.get("analyzer_version") != __version__:
        _discard(path, "not a graph of this analyzer", warn)
        return None
    return view


def materialize(view: LazyGraph) -> nx.MultiDiGraph:
    """The full networkx graph of a view (`LazyGraph.materialise`)."""
    return view.materialise()
