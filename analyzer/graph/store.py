"""Persist built graphs in the cache dir so a warm `trace`/`callers` only loads a file.

The key covers everything that decides the graph: analyzer version, the pins (name → commit and
aliases), and the rule files' text. A corrupt or foreign file is ignored (rebuilt), never trusted.
"""

from __future__ import annotations

import gc
import hashlib
import json
import pickle
from functools import cache
from pathlib import Path

import networkx as nx

from analyzer import __version__
from analyzer.atomic import write_bytes_atomic
from analyzer.graph.build import GRAPH_FORMAT
from analyzer.lock import RepoPin

MAGIC = b"analyzer-graph\n"


@cache
def code_fingerprint() -> str:
    """Hash of the code that decides the graph (parse, index, resolve, graph): an upgraded analyzer never
    loads a graph an older one built, even when the version number did not change."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha1()
    for folder in ("parse", "index", "resolve", "graph", "rules"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".py", ".scm", ".toml") and path.is_file():
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def graph_key(pins: list[RepoPin], rules_hash: str, extractor: str = "") -> str:
    payload = json.dumps({
        "v": __version__, "format": GRAPH_FORMAT, "rules": rules_hash, "extractor": extractor,
        "code": code_fingerprint(),
        "pins": sorted((p.name, p.commit, list(p.aliases)) for p in pins),
    }, sort_keys=True)
    return hashlib.sha1(payload.encode()).hexdigest()[:20]


def graph_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / "graphs" / f"{key}.pickle"


def save_graph(cache_dir: Path, key: str, g: nx.MultiDiGraph) -> Path:
    """Store the graph; the (large) unresolved-call list goes to a sidecar loaded only on demand."""
    path = graph_path(cache_dir, key)
    unresolved = g.graph.pop("unresolved", [])
    try:
        write_bytes_atomic(path.with_suffix(".unresolved.pickle"),
                           MAGIC + pickle.dumps(unresolved, protocol=pickle.HIGHEST_PROTOCOL))
        write_bytes_atomic(path, MAGIC + pickle.dumps(g, protocol=pickle.HIGHEST_PROTOCOL))
    finally:
        g.graph["unresolved"] = unresolved
    return path


def load_unresolved(cache_dir: Path, key: str) -> list[tuple[str, int, str, str]]:
    """(source node, line, call text, reason) of every call the resolver could not bind."""
    try:
        data = graph_path(cache_dir, key).with_suffix(".unresolved.pickle").read_bytes()
        return pickle.loads(data[len(MAGIC):]) if data.startswith(MAGIC) else []  # noqa: S301
    except (OSError, pickle.UnpicklingError, EOFError):
        return []


def load_graph(cache_dir: Path, key: str) -> nx.MultiDiGraph | None:
    """The stored graph, or None when absent, corrupt, or written by another analyzer version."""
    path = graph_path(cache_dir, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(MAGIC):
        return None
    gc_was_enabled = gc.isenabled()
    gc.disable()  # unpickling many small objects is ~40% faster without the cyclic GC running
    try:
        g = pickle.loads(data[len(MAGIC):])  # noqa: S301 - our own cache file, checked by magic and version
    except Exception:
        return None
    finally:
        if gc_was_enabled:
            gc.enable()
    if not isinstance(g, nx.MultiDiGraph) or g.graph.get("format") != GRAPH_FORMAT \
            or g.graph.get("analyzer_version") != __version__:
        return None
    return g
