"""Hazard scan benchmark: a warm `analyze hazards` (stored scan, stored graph) against the start-up floor, and
with --cold the scan itself (graph stored, scan not), optionally against another version of the code.

    python benchmarks/hazards_bench.py [--lock repos.lock] [--source NAME=PATH ...] [--runs 5]
                                       [--cold] [--before DIR]

All timings come from one run, so the printed ratios compare like with like on a shared, noisy machine:
- floor: `analyze --help` as a whole process (median of --runs): what any command pays to start;
- first: the first `analyze hazards --json` of this run (a full scan when none is stored for this graph,
  code and rules; the stored scans of the shared cache are never deleted);
- warm: the same command as a whole process on a cache that holds the graph and this scan (median of
  --runs), and its ratio to the floor;
- cold (--cold): `analyze hazards --json --all` as a whole process whose stored scan goes to a fresh
  temporary directory (so it scans; nothing in the shared cache is deleted or written), wall and CPU
  seconds; with --before DIR (a copy of another commit's `analyzer` package, e.g.
  `git archive BASE analyzer | tar -x -C DIR`) the same cold scan of that code first, then this one, and the
  ratio of their CPU seconds (CPU, since on a shared machine wall time also counts waiting for a core) and
  of their peak resident memory. --memory-cap GB caps each scan's address space, so a version that would
  exhaust the machine fails fast and is reported as over the cap.
  Each runs from an empty directory with its code first on PYTHONPATH (give --source paths absolute).
The goal is a warm scan under 15 s. The load average before and after is printed: on a shared machine, say
so next to the figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):  # hazards exits 1 when it finds something
        sys.exit(f"error: {' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    return took


# Runs one cold scan in a fresh process: the stored scan is redirected to a temporary directory.
_COLD = """
import resource, sys, tempfile
from pathlib import Path
import analyzer.hazards.cache as cache
from analyzer.cli import main
with tempfile.TemporaryDirectory(prefix="hazards-bench-") as where:
    cache.scan_path = lambda cache_dir, key: Path(where) / "hazards" / f"{key}.json"
    sys.stdout = open(sys.argv[1], "w")
    code = main(sys.argv[2:])
print(f"peak-rss-kb {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", file=sys.stderr)
sys.exit(0 if code in (0, 1) else code)
"""


def _cold(args: list[str], code_dir: str, cap_gb: float | None = None) -> tuple[float, float, float] | None:
    """(wall seconds, CPU seconds, peak resident GB) of one cold scan, of the `analyzer` package found in
    `code_dir` (the peak is the scanning process's own, printed by it: the children's rusage keeps the
    largest child so far, which would hide a smaller second run). With `cap_gb`, the scan's address space is
    capped there; None when it needed more."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (code_dir, env.get("PYTHONPATH")) if p)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # run from an empty directory: `python -c` puts the working directory first on the path, which would
    # import the analyzer of wherever the benchmark was started instead of `code_dir`'s
    with tempfile.TemporaryDirectory(prefix="hazards-bench-cwd-") as cwd:
        done = subprocess.run([sys.executable, "-c", _COLD, os.devnull, *args, "--json", "hazards", "--all"],
                              env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              preexec_fn=(lambda: _cap(cap_gb)) if cap_gb else None)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 and cap_gb and "MemoryError" in done.stderr:
        return None
    if done.returncode != 0:
        sys.exit(f"error: cold scan failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    peaks = [line.split()[1] for line in done.stderr.splitlines() if line.startswith("peak-rss-kb ")]
    peak = int(peaks[-1]) / 1e6 if peaks else float("nan")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), peak


def _cap(gb: float) -> None:
    """The child's address-space limit (a scan that would exhaust the machine fails with MemoryError)."""
    limit = int(gb * 1e9)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _describe(run: tuple[float, float, float] | None, cap_gb: float | None) -> str:
    if run is None:
        return f"needed more than the {cap_gb:g} GB cap (MemoryError)"
    wall, cpu, peak = run
    return f"{wall:.0f} s wall, {cpu:.0f} s CPU, peak {peak:.2f} GB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", default="repos.lock")
    parser.add_argument("--source", action="append", default=[])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="also time the scan itself (its stored result unused)")
    parser.add_argument("--before", metavar="DIR", help="with --cold: first time the analyzer package in DIR")
    parser.add_argument("--memory-cap", metavar="GB", type=float,
                        help="with --cold: cap each scan's address space (a run over it is reported, not waited for)")
    args = parser.parse_args()
    options = ["--lock", os.path.abspath(args.lock), *(f"--source={s}" for s in args.source)]
    analyze = [sys.executable, "-m", "analyzer", *options]
    print(f"load average before: {os.getloadavg()}")
    if args.cold:
        old = _cold(options, args.before, args.memory_cap) if args.before else None
        if args.before:
            print(f"cold scan, code in {args.before}: {_describe(old, args.memory_cap)}")
        new = _cold(options, str(Path(__file__).resolve().parent.parent), args.memory_cap)
        print(f"cold scan, this checkout: {_describe(new, args.memory_cap)}")
        if old is not None and new is not None:
            print(f"this checkout / {args.before}: {new[1] / old[1]:.2f}x the CPU, {new[0] / old[0]:.2f}x the wall "
                  f"time, {new[2] / old[2]:.2f}x the peak memory")
        elif args.before and new is not None:
            print(f"this checkout / {args.before}: at most {new[2] / args.memory_cap:.2f}x the peak memory")
    floor = statistics.median(_timed([*analyze, "--help"]) for _ in range(args.runs))
    first = _timed([*analyze, "--json", "hazards"])  # stores the scan when it is not stored yet
    print(f"first hazards of this run: {first:.1f} s = {first / floor:.0f}x the start-up floor")
    warm = statistics.median(_timed([*analyze, "--json", "hazards"]) for _ in range(args.runs))
    print(f"start-up floor (--help, median of {args.runs}): {floor:.2f} s")
    print(f"warm hazards (median of {args.runs}): {warm:.2f} s = {warm / floor:.1f}x the floor; goal < 15 s: "
          f"{'met' if warm < 15 else 'NOT met'}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
