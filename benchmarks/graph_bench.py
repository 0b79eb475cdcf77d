"""Whole-pipeline benchmark: start-up, cold index + graph vs raw tree-sitter parse, warm queries, RSS.

    python benchmarks/graph_bench.py [--lock repos.lock] [--source NAME=PATH ...] [--runs 5] [FROM TO]

All timings come from one run, so the printed ratios compare like with like on a shared, noisy machine:
- start-up: `analyze --help` as a whole process next to `python -c pass` (median of --runs);
- cold: a fresh cache dir, so every file is extracted and the graph built (sources are synced once
  beforehand and not timed);
- raw parse: tree-sitter parsing of exactly the same blobs, nothing else, in one process (wall and CPU);
- CPU floor: parsing plus running the combined query (what any extraction through the binding must pay),
  and the least wall time the cold build's own CPU seconds allow on this machine's cores: a build that
  uses more than 2.5 x raw parse x cores seconds of CPU cannot meet the ratio however it is scheduled;
  and the same raw parse on one forked process per core, for what the cores give together;
- extraction CPU: user + sys of the indexing process and of its extraction workers, against the raw
  parse's CPU (what the extractor controls; wall time also depends on who else uses the cores);
- warm load: loading the stored graph in-process (what every later command does);
- warm queries: `analyze callers|callees|symbols|trace` as whole processes on the warm cache (median);
- warm trace: `find_paths` + result building on the loaded graph (best of 5);
- peak RSS of this process and of the largest child (extraction/resolution workers, the queries);
- CPU seconds next to the wall times of the raw parse, the cold build, resolution and storing (on a
  shared machine wall time also counts waiting for a core).
The load average before and after is printed: on a shared machine, say so next to the figures.
Goals: --help ≤ 0.3 s, warm queries ≤ 1 s, cold ≤ 2.5× raw parse (resolution +
storing ≤ 1.2×), RSS ≤ 1.5 GB.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tree_sitter import QueryCursor

from analyzer.analysis import analyze
from analyzer.cli.context import CliContext
from analyzer.graph.queries import resolve_symbol
from analyzer.index.source import BlobReader, scan_sources
from analyzer.native.loader import native_state
from analyzer.parse.languages import is_declaration_file, language_for_path, parse_bytes
from analyzer.parse.queries_loader import file_query
from analyzer.sources.workspace import open_repo
from analyzer.trace.pathfinding import find_paths
from analyzer.trace.result import trace_result


def rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


ANALYZE = [sys.executable, "-c", "import sys; from analyzer.cli import main; sys.exit(main(sys.argv[1:]))"]


def cpu_children() -> float:
    """CPU seconds of the finished child processes (the extraction workers)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def parse_and_match(path: str, data: bytes) -> None:
    """What every extraction must do before any Python of ours runs: parse, then run the file's query
    (`file_query`, as `extract._run` does), fetching each match's captures and nothing more."""
    language = language_for_path(path) or "typescript"
    query, _roles, _ = file_query(language, is_declaration_file(path))
    for _match in QueryCursor(query).matches(parse_bytes(data, language).root_node):
        pass


_BLOBS: list[tuple[str, bytes]] = []  # set before the pool forks, read by `_parse_share`


def _parse_share(k: int) -> float:
    """Worker: parse every `cores`-th blob from the k-th; its CPU seconds."""
    cores = os.cpu_count() or 1
    c = time.process_time()
    for path, data in _BLOBS[k::cores]:
        parse_bytes(data, language_for_path(path) or "typescript")
    return time.process_time() - c


def parallel_parse(blobs: list[tuple[str, bytes]]) -> tuple[float, float]:
    """Wall and CPU seconds of the same raw parse split over one forked process per core: what the cores
    give together in this run (on a shared machine, not always `cores` times the serial speed)."""
    global _BLOBS
    _BLOBS = blobs
    cores = os.cpu_count() or 1
    with multiprocessing.get_context("fork").Pool(cores) as pool:
        pool.map(_parse_share, range(cores))  # warm the workers' parsers and queries
        t = time.perf_counter()
        cpu = sum(pool.map(_parse_share, range(cores)))
        seconds = time.perf_counter() - t
    _BLOBS = []
    return seconds, cpu


def wall(argv: list[str], runs: int) -> float:
    """Median wall time of `argv` as a whole process (output discarded; a failure stops the benchmark)."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def machine() -> str:
    model = ""
    try:
        model = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                      if ln.startswith("model name")), "")
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs {model}".strip()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lock", type=Path, default=Path("repos.lock"))
    ap.add_argument("--source", action="append", default=[])
    ap.add_argument("--runs", type=int, default=5, help="whole-process runs per timing (median)")
    ap.add_argument("endpoints", nargs="*")
    args = ap.parse_args()
    load_before = os.getloadavg()
    help_s = wall([*ANALYZE, "--help"], args.runs)
    pass_s = wall([sys.executable, "-c", "pass"], args.runs)

    work = Path(tempfile.mkdtemp(prefix="analyzer-bench-"))
    try:
        sync_ctx = CliContext(lock_path=args.lock, cache_dir_option=work / "sources", source_options=args.source)
        pins = list(sync_ctx.lock.repos.values())
        repos = {p.name: open_repo(sync_ctx, p) for p in pins}  # not timed: network/disk, not analysis

        raw = raw_cpu = floor_cpu = 0.0
        files = size = 0
        every_blob: list[tuple[str, bytes]] = []
        for pin in pins:
            reader = BlobReader(repos[pin.name])
            scan = scan_sources(repos[pin.name], pin.commit, reader)
            blobs = [(f.path, reader.read(f.blob_sha)) for f in scan.files]
            reader.close()
            files += len(blobs)
            size += sum(len(d) for _, d in blobs)
            t, c = time.perf_counter(), time.process_time()
            for path, data in blobs:
                parse_bytes(data, language_for_path(path) or "typescript")
            raw += time.perf_counter() - t
            raw_cpu += time.process_time() - c
            c = time.process_time()
            for path, data in blobs:
                parse_and_match(path, data)
            floor_cpu += time.process_time() - c
            every_blob += blobs
        par_wall, par_cpu = parallel_parse(every_blob)
        del every_blob

        cache = work / "cache"
        (cache / "repos").mkdir(parents=True)
        for name in repos:  # reuse the synced checkouts; the index and graph caches start empty
            shutil.copytree(work / "sources" / "repos" / name, cache / "repos" / name, symlinks=True)
        ctx = CliContext(lock_path=args.lock, cache_dir_option=cache, source_options=args.source)
        t, cpu, child = time.perf_counter(), time.process_time(), cpu_children()
        cold = analyze(ctx, rebuild=True)
        cold_s = time.perf_counter() - t
        cold_cpu, cold_child = time.process_time() - cpu, cpu_children() - child
        graph_cpu = cold.seconds.get("graph:cpu", 0.0)
        store_cpu = cold.seconds.get("store:cpu", 0.0)
        index_s = sum(v for k, v in cold.seconds.items() if k.startswith("index:"))
        graph_s = cold.seconds.get("graph", 0.0)
        store_s = cold.seconds.get("store", 0.0)
        sources_s = sum(v for k, v in cold.seconds.items() if k.startswith("sources:"))
        stats = cold.graph.graph["stats"]
        main_cpu = sum(s.get("cpu_seconds", 0.0) for s in cold.index_stats.values())
        worker_cpu = sum(s.get("worker_cpu_seconds", 0.0) for s in cold.index_stats.values())
        del cold

        t = time.perf_counter()
        warm = analyze(ctx)
        load_s = time.perf_counter() - t
        assert warm.from_cache

        spec_from, spec_to = (args.endpoints + [None, None])[:2]
        spec_from = spec_from or ctx.lock.trace_from
        spec_to = spec_to or ctx.lock.trace_to
        g = warm.view  # what the CLI queries read
        t = time.perf_counter()
        full_edges = warm.graph.number_of_edges()  # the full networkx graph, rebuilt from the view
        full_s = time.perf_counter() - t
        best = float("inf")
        found = False
        for _ in range(5):
            t = time.perf_counter()
            src = [n for m in resolve_symbol(g, spec_from) for n in m.endpoints]
            dst = [n for m in resolve_symbol(g, spec_to) for n in m.endpoints]
            paths = find_paths(g, src, dst)
            trace_result(g, spec_from, spec_to, paths, warm.pins_json())
            best = min(best, time.perf_counter() - t)
            found = bool(paths)

        base = [*ANALYZE, "--lock", str(args.lock), "--cache-dir", str(cache)]
        for item in args.source:
            base += ["--source", item]
        queries = {"callers": ["callers", spec_to], "callees": ["callees", spec_to],
                   "symbols": ["symbols", spec_to[:4]], "trace": ["trace", spec_from, spec_to]}
        query_s = {name: wall([*base, *argv], args.runs) for name, argv in queries.items()}

        print(f"machine: {machine()}; load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
        print(f"repos: {', '.join(f'{p.name}@{p.commit[:10]}' for p in pins)}; {files} files, {size / 1e6:.1f} MB")
        native = native_state()
        print(f"compiled modules (mypyc): {'yes' if native.loaded else 'no'} — {native.reason}"
              + ("" if native.loaded else "; `analyze native build`, or ANALYZER_NATIVE=0 to compare"))
        print(f"graph: {stats['nodes']} nodes, {stats['edges']} edges {stats['edges_by_kind']}")
        print(f"analyze --help             {help_s:8.2f} s   (python -c pass {pass_s:.2f} s; goal ≤ 0.3 s)")
        print(f"raw tree-sitter parse      {raw:8.2f} s   CPU {raw_cpu:.2f} s")
        print(f"cold index + graph         {cold_s:8.2f} s   ratio {cold_s / raw:5.2f}x raw parse (goal ≤ 2.5x); "
              f"CPU {cold_cpu:.2f} s here + {cold_child:.2f} s in workers")
        print(f"  of which extraction      {index_s:8.2f} s   ratio {index_s / raw:5.2f}x raw parse")
        print(f"    extraction CPU         main {main_cpu:.2f} s + workers {worker_cpu:.2f} s   ratio "
              f"{(main_cpu + worker_cpu) / raw_cpu:5.2f}x raw parse CPU ({raw_cpu:.2f} s; main alone "
              f"{main_cpu / raw_cpu:.2f}x, workers {worker_cpu / raw_cpu:.2f}x)")
        print(f"  of which resolution      {graph_s:8.2f} s   ratio {graph_s / raw:5.2f}x raw parse; "
              f"CPU {graph_cpu:.2f} s = {graph_cpu / raw_cpu:.2f}x raw parse CPU")
        print(f"  of which storing         {store_s:8.2f} s   CPU {store_cpu:.2f} s; sources (fsck) {sources_s:.2f} s")
        both = graph_s + store_s
        print(f"  resolution + storing     {both:8.2f} s   ratio {both / raw:5.2f}x raw parse (goal ≤ 1.2x); "
              f"CPU {(graph_cpu + store_cpu) / raw_cpu:.2f}x raw parse CPU")
        cores = os.cpu_count() or 1
        total_cpu = cold_cpu + cold_child
        print(f"  CPU floor: parse + query matching {floor_cpu:.2f} s = {floor_cpu / raw_cpu:.2f}x raw parse CPU "
              f"(tree-sitter's share, no Python of ours); the cold build's {total_cpu:.2f} s of CPU on {cores} "
              f"cores cannot take less than {total_cpu / cores:.2f} s = {total_cpu / cores / raw:.2f}x; "
              f"2.5x allows {2.5 * raw * cores:.2f} s of CPU in all")
        print(f"  the same raw parse on {cores} processes: wall {par_wall:.2f} s (speed-up {raw / par_wall:.2f}x), "
              f"CPU {par_cpu:.2f} s ({par_cpu / raw_cpu:.2f}x the serial parse's)")
        print(f"warm graph load            {load_s:8.2f} s   (in-process: opening the view)")
        print(f"full networkx graph        {full_s:8.2f} s   (in-process, built from the view; {full_edges} edges)")
        for name, seconds in query_s.items():
            print(f"warm analyze {name:<13} {seconds:8.2f} s   whole process, median of {args.runs} (goal ≤ 1 s)")
        print(f"warm trace {spec_from} → {spec_to}: {best:.3f} s best of 5 in-process, path found: {found}")
        print(f"peak RSS                   {rss_mb():8.0f} MB  this process; largest child "
              f"{rss_mb(resource.RUSAGE_CHILDREN):.0f} MB (goal ≤ 1536 MB)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
