"""Hazard scan benchmark: a warm `analyze hazards` (stored scan, stored graph) against the start-up floor.

    python benchmarks/hazards_bench.py [--lock repos.lock] [--source NAME=PATH ...] [--runs 5]

All timings come from one run, so the printed ratios compare like with like on a shared, noisy machine:
- floor: `analyze --help` as a whole process (median of --runs): what any command pays to start;
- first: the first `analyze hazards --json` of this run (a full scan when none is stored for this graph,
  code and rules; the stored scans of the shared cache are never deleted);
- warm: the same command as a whole process on a cache that holds the graph and this scan (median of
  --runs), and its ratio to the floor.
The goal is a warm scan under 15 s. The load average before and after is printed: on a shared machine, say
so next to the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):  # hazards exits 1 when it finds something
        sys.exit(f"error: {' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", default="repos.lock")
    parser.add_argument("--source", action="append", default=[])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    analyze = [sys.executable, "-m", "analyzer", "--lock", args.lock, *(f"--source={s}" for s in args.source)]
    print(f"load average before: {os.getloadavg()}")
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
