"""Index benchmark, part 1: raw tree-sitter parse vs `extract_facts` on the same files in the same run.

    python benchmarks/index_bench.py GIT_DIR[@COMMIT] [GIT_DIR[@COMMIT] ...] [--slowest N] [--no-index]

For every indexable file (same skip rules as the indexer) it times a bare parse and a full extraction
back to back, so machine load affects both alike; CPU time (`process_time`) is the headline figure, wall
time is printed too. The cyclic GC is paused as in `index_repo`. It also counts crashes (exceptions out
of `extract_facts`, which must be zero), files with recovered syntax errors, files where the extractor
skipped a construct, and — unless `--no-index` — times a cold and a warm `index_repo` with a fresh cache.
Goal: extraction ≤ 2.5× raw parse.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
import traceback
from pathlib import Path

import git

from analyzer.index.build import index_repo
from analyzer.index.source import BlobReader, looks_minified, scan_sources
from analyzer.parse.extract import extract_facts
from analyzer.parse.languages import language_for_path, parse_bytes


def bench_repo(spec: str, slowest: int, with_index: bool) -> float:
    git_dir, _, commit = spec.partition("@")
    commit = commit or "HEAD"
    repo = git.Repo(git_dir)
    reader = BlobReader(repo)
    full = reader.git.rev_parse(f"{commit}^{{commit}}").strip()
    scan = scan_sources(repo, full, reader)
    blobs = [(f.path, reader.read(f.blob_sha)) for f in scan.files]
    blobs = [(p, d) for p, d in blobs if not looks_minified(p, d)]
    size = sum(len(d) for _p, d in blobs)
    print(f"\n== {git_dir} @ {full[:12]}: {len(blobs)} files, {size / 1e6:.1f} MB"
          f" (skipped {dict(sorted(scan.skipped.items()))})")

    for probe in ("x.ts", "x.tsx", "x.js", "x.d.ts"):  # compile the queries once, outside the timings
        extract_facts(b"f()", probe)

    parse_cpu = extract_cpu = parse_wall = extract_wall = 0.0
    crashes: list[str] = []
    parse_error_files = extract_error_files = 0
    per_file: list[tuple[float, float, str, int]] = []
    counts = {"definitions": 0, "calls": 0, "objects": 0, "imports": 0, "bindings": 0}
    gc.disable()
    try:
        for path, data in blobs:
            lang = language_for_path(path) or "typescript"
            c0, w0 = time.process_time(), time.perf_counter()
            parse_bytes(data, lang)
            c1, w1 = time.process_time(), time.perf_counter()
            try:
                facts = extract_facts(data, path)
            except Exception:  # noqa: BLE001 - counted: must never happen
                crashes.append(path)
                traceback.print_exc()
                continue
            c2, w2 = time.process_time(), time.perf_counter()
            parse_cpu += c1 - c0
            extract_cpu += c2 - c1
            parse_wall += w1 - w0
            extract_wall += w2 - w1
            per_file.append((c2 - c1, c1 - c0, path, len(data)))
            parse_error_files += facts.parse_errors > 0
            extract_error_files += facts.extract_errors > 0
            for key in counts:
                counts[key] += len(getattr(facts, key))
    finally:
        gc.enable()

    ratio = extract_cpu / parse_cpu if parse_cpu else float("nan")
    print(f"raw parse      cpu {parse_cpu:7.2f} s   wall {parse_wall:7.2f} s")
    print(f"extract_facts  cpu {extract_cpu:7.2f} s   wall {extract_wall:7.2f} s   (includes its own parse)")
    print(f"ratio extract/parse: cpu {ratio:.2f}x   wall {extract_wall / parse_wall:.2f}x   (goal <= 2.5x)")
    print(f"crashes: {len(crashes)}   files with syntax errors: {parse_error_files}"
          f"   files with skipped constructs: {extract_error_files}")
    print("records: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print(f"slowest {slowest} files (extract cpu s, parse cpu s, bytes):")
    for ext, par, path, n in sorted(per_file, reverse=True)[:slowest]:
        print(f"  {ext:6.3f} {par:6.3f} {n:8d}  {path}")

    if with_index:
        with tempfile.TemporaryDirectory() as tmp:
            cold = index_repo(repo, full, repo_name="bench", cache=Path(tmp))
            warm = index_repo(repo, full, repo_name="bench", cache=Path(tmp))
            cold.close()
            warm.close()
        print(f"index_repo cold {cold.stats.seconds:.2f} s ({cold.stats.parsed} parsed)   "
              f"warm {warm.stats.seconds:.2f} s ({warm.stats.cached} from cache)")
    reader.close()
    return ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", help="git dir, optionally @commit (default HEAD)")
    parser.add_argument("--slowest", type=int, default=8)
    parser.add_argument("--no-index", action="store_true", help="skip the cold/warm index_repo timing")
    args = parser.parse_args(argv)
    ratios = [bench_repo(spec, args.slowest, not args.no_index) for spec in args.repos]
    print("\nratios (cpu): " + ", ".join(f"{r:.2f}x" for r in ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
