"""One hazards run at one pin set: graph (warm from the cache) → engine → structural checks → result.

`hazards_for` is what commands call: it answers from the stored scan of this graph when there is one
(`analyzer.hazards.cache`) and only opens the repositories and reads their index facts when it has to scan.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.analysis import Analysis, Workspace
from analyzer.hazards.candidates import Candidates
from analyzer.hazards.driver import DEFAULT_MAX_DEPTH, Engine
from analyzer.hazards.model import build_result
from analyzer.hazards.rules import HazardRules, load_hazard_rules
from analyzer.hazards.structural import structural_hazards
from analyzer.hazards.syntax import SourceFiles
from analyzer.index.model import FileFacts


def git_dirs_for(ctx: Workspace, analysis: Analysis) -> dict[str, str]:
    """The git dir of every pinned repo (already open when the graph was built, else from the cache)."""
    from analyzer.sources.workspace import open_repo

    out = {}
    for pin in analysis.pins:
        repo = analysis.repos.get(pin.name) or open_repo(ctx, pin)
        out[pin.name] = str(repo.git_dir)
    return out


def index_facts_for(ctx: Workspace, analysis: Analysis) -> dict[str, list[FileFacts]]:
    """The indexed files of every pinned repo: this run's program when it built the graph, else the per-blob
    facts of the index cache (extracted there when missing)."""
    if analysis.program is not None:
        return {name: list(r.files) for name, r in analysis.program.repos.items()}
    from analyzer.index.build import index_repo
    from analyzer.index.cache import FactsCache
    from analyzer.sources.workspace import open_repo

    out = {}
    with FactsCache(Path(ctx.cache_dir), warn=getattr(ctx, "warn", None)) as cache:
        for pin in analysis.pins:
            repo = analysis.repos.get(pin.name) or open_repo(ctx, pin)
            out[pin.name] = index_repo(repo, pin.commit, repo_name=pin.name, cache=cache).files
    return out


def hazards_for(ctx: Workspace, analysis: Analysis, *, max_depth: int = DEFAULT_MAX_DEPTH,
                include_near_misses: bool = False, allow_guesses: bool = False,
                include_tests: bool = False, cache_dir: Path | None = None) -> dict[str, Any]:
    """The hazards result for this analysis, scanned once per graph and options (stored in the cache dir)."""
    from analyzer.hazards.cache import cached_scan, scan_key

    options: dict[str, Any] = {"max_depth": max_depth, "allow_guesses": allow_guesses,
                               "include_tests": include_tests}
    where = cache_dir if cache_dir is not None else Path(ctx.cache_dir)

    def scan() -> dict[str, Any]:
        return compute_hazards(analysis, git_dirs_for(ctx, analysis), index_facts_for(ctx, analysis),
                               include_near_misses=True, **options)

    result, _ = cached_scan(where, scan_key(analysis.pins, options), scan, getattr(ctx, "warn", None))
    return result if include_near_misses else {**result, "near_misses": []}


def compute_hazards(analysis: Analysis, git_dirs: dict[str, str], facts: dict[str, list[FileFacts]], *,
                    max_depth: int = DEFAULT_MAX_DEPTH, include_near_misses: bool = False,
                    allow_guesses: bool = False, include_tests: bool = False,
                    rules: HazardRules | None = None) -> dict[str, Any]:
    """One scan: candidates from `facts` (repo → indexed files), bodies read from `git_dirs` at the pins;
    `rules` replaces the shipped rule files (a test that edits one)."""
    rules = rules or load_hazard_rules()
    commits = {p.name: p.commit for p in analysis.pins}
    repos = [p.name for p in analysis.pins if p.name in git_dirs]
    files = SourceFiles(git_dirs, commits)
    try:
        candidates = Candidates(facts, rules, include_tests=include_tests)
        engine = Engine(analysis.graph, files, rules, candidates, max_depth=max_depth, allow_guesses=allow_guesses,
                        include_tests=include_tests)
        res = engine.run(repos)
        structural = structural_hazards(engine, rules, res, repos)
        parsed = sum(1 for v in files._files.values() if v is not None)
    finally:
        files.close()
    return build_result(analysis.graph, rules, res, structural, analysis.pins_json(), max_depth=max_depth,
                        files_parsed=parsed, include_near_misses=include_near_misses)
