"""`trace`: the request path between two symbols (the one trace report, recheck and the records use)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analyzer.api.session import Session
from analyzer.errors import AnalyzerError
from analyzer.trace.defaults import DEFAULT_MAX_DEPTH

if TYPE_CHECKING:
    from analyzer.analysis import Analysis
    from analyzer.lock import Lock
    from analyzer.trace.search import PathOptions


@dataclass(frozen=True)
class TraceOptions:
    """FROM and TO (default: the lock's `[trace]` table) and how the path may run."""

    from_symbol: str | None = None
    to_symbol: str | None = None
    max_depth: int = DEFAULT_MAX_DEPTH
    allow_guesses: bool = False
    include_tests: bool = False
    alternatives: int = 1  # K > 1: also list the K best runners-up

    def path_options(self) -> PathOptions:
        from analyzer.trace.search import PathOptions

        return PathOptions(max_depth=self.max_depth, allow_guesses=self.allow_guesses,
                           include_tests=self.include_tests, alternatives=self.alternatives)


@dataclass(frozen=True)
class TraceResult:
    """The trace as the `analyzer.trace/1` document (schema in `analyzer.trace.result`), plus the notes
    a reader must see (a name with several definitions, and which one the path uses)."""

    document: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.document["found"])


def endpoints(lock: Lock, from_symbol: str | None, to_symbol: str | None, command: str = "trace") -> tuple[str, str]:
    """FROM and TO: the given ones, else the lock's `[trace]` table; an error says how to give them."""
    spec_from = from_symbol or lock.trace_from
    spec_to = to_symbol or lock.trace_to
    if not spec_from or not spec_to:
        raise AnalyzerError(f"{command} needs FROM and TO (or a [trace] table with from/to in repos.lock)")
    return spec_from, spec_to


def trace(source: Session | Analysis, options: TraceOptions = TraceOptions(), *,
          at: list[str] | None = None) -> TraceResult:
    """The best request path FROM → TO. `source` is an open analysis, or a session: then FROM/TO are
    checked first and the analysis at the lock's pins (moved by `at`) is opened.

    Runs on the analysis's view: a warm trace decodes only the adjacency lists it walks. An unknown name
    raises AnalyzerError with the closest names; a name with several definitions is noted, not an error."""
    from analyzer.api.analysis import open_analysis
    from analyzer.trace.search import ambiguity_notes, trace_graph

    spec_from, spec_to = endpoints(source.lock, options.from_symbol, options.to_symbol)
    analysis = open_analysis(source, at=at) if isinstance(source, Session) else source
    run = trace_graph(analysis.view, spec_from, spec_to, analysis.pins_json(), options.path_options())
    assert run.document is not None  # strict: an unknown name raised
    return TraceResult(run.document, ambiguity_notes(run.document))
