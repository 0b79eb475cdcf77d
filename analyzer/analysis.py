"""The pipeline every graph command shares: sources → index → program → graph, cached.

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
from typing import TYPE_CHECKING, Any

from analyzer.cachelock import cache_writer
from analyzer.errors import EXIT_USAGE, AnalyzerError
from analyzer.graph.store import graph_key, load_view, materialize, save_graph
from analyzer.lock import Lock, RepoPin

if TYPE_CHECKING:
    import git
    import networkx as nx

    from analyzer.resolve.program import Program


@dataclass
class Analysis:
    """One pin set's graph. From the cache, `view` is the lazily-loaded `LazyGraph` that warm queries use
    and `graph` (the full networkx graph) is built from the view only when something asks for it."""

    lock: Lock
    pins: list[RepoPin]
    _graph: nx.MultiDiGraph | None
    program: Program | None = None
    repos: dict[str, git.Repo] = field(default_factory=dict)  # only when built in this run
    seconds: dict[str, float] = field(default_factory=dict)
    index_stats: dict[str, Any] = field(default_factory=dict)
    from_cache: bool = False
    _view: Any = None
    _load_full: Callable[[], nx.MultiDiGraph] | None = None

    @property
    def graph(self) -> nx.MultiDiGraph:
        if self._graph is None:
            assert self._load_full is not None
            self._graph = self._load_full()
        return self._graph

    @graph.setter
    def graph(self, g: nx.MultiDiGraph) -> None:
        self._graph = g

    @property
    def view(self) -> Any:
        """The graph for read-only queries (nodes, `g[u][v]`, in/out edges, predecessors/successors)."""
        if self._view is not None:
            return self._view
        return self.graph

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


ProgressFactory = Callable[[str, int], Callable[[int], None]]


def analyze(ctx: Any, *, pins: list[RepoPin] | None = None, need_program: bool = False,
            rebuild: bool = False, progress: Any = None) -> Analysis:
    """Load (or build and store) the graph for `pins` (default: the lock's).

    `ctx` provides `lock`, `cache_dir` and `source_for` (a `CliContext`). `progress` is a rich Progress or
    None. `need_program` forces the per-file facts into memory (reports, usage replay)."""
    lock: Lock = ctx.lock
    pins = pins or list(lock.repos.values())
    key = graph_key(pins)  # covers the rule files and the extractor's code (see graph.store)
    cache_dir: Path = ctx.cache_dir
    warn = getattr(ctx, "warn", None)
    if not need_program and not rebuild:
        found = _load_stored(ctx, lock, pins, cache_dir, key, warn)
        if found is not None:
            return found
    err = getattr(ctx, "err", None)
    notify = (lambda line: err.print(line, markup=False)) if err is not None else None
    with cache_writer(cache_dir, notify=notify):
        if not need_program and not rebuild:
            found = _load_stored(ctx, lock, pins, cache_dir, key, warn)  # built by the run we waited for
            if found is not None:
                return found
        return _build(ctx, lock, pins, key, cache_dir, progress)


def _load_stored(ctx: Any, lock: Lock, pins: list[RepoPin], cache_dir: Path, key: str,
                 warn: Any) -> Analysis | None:
    """The stored graph, opened lazily: a view for queries, the full networkx graph only on demand."""
    t = time.perf_counter()

    def rebuild() -> nx.MultiDiGraph:  # the view was found damaged while being read
        return analyze(ctx, pins=pins, rebuild=True).graph

    view = load_view(cache_dir, key, warn=warn, rebuild=rebuild)
    if view is None:
        return None
    return Analysis(lock, pins, None, seconds={"load": time.perf_counter() - t}, from_cache=True,
                    _view=view, _load_full=lambda: materialize(view))


def _build(ctx: Any, lock: Lock, pins: list[RepoPin], key: str, cache_dir: Path, progress: Any) -> Analysis:
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
        with FactsCache(cache_dir, warn=getattr(ctx, "warn", None)) as cache:
            for pin in pins:
                t = time.perf_counter()
                checks[pin.name].finish(warn=getattr(ctx, "warn", None))
                repo = open_repo(ctx, pin)
                repos[pin.name] = repo
                seconds[f"sources:{pin.name}"] = time.perf_counter() - t + started / len(pins)
                task = progress.add_task(f"indexing {pin.name}", total=None) if progress is not None else None
                idx = index_repo(repo, pin.commit, repo_name=pin.name, cache=cache,
                                 progress=_progress_callback(progress, task))
                configs = read_configs(repo, pin.commit)
                seconds[f"index:{pin.name}"] = idx.stats.seconds
                index_stats[pin.name] = asdict(idx.stats)
                files = {f.path for f in idx.files}
                inputs.append(RepoInput(pin.name, pin.commit, list(idx.files),
                                        RepoModules(pin.name, files, configs, pin.aliases)))
                idx.close()
    finally:
        for check in checks.values():
            check.cancel()
    t, cpu = time.perf_counter(), time.process_time()
    with gc_paused(freeze=True):  # hundreds of thousands of small records: the cyclic GC only slows this down
        program = Program(inputs)
        g = build_graph(program, rules)
    g.graph["index_stats"] = index_stats
    seconds["graph"] = time.perf_counter() - t
    seconds["graph:cpu"] = time.process_time() - cpu  # CPU next to wall: the machine may be shared
    t, cpu = time.perf_counter(), time.process_time()
    with gc_paused():  # pickling with the cyclic GC on re-scanned the whole graph many times (5.9 s → 1.1 s)
        save_graph(cache_dir, key, g)
    seconds["store"] = time.perf_counter() - t
    seconds["store:cpu"] = time.process_time() - cpu
    return Analysis(lock, pins, g, program, repos, seconds, index_stats)




def _progress_callback(progress: Any, task: Any) -> Callable[[int, int], None] | None:
    if progress is None or task is None:
        return None

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    return update
