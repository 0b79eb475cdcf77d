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
    fixes: tuple[str, ...] = ()       # `--fix` specs (analyzer/cost/fixes.py); empty: no fix what-if
    rule: str | None = None           # the cache model's rule for the what-ifs; None: the provider's, or detected


def cost(rows: list[dict[str, Any]], options: CostOptions = CostOptions()) -> CostReport:
    """The cost report of a log's rows (in log order)."""
    from analyzer.cost.bill import add_breaks, bill
    from analyzer.cost.fixes import parse_fix
    from analyzer.cost.prices import load_book
    from analyzer.errors import AnalyzerError
    from analyzer.prefix import analyse

    fixes = [parse_fix(spec) for spec in options.fixes]
    book = load_book(options.prices)
    report = bill(rows, book, provider=options.provider, model=options.model, log=options.log)
    renderer = None
    if options.engine_url:
        from analyzer.prefix.tokens import LlamaServerRenderer

        renderer = LlamaServerRenderer(options.engine_url)
    report.whatif = {}
    try:
        prefix = analyse(rows, renderer=renderer, log=options.log)
    except AnalyzerError as exc:
        report.notes.append(f"prefix breaks not priced: {exc}")
    else:
        add_breaks(report, prefix)
        if options.whatif_retention:
            from analyzer.cost.retention import retention_whatif

            report.whatif["retention"] = retention_whatif(report, prefix, warm_every_min=options.warm_every_min,
                                                          ttl_min=options.ttl_min).as_json()
    if fixes:
        from analyzer.cost.fixsim import fix_whatif
        from analyzer.prefix.tokens import PlainRenderer

        rule = options.rule or cache_rule_for(report, rows)
        report.whatif["fix"] = fix_whatif(rows, report, fixes, renderer=renderer or PlainRenderer(),
                                          rule=rule).as_json()
    return report


def cache_rule_for(report: CostReport, rows: list[dict[str, Any]]) -> str:
    """The cache model's rule for the what-ifs: the priced provider's when it was not assumed, else the rule the
    rows point to (a local engine's log is simulated as that engine)."""
    from analyzer.cachemodel import all_rules
    from analyzer.prefix.predict import detect_rule

    if not report.provider_why.startswith("assumed") and report.provider in all_rules():
        return report.provider
    first = next((r for r in rows if isinstance(r.get("request_body"), str)), rows[0])
    return detect_rule(first)[0]
