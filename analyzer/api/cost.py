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
    settings: tuple[str, ...] = ()    # `NAME=VALUE` server settings the rows lack (slots=1 …), for the cache model


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
        report.whatif["fix"] = fix_whatif(rows, report, fixes, renderer=renderer or PlainRenderer(), rule=rule,
                                          settings=parse_settings(options.settings)).as_json()
    return report


def parse_settings(items: tuple[str, ...]) -> dict[str, Any]:
    """`slots=1`, `cache_ram_mib=0`, `kv_unified=false` → values the cache model reads."""
    from analyzer.errors import AnalyzerError

    out: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise AnalyzerError(f"--setting {item!r}: expected NAME=VALUE, e.g. slots=1", exit_code=2)
        value: Any = raw
        if raw.lower() in ("true", "false"):
            value = raw.lower() == "true"
        else:
            try:
                value = int(raw)
            except ValueError:
                try:
                    value = float(raw)
                except ValueError:
                    value = raw
        out[name] = value
    return out


def cache_rule_for(report: CostReport, rows: list[dict[str, Any]]) -> str:
    """The cache model's rule for the what-ifs: the priced provider's when it was not assumed, else the rule the
    rows point to (a local engine's log is simulated as that engine)."""
    from analyzer.cachemodel import all_rules
    from analyzer.prefix.endpoint_rule import detect_rule

    if not report.provider_why.startswith("assumed") and report.provider in all_rules():
        return report.provider
    first = next((r for r in rows if isinstance(r.get("request_body"), str)), rows[0])
    return detect_rule(first)[0]


@dataclass(frozen=True)
class ReplayOptions:
    """`base_url`: the endpoint (…/v1); `fixes`: replay the log rewritten by them; `spacing`: "recorded" or
    "compressed", `max_gap_s` caps recorded gaps; `rule`: the cache model's rule the prediction uses."""

    base_url: str
    out_dir: Path = Path("observations")
    fixes: tuple[str, ...] = ()
    spacing: str = "recorded"
    max_gap_s: float | None = None
    api_key: str | None = None
    rule: str = "llama.cpp"


@dataclass
class ReplayReport:
    log: Path
    spacing: str
    fixes: list[str]
    failed: int
    rows: list[dict[str, Any]]
    predicted: list[int]          # per replayed request: the cache model's cached tokens for this version
    measured: list[int | None]    # what the endpoint reported
    rule: str
    note: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"schema": "analyzer.cost.replay/1", "log": str(self.log), "spacing": self.spacing,
                "fixes": self.fixes, "failed": self.failed, "rule": self.rule,
                "predicted_cached": sum(self.predicted) if self.predicted else None, "note": self.note,
                "measured_cached": sum(m or 0 for m in self.measured),
                "requests": [{"replayed_row": r.get("replayed_row"), "measured_cached": m,
                              "predicted_cached": self.predicted[i] if self.predicted else None}
                             for i, (r, m) in enumerate(zip(self.rows, self.measured, strict=True))]}


def replay_log(rows: list[dict[str, Any]], options: ReplayOptions) -> ReplayReport:
    """Re-send the log (fixed when asked) and set what the endpoint reported beside the cache model's prediction
    for the same requests, tokenized by the endpoint itself."""
    from analyzer.cost.bill import bill
    from analyzer.cost.buckets import row_buckets
    from analyzer.cost.fixes import parse_fix
    from analyzer.cost.fixsim import fix_whatif
    from analyzer.cost.prices import load_book
    from analyzer.cost.replay import Spacing, replay
    from analyzer.errors import AnalyzerError
    from analyzer.prefix.tokens import LlamaServerRenderer

    fixes = [parse_fix(spec) for spec in options.fixes]
    result = replay(rows, options.base_url, options.out_dir, fixes=fixes,
                    spacing=Spacing(options.spacing, options.max_gap_s), api_key=options.api_key)
    root = options.base_url.rstrip("/").removesuffix("/v1")
    replayed = [r for r in result.rows if r.get("usage")]
    predicted: list[int] = []
    note = None
    if replayed:
        report = bill(replayed, load_book(), provider="deepseek")   # prices are not compared here, only tokens
        try:
            what = fix_whatif(replayed, report, [], renderer=LlamaServerRenderer(root), rule=options.rule)
        except AnalyzerError as exc:
            note = f"no prediction: {exc}"
        else:
            if what.render_errors:   # estimated tokens never compare with the endpoint's: no prediction
                note = (f"no prediction: {root} did not render the requests for the cache model "
                        f"({'; '.join(what.render_errors)})")
            else:
                by_row = {r.row: r.recorded.cached for r in what.rows}
                predicted = [by_row.get(i, 0) for i in range(1, len(replayed) + 1)]
    measured = []
    for r in replayed:
        b = row_buckets(r)
        measured.append(b.cache_read if b is not None else None)
    return ReplayReport(result.log, result.spacing, result.fixes, result.failed, replayed, predicted, measured,
                        options.rule, note)
