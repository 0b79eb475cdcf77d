"""The pipeline every graph command shares: sources → index → program → graph, cached.

`analyze(workspace, pins=…)` takes anything that says where things are (`Workspace`: the lock, the
cache dir, per-run source URLs, a warning and a notice sink) — the library's `analyzer.api.Session`, or
the command line's context — never parsed arguments.

A warm run (same pins, same rules, same analyzer) only loads the stored graph, without any lock and
without importing the indexer or GitPython; the per-file index cache means a pin bump re-parses only
blobs that changed. Building takes the cache's writer lock, then looks for the stored graph again: the
run it waited for has usually just built it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from analyzer.cachelock import cache_writer
from analyzer.errors import EXIT_USAGE, AnalyzerError
from analyzer.graph.store import graph_key, load_view, materialize, save_graph
from analyzer.lock import Lock, RepoPin

if TYPE_CHECKING:
    import git
    import networkx as nx

    from analyzer.graph.protocol import CallGraph
    from analyzer.graph.view import LazyGraph
    from analyzer.resolve.program import Program

Progress = Callable[[str, int, "int | None"], None]
"""`progress(what, done, total)`: `what` names a stage ("indexing dsh"), `total` is None until known."""


class Workspace(Protocol):
    """Where an analysis reads from and reports to (`analyzer.api.Session`, or the CLI's context)."""

    @property
    def lock(self) -> Lock: ...

    @property
    def cache_dir(self) -> Path: ...

    def source_for(self, name: str, default_url: str) -> str:
        """The URL or path `name` is fetched from in this run."""
        ...

    def warn(self, message: str) -> None:
        """A problem the run survives (a damaged cache file discarded)."""
        ...

    def notify(self, message: str) -> None:
        """A line of progress worth showing (waiting for another process's cache lock)."""
        ...


@dataclass
class Analysis:
    """One pin set's graph. `view` is what queries read (`CallGraph`: the lazily-loaded `LazyGraph` when
    it came from the cache); `materialise()` (also `graph`) is the full networkx graph, built from the view
    only when a caller asks for it by name."""

    lock: Lock
    pins: list[RepoPin]
    _graph: nx.MultiDiGraph | None
    program: Program | None = None
    repos: dict[str, git.Repo] = field(default_factory=dict)  # only when built in this run
    seconds: dict[str, float] = field(default_factory=dict)
    index_stats: dict[str, Any] = field(default_factory=dict)
    from_cache: bool = False
    _view: LazyGraph | None = None
    _load_full: Callable[[], nx.MultiDiGraph] | None = None

    def materialise(self) -> nx.MultiDiGraph:
        """The full networkx graph (decodes every adjacency list of a stored view, once)."""
        if self._graph is None:
            assert self._load_full is not None
            self._graph = self._load_full()
        return self._graph

    @property
    def graph(self) -> nx.MultiDiGraph:
        """= `materialise()`."""
        return self.materialise()

    @graph.setter
    def graph(self, g: nx.MultiDiGraph) -> None:
        self._graph = g

    @property
    def view(self) -> CallGraph:
        """The graph for read-only queries (see `analyzer.graph.protocol`)."""
        if self._view is not None:
            return self._view
        return self.materialise()

    def pins_json(self) -> dict[str, dict[str, Any]]:
        return {p.name: {"commit": p.commit, "ref": p.ref, "url": p.url} for p in self.pins}


def apply_at(lock: Lock, at: list[str] | None) -> list[RepoPin]:
    """`--at NAME=SHA` overrides, validated (one line per problem)."""
    pins = {p.name: p for p in lock.repos.values()}
    for item in at or []:
        name, sep, sha = item.partition("=")
        if not sep or name not in pins:
            raise AnalyzerError(f"--at {item!r}: expected NAME=SHA with NAME one of {', '.join(pins)}",
                                exit_code=EXIT_USAGE)
        if len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha.lower()):
            raise AnalyzerError(f"--at {item!r}: the commit must be the full 40-hex sha", exit_code=EXIT_USAGE)
        old = pins[name]
        pins[name] = RepoPin(name, old.url, sha.lower(), None, old.aliases)
    return list(pins.values())


def analyze(ctx: Workspace, *, pins: list[RepoPin] | None = None, need_program: bool = False,
            rebuild: bool = False, progress: Progress | None = None) -> Analysis:
    """Load (or build and store) the graph for `pins` (default: the lock's).

    `progress` hears about indexing (a bar on a terminal). `need_program` forces the per-file facts
    into memory (reports, usage replay)."""
    lock: Lock = ctx.lock
    pins = pins or list(lock.repos.values())
    key = graph_key(pins)  # covers the rule files and the extractor's code (see graph.store)
    cache_dir: Path = ctx.cache_dir
    warn = ctx.warn
    if not need_program and not rebuild:
        found = _load_stored(ctx, lock, pins, cache_dir, key, warn)
        if found is not None:
            return found
    with cache_writer(cache_dir, notify=ctx.notify):
        if not need_program and not rebuild:
            found = _load_stored(ctx, lock, pins, cache_dir, key, warn)  # built by the run we waited for
            if found is not None:
                return found
        return _build(ctx, lock, pins, key, cache_dir, progress)


def _load_stored(ctx: Workspace, lock: Lock, pins: list[RepoPin], cache_dir: Path, key: str,
                 warn: Callable[[str], None]) -> Analysis | None:
    """The stored graph, opened lazily: a view for queries, the full networkx graph only on demand."""
    t = time.perf_counter()

    def rebuild() -> nx.MultiDiGraph:  # the view was found damaged while being read
        return analyze(ctx, pins=pins, rebuild=True).graph

    view = load_view(cache_dir, key, warn=warn, rebuild=rebuild)
    if view is None:
        return None
    return Analysis(lock, pins, None, seconds={"load": time.perf_counter() - t}, from_cache=True,
                    _view=view, _load_full=lambda: materialize(view))


def _build(ctx: Workspace, lock: Lock, pins: list[RepoPin], key: str, cache_dir: Path,
           progress: Progress | None) -> Analysis:
    """Sources → index → program → graph, stored; the caller holds the cache's writer lock."""
    from analyzer.gcpause import gc_paused
    from analyzer.graph.build import build_graph
    from analyzer.index.build import index_repo
    from analyzer.index.cache import FactsCache
    from analyzer.index.configs import read_configs
    from analyzer.paths import checkout_dir
    from analyzer.resolve.modules import RepoModules
    from analyzer.resolve.program import Program, RepoInput
    from analyzer.resolve.rules import load_rules
    from analyzer.sources.repair import DeepCheck
    from analyzer.sources.workspace import open_repo

    rules = load_rules()  # a malformed rule file fails here, before any work
    seconds: dict[str, float] = {}
    inputs = []
    repos: dict[str, git.Repo] = {}
    index_stats: dict[str, Any] = {}
    # every object verified (`git fsck`, ~0.5 s on dsh) before its repo is read: a damaged checkout is
    # fetched again. The checks start together and run while the repos before them are indexed.
    t = time.perf_counter()
    checks = {pin.name: DeepCheck(checkout_dir(cache_dir, pin.name), pin.name) for pin in pins}
    started = time.perf_counter() - t
    try:
        with FactsCache(cache_dir, warn=ctx.warn) as cache:
            for pin in pins:
                t = time.perf_counter()
                checks[pin.name].finish(warn=ctx.warn)
                repo = open_repo(ctx, pin)
                repos[pin.name] = repo
                seconds[f"sources:{pin.name}"] = time.perf_counter() - t + started / len(pins)
                idx = index_repo(repo, pin.commit, repo_name=pin.name, cache=cache,
                                 progress=_stage(progress, f"indexing {pin.name}"))
                configs = read_configs(repo, pin.commit)
                seconds[f"index:{pin.name}"] = idx.stats.seconds
                index_stats[pin.name] = asdict(idx.stats)
                files = {f.path for f in idx.files}
                inputs.append(RepoInput(pin.name, pin.commit, list(idx.files),
                                        RepoModules(pin.name, files, configs, pin.aliases)))
    finally:
        for check in checks.values():
            check.cancel()
    t, cpu = time.perf_counter(), time.process_time()
    resolving = _stage(progress, "resolving calls")  # after parsing reaches 100%: a stage of its own
    with gc_paused(freeze=True):  # hundreds of thousands of small records: the cyclic GC only slows this down
        program = Program(inputs)
        g = build_graph(program, rules)
    if resolving is not None:
        resolving(g.number_of_edges(), g.number_of_edges())
    g.graph["index_stats"] = index_stats
    seconds["graph"] = time.perf_counter() - t
    seconds["graph:cpu"] = time.process_time() - cpu  # CPU next to wall: the machine may be shared
    t, cpu = time.perf_counter(), time.process_time()
    with gc_paused():  # pickling with the cyclic GC on re-scanned the whole graph many times (5.9 s → 1.1 s)
        save_graph(cache_dir, key, g)
    seconds["store"] = time.perf_counter() - t
    seconds["store:cpu"] = time.process_time() - cpu
    return Analysis(lock, pins, g, program, repos, seconds, index_stats)


def _stage(progress: Progress | None, what: str) -> Callable[[int, int], None] | None:
    """The indexer's `(done, total)` callback for one stage, announced before its first file."""
    if progress is None:
        return None
    tell = progress
    tell(what, 0, None)
    return lambda done, total: tell(what, done, total)
