"""`callers` / `callees`: one step of the graph per symbol, with edge kinds, call sites and evidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analyzer.api.session import Session

if TYPE_CHECKING:
    from analyzer.analysis import Analysis


@dataclass(frozen=True)
class NeighbourOptions:
    allow_guesses: bool = False  # include `name` (guessed) edges
    include_tests: bool = False  # include callers/callees in test code


@dataclass(frozen=True)
class NeighbourResult:
    """One entry per symbol asked, in order: `analyzer.graph.neighbours.neighbours`' result (a name with
    several definitions keeps each apart, `ambiguous` set), or `{"symbol", "error"}` for a name that
    resolved to nothing when several were asked."""

    direction: str  # "callers" | "callees"
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any("error" in r for r in self.results)


def callers(source: Session | Analysis, symbols: list[str], options: NeighbourOptions = NeighbourOptions(), *,
            at: list[str] | None = None) -> NeighbourResult:
    """Who calls each symbol. One symbol that names nothing raises AnalyzerError (closest names)."""
    return _step(source, symbols, "in", options, at)


def callees(source: Session | Analysis, symbols: list[str], options: NeighbourOptions = NeighbourOptions(), *,
            at: list[str] | None = None) -> NeighbourResult:
    """What each symbol calls (see `callers`)."""
    return _step(source, symbols, "out", options, at)


def _step(source: Session | Analysis, symbols: list[str], direction: str, options: NeighbourOptions,
          at: list[str] | None) -> NeighbourResult:
    from analyzer.api.analysis import open_analysis
    from analyzer.errors import AnalyzerError
    from analyzer.graph.neighbours import neighbours

    g = (open_analysis(source, at=at) if isinstance(source, Session) else source).view  # all share one load
    out = NeighbourResult("callers" if direction == "in" else "callees")
    for spec in symbols:
        try:
            out.results.append(neighbours(g, spec, direction, allow_guesses=options.allow_guesses,
                                          include_tests=options.include_tests))
        except AnalyzerError as exc:
            if len(symbols) == 1:
                raise
            out.results.append({"symbol": spec, "error": str(exc)})
    return out
