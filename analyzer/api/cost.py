"""`cost`: what a recorded log cost at the provider's published prices, what the cache saved, and what each prefix
break lost by cause (a thin face over analyzer.cost; the prices are data in analyzer/rules/prices/)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analyzer.cost.bill import CostReport


@dataclass(frozen=True)
class CostOptions:
    """`provider`/`model`: None = detected from the rows (said when assumed); `prices`: a user's price file that
    replaces the shipped one of its provider; `engine_url`: a llama.cpp server to tokenize the breaks with
    (else estimated and said); `warm_every_min`/`ttl_min`: the retention what-if (None: not run)."""

    provider: str | None = None
    model: str | None = None
    prices: Path | None = None
    engine_url: str | None = None
    log: str | None = None
    whatif_retention: bool = False
    warm_every_min: float | None = None
    ttl_min: float | None = None


def cost(rows: list[dict[str, Any]], options: CostOptions = CostOptions()) -> CostReport:
    """The cost report of a log's rows (in log order)."""
    from analyzer.cost.bill import add_breaks, bill
    from analyzer.cost.prices import load_book
    from analyzer.errors import AnalyzerError
    from analyzer.prefix import analyse

    book = load_book(options.prices)
    report = bill(rows, book, provider=options.provider, model=options.model, log=options.log)
    try:
        prefix = analyse(rows, engine_url=options.engine_url, log=options.log)
    except AnalyzerError as exc:
        report.notes.append(f"prefix breaks not priced: {exc}")
    else:
        add_breaks(report, prefix)
        if options.whatif_retention:
            from analyzer.cost.retention import retention_whatif

            report.whatif = {"retention": retention_whatif(report, prefix, warm_every_min=options.warm_every_min,
                                                           ttl_min=options.ttl_min).as_json()}
    return report
