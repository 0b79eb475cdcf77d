"""`prefix`: a proxy log explained — the cache model's state and prediction per request, the conversation
each belongs to, where it first differs from the request it is compared with, the code that wrote the
difference (a thin face over analyzer.prefix and analyzer.cachemodel)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.prefix.attribute import LiteralLookup
    from analyzer.prefix.run import PrefixReport
    from analyzer.prefix.tokens import Renderer


@dataclass(frozen=True)
class PrefixOptions:
    """`against`: None (lineage), a row number, or "control"; `engine_url`: a llama.cpp server to render and
    tokenize with (else `renderer`, else estimates); `rule`: the cache rule (else detected); `settings`: server
    cache settings the rows lack (win over the rows); `findings`: `analyze hazards --json` findings; `lookup`:
    a literal lookup on the pinned sources."""

    against: int | str | None = None
    engine_url: str | None = None
    renderer: Renderer | None = None
    rule: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    findings: Iterable[dict[str, Any]] = ()
    lookup: LiteralLookup | None = None


def prefix(log: Path | Sequence[Path] | list[dict[str, Any]],
           options: PrefixOptions = PrefixOptions()) -> PrefixReport:
    """The prefix report of a proxy log (a path; several paths of one server, read as one log with rows
    numbered across them; or rows already read)."""
    from analyzer.prefix import analyse

    items: Sequence[Any] = [log] if isinstance(log, Path) else log
    paths = [p for p in items if isinstance(p, Path)]
    if paths:
        from analyzer.observe.jsonl import read_rows

        rows: list[dict[str, Any]] = []
        for path in paths:
            found = read_rows(path)
            if not found:
                raise AnalyzerError(f"{path} holds no rows; pass a log written by `analyze proxy`")
            rows += found
        name: str | None = ", ".join(map(str, paths))
    else:
        rows, name = [r for r in items if isinstance(r, dict)], None
    return analyse(rows, against=options.against, renderer=options.renderer, engine_url=options.engine_url,
                   rule=options.rule, findings=options.findings, lookup=options.lookup, log=name,
                   settings=dict(options.settings) or None)
