"""One hazards run at one pin set: graph (warm from the cache) → engine → structural checks → result.

`hazards_for` is what commands call: it answers from the stored scan of this graph when there is one
(`analyzer.hazards.cache`) and only opens the repositories when it has to scan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.analysis import Analysis
from analyzer.hazards.engine import DEFAULT_MAX_DEPTH, Engine
from analyzer.hazards.model import build_result
from analyzer.hazards.rules import load_hazard_rules
from analyzer.hazards.structural import structural_hazards
from analyzer.hazards.syntax import SourceFiles


def git_dirs_for(ctx: Any, analysis: Analysis) -> dict[str, str]:
    """The git dir of every pinned repo (already open when the graph was built, else from the cache)."""
    from analyzer.sources.workspace import open_repo

    out = {}
    for pin in analysis.pins:
        repo = analysis.repos.get(pin.name) or open_repo(ctx, pin)
        out[pin.name] = str(repo.git_dir)
    return out


def hazards_for(ctx: Any, analysis: Analysis, *, max_depth: int = DEFAULT_MAX_DEPTH,
                include_near_misses: bool = False, allow_guesses: bool = False,
                include_tests: bool = False, cache_dir: Path | None = None) -> dict[str, Any]:
    """The hazards result for this analysis, scanned once per graph and options (stored in the cache dir)."""
    from analyzer.hazards.cache import cached_scan, scan_key

    options: dict[str, Any] = {"max_depth": max_depth, "allow_guesses": allow_guesses,
                               "include_tests": include_tests}
    where = cache_dir if cache_dir is not None else Path(ctx.cache_dir)

    def scan() -> dict[str, Any]:
        return compute_hazards(analysis, git_dirs_for(ctx, analysis), include_near_misses=True, **options)

    result, _ = cached_scan(where, scan_key(analysis.pins, options), scan, getattr(ctx, "warn", None))
    return result if include_near_misses else {**result, "near_misses": []}


def compute_hazards(analysis: Analysis, git_dirs: dict[str, str], *, max_depth: int = DEFAULT_MAX_DEPTH,
                    include_near_misses: bool = False, allow_guesses: bool = False,
                    include_tests: bool = False) -> dict[str, Any]:
    rules = load_hazard_rules()
    commits = {p.name: p.commit for p in analysis.pins}
    files = SourceFiles(git_dirs, commits)
    try:
        engine = Engine(analysis.graph, files, rules, max_depth=max_depth, allow_guesses=allow_guesses,
                        include_tests=include_tests)
        res = engine.run(commits, git_dirs)
        structural = structural_hazards(engine, rules, res, commits, git_dirs)
        parsed = sum(1 for v in files._files.values() if v is not None)
    finally:
        files.close()
    return build_result(analysis.graph, rules, res, structural, analysis.pins_json(), max_depth=max_depth,
                        files_parsed=parsed, include_near_misses=include_near_misses)
