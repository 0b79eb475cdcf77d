"""`symbols`: definitions whose qualified name matches a glob or contains a text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analyzer.api.session import Session

if TYPE_CHECKING:
    from analyzer.analysis import Analysis


@dataclass(frozen=True)
class SymbolsResult:
    count: int  # every match, also those past the limit
    rows: list[dict[str, Any]] = field(default_factory=list)  # analyzer.graph.neighbours.definition_row


def symbols(source: Session | Analysis, pattern: str, *, kinds: list[str] | None = None, limit: int = 200,
            at: list[str] | None = None) -> SymbolsResult:
    """Matches of `pattern` (`*Usage*`, or a case-insensitive substring), sorted by name, the first `limit`
    as rows (repo, path, line, kind, has_body, test)."""
    from analyzer.api.analysis import open_analysis
    from analyzer.graph.neighbours import definition_row
    from analyzer.graph.queries import find_symbols

    g = (open_analysis(source, at=at) if isinstance(source, Session) else source).view
    nodes = find_symbols(g, pattern, kinds)
    return SymbolsResult(len(nodes), [definition_row(g, n) for n in nodes[:limit]])
