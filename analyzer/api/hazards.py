"""`hazards`: volatile values that reach the cached prompt prefix (a thin face over analyzer.hazards.run)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analyzer.api.session import Session

if TYPE_CHECKING:
    from analyzer.analysis import Analysis

DEFAULT_HAZARD_DEPTH = 6


@dataclass(frozen=True)
class HazardOptions:
    max_depth: int = DEFAULT_HAZARD_DEPTH  # call depth followed
    include_near_misses: bool = False  # also list near-misses and why each was dismissed
    allow_guesses: bool = False  # follow `name` (guessed) edges too
    include_tests: bool = False  # read test code as well


@dataclass(frozen=True)
class HazardsResult:
    document: dict[str, Any]  # analyzer.hazards.model's result: findings, near-misses, pins

    @property
    def findings(self) -> list[dict[str, Any]]:
        return list(self.document["findings"])


def hazards(session: Session, options: HazardOptions = HazardOptions(), *, analysis: Analysis | None = None,
            at: list[str] | None = None) -> HazardsResult:
    """Run the hazard rules over `analysis` (default: opened at the lock's pins moved by `at`). The engine
    reads the full networkx graph and the pinned sources' git dirs (through the session's cache); a scan is
    stored once per graph and options, so a warm call reads it back."""
    from analyzer.api.analysis import open_analysis
    from analyzer.errors import AnalyzerError
    from analyzer.hazards.run import hazards_for

    if options.max_depth < 1:
        raise AnalyzerError(f"--max-depth {options.max_depth}: must be at least 1")
    analysis = analysis or open_analysis(session, at=at)
    return HazardsResult(hazards_for(session, analysis, max_depth=options.max_depth,
                                     include_near_misses=options.include_near_misses,
                                     allow_guesses=options.allow_guesses, include_tests=options.include_tests))


def explain_rule(name: str) -> dict[str, str]:
    """What a hazard rule matches, why, an example and the fix, read from the rule files (no graph needed)."""
    from analyzer.hazards.rules import explain, load_hazard_rules

    return explain(load_hazard_rules(), name)
