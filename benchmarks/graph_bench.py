"""Whole-pipeline benchmark: cold index + graph vs raw tree-sitter parse, warm load, warm trace, RSS.

    python benchmarks/graph_bench.py [--lock repos.lock] [--source NAME=PATH ...] [FROM TO]

All timings come from one run, so the printed ratios compare like with like on a shared, noisy machine:
- cold: a fresh cache dir, so every file is extracted and the graph built (sources are synced once
  beforehand and not timed);
- raw parse: tree-sitter parsing of exactly the same blobs, nothing else;
- warm load: loading the stored graph (what every later command does);
- warm trace: `find_paths` + result building on the loaded graph (best of 5).
Goals (issues 3 and 4): cold ≤ 2.5× raw parse, warm load ≤ 1 s, RSS ≤ 1.5 GB, warm trace ≤ 0.2 s.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from analyzer.analysis import analyze
from analyzer.cli.context import CliContext
from analyzer.graph.queries import resolve_symbol
from analyzer.index.source import BlobReader, scan_sources
from analyzer.parse.languages import language_for_path, parse_bytes
from analyzer.sources.workspace import open_repo
from analyzer.trace.paths import find_paths
from analyzer.trace.result import trace_result


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lock", type=Path, default=Path("repos.lock"))
    ap.add_argument("--source", action="append", default=[])
    ap.add_argument("endpoints", nargs="*")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="analyzer-bench-"))
    try:
        sync_ctx = CliContext(lock_path=args.lock, cache_dir_option=work / "sources", source_options=args.source)
        pins = list(sync_ctx.lock.repos.values())
        repos = {p.name: open_repo(sync_ctx, p) for p in pins}  # not timed: network/disk, not analysis

        raw = 0.0
        files = size = 0
        for pin in pins:
            reader = BlobReader(repos[pin.name])
            scan = scan_sources(repos[pin.name], pin.commit, reader)
            blobs = [(f.path, reader.read(f.blob_sha)) for f in scan.files]
            reader.close()
            files += len(blobs)
            size += sum(len(d) for _, d in blobs)
            t = time.perf_counter()
            for path, data in blobs:
                parse_bytes(data, language_for_path(path) or "typescript")
            raw += time.perf_counter() - t

        cache = work / "cache"
        (cache / "repos").mkdir(parents=True)
        for name in repos:  # reuse the synced checkouts; the index and graph caches start empty
            shutil.copytree(work / "sources" / "repos" / name, cache / "repos" / name, symlinks=True)
        ctx = CliContext(lock_path=args.lock, cache_dir_option=cache, source_options=args.source)
        t = time.perf_counter()
        cold = analyze(ctx, rebuild=True)
        cold_s = time.perf_counter() - t
        index_s = sum(v for k, v in cold.seconds.items() if k.startswith("index:"))
        stats = cold.graph.graph["stats"]
        del cold

        t = time.perf_counter()
        warm = analyze(ctx)
        load_s = time.perf_counter() - t
        assert warm.from_cache

        spec_from, spec_to = (args.endpoints + [None, None])[:2]
        spec_from = spec_from or ctx.lock.trace_from
        spec_to = spec_to or ctx.lock.trace_to
        g = warm.graph
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

        print(f"repos: {', '.join(f'{p.name}@{p.commit[:10]}' for p in pins)}; {files} files, {size / 1e6:.1f} MB")
        print(f"graph: {stats['nodes']} nodes, {stats['edges']} edges {stats['edges_by_kind']}")
        print(f"raw tree-sitter parse      {raw:8.2f} s")
        print(f"cold index + graph         {cold_s:8.2f} s   ratio {cold_s / raw:5.2f}x raw parse (goal ≤ 2.5x)")
        print(f"  of which extraction      {index_s:8.2f} s   ratio {index_s / raw:5.2f}x raw parse")
        print(f"warm graph load            {load_s:8.2f} s   (goal ≤ 1 s)")
        print(f"warm trace {spec_from} → {spec_to}: {best:.3f} s best of 5 (goal ≤ 0.2 s), path found: {found}")
        print(f"peak RSS                   {rss_mb():8.0f} MB  (goal ≤ 1536 MB)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
