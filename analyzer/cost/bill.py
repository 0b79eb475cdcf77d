"""Price every request of a log at its own recorded time, what it would have cost with no cache, and the money
each prefix break lost (the tokens it made the provider recompute × the price difference), grouped by cause.

The breaks and their causes come from the prefix report (`analyzer.prefix.analyse`): this module prices what
that report found and never decides itself where a prefix broke.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analyzer.cost.buckets import Buckets, row_buckets
from analyzer.cost.prices import PriceBook, ProviderPrices, Quote
from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.prefix.run import PrefixReport

SCHEMA = "analyzer.cost/1"
DEFAULT_PROVIDER = "deepseek"   # the research route's service: the assumption when nothing in the rows says


@dataclass(frozen=True)
class Money:
    """Money of one request by bucket, in the quote's currency."""

    uncached: float
    cache_read: float
    cache_write: float
    output: float

    @property
    def total(self) -> float:
        return self.uncached + self.cache_read + self.cache_write + self.output

    def as_json(self) -> dict[str, float]:
        return {"uncached_input": self.uncached, "cache_read": self.cache_read, "cache_write": self.cache_write,
                "output": self.output, "total": self.total}


@dataclass(frozen=True)
class Break:
    """A prefix break as the prefix report found it, priced."""

    row: int
    baseline_row: int | None
    kind: str                  # changed | inserted | removed
    where: str                 # e.g. "system", "tools[2].function.description", "messages[3].content (user)"
    cause: str                 # the group key: the request part and what wrote it
    old: str
    new: str
    attribution: str | None    # a hazard finding or a pinned literal, when one was found
    recomputed: int            # tokens of the previous prompt this request could have reused and did not
    lost: float                # recomputed × (the rate they were billed at − the cache-read rate)
    rate_why: str

    def as_json(self) -> dict[str, Any]:
        return {"row": self.row, "baseline_row": self.baseline_row, "kind": self.kind, "where": self.where,
                "cause": self.cause, "old": self.old, "new": self.new, "attribution": self.attribution,
                "recomputed_tokens": self.recomputed, "lost": self.lost, "rate": self.rate_why}


@dataclass
class RequestCost:
    row: int
    started_at: str
    model: str
    buckets: Buckets
    quote: Quote
    money: Money
    no_cache: float
    breaks: list[Break] = field(default_factory=list)
    series: str = "proxy"

    @property
    def saved(self) -> float:
        return self.no_cache - self.money.total

    def as_json(self) -> dict[str, Any]:
        return {"row": self.row, "series": self.series, "started_at": self.started_at, "model": self.model,
                "tokens": self.buckets.as_json(), "money": self.money.as_json(), "no_cache": self.no_cache,
                "saved": self.saved, "price": self.quote.as_json(), "breaks": [b.as_json() for b in self.breaks]}


@dataclass(frozen=True)
class Cause:
    cause: str
    breaks: int
    recomputed: int
    lost: float
    rows: tuple[int, ...]
    example_old: str
    example_new: str
    attribution: str | None

    def as_json(self) -> dict[str, Any]:
        return {"cause": self.cause, "breaks": self.breaks, "recomputed_tokens": self.recomputed, "lost": self.lost,
                "rows": list(self.rows), "example": {"old": self.example_old, "new": self.example_new},
                "attribution": self.attribution}


@dataclass
class CostReport:
    log: str | None
    provider: str
    provider_why: str
    model_why: str
    currency: str
    requests: list[RequestCost]
    causes: list[Cause]
    skipped: list[str]
    notes: list[str]
    tokens_note: str | None = None
    whatif: dict[str, Any] = field(default_factory=dict)
    experiment: dict[str, Any] = field(default_factory=dict)   # factor and each series' value (observe logs)

    def total(self) -> float:
        return sum(r.money.total for r in self.requests)

    def no_cache_total(self) -> float:
        return sum(r.no_cache for r in self.requests)

    def lost_total(self) -> float:
        return sum(c.lost for c in self.causes)

    def tokens(self) -> dict[str, int]:
        out = {"uncached_input": 0, "cache_read": 0, "cache_write": 0, "output": 0}
        for r in self.requests:
            b = r.buckets
            out["uncached_input"] += b.uncached
            out["cache_read"] += b.cache_read
            out["cache_write"] += b.written
            out["output"] += b.output
        return out

    def by_series(self) -> dict[str, dict[str, Any]]:
        """Per series (an observe experiment's control and treatment): requests, cached tokens, money."""
        out: dict[str, dict[str, Any]] = {}
        for r in self.requests:
            s = out.setdefault(r.series, {"requests": 0, "cache_read": 0, "prompt": 0, "money": 0.0})
            s["requests"] += 1
            s["cache_read"] += r.buckets.cache_read
            s["prompt"] += r.buckets.prompt
            s["money"] += r.money.total
        return out

    def sources(self) -> list[str]:
        return sorted({r.quote.cite() for r in self.requests})

    def as_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "log": self.log, "provider": self.provider, "provider_why": self.provider_why,
                "model_why": self.model_why, "currency": self.currency,
                "total": {"tokens": self.tokens(), "money": self.total(), "no_cache": self.no_cache_total(),
                          "saved": self.no_cache_total() - self.total(), "lost_to_breaks": self.lost_total()},
                "series": self.by_series(), "causes": [c.as_json() for c in self.causes],
                "requests": [r.as_json() for r in self.requests],
                "price_sources": self.sources(), "tokens_note": self.tokens_note, "notes": self.notes,
                "skipped": self.skipped, "whatif": self.whatif or None, "experiment": self.experiment or None}


# ---- which provider and model ----

def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def row_model(row: dict[str, Any]) -> str | None:
    config = _dict(row.get("config"))
    if isinstance(config.get("model"), str):
        return str(config["model"])
    text = row.get("request_body")
    if isinstance(text, str):
        try:
            body = json.loads(text)
        except json.JSONDecodeError:
            return None
        if isinstance(body, dict) and isinstance(body.get("model"), str):
            return str(body["model"])
    return None


def _urls(row: dict[str, Any]) -> str:
    config = _dict(row.get("config"))
    return " ".join(str(v) for v in (row.get("upstream_url"), config.get("url"), config.get("endpoint")) if v)


def detect_provider(rows: list[dict[str, Any]], book: PriceBook) -> tuple[str, str]:
    """(provider, why) from the rows: the endpoint URL, then usage fields, then the model name."""
    for p in book.providers:
        for row in rows:
            urls = _urls(row)
            hit = next((u for u in p.url_contains if u in urls), None)
            if hit:
                return p.provider, f"the endpoint URL contains {hit}"
    for p in book.providers:
        for row in rows:
            usage = _dict(row.get("usage"))
            hit = next((f for f in p.usage_fields if f in usage), None)
            if hit and p.provider != "openai":   # OpenAI's fields are the OpenAI-compatible servers' too
                return p.provider, f"the usage has {hit}"
    for p in book.providers:
        for row in rows:
            model = row_model(row) or ""
            hit = next((m for m in p.model_prefixes if model.startswith(m)), None)
            if hit:
                return p.provider, f"the model name {model} starts with {hit}"
    return DEFAULT_PROVIDER, (f"assumed: nothing in the rows names a priced provider (a local engine?); priced as "
                              f"{DEFAULT_PROVIDER}, pass --provider to choose")


def _model_for(row: dict[str, Any], prov: ProviderPrices, forced: str | None) -> tuple[str, str]:
    if forced:
        return forced, "chosen with --model"
    model = row_model(row)
    if model and prov.family(model):
        return model, "the request's model"
    fallback = prov.models[0].patterns[0].rstrip("*")
    said = f"the request's model {model!r} has no {prov.provider} price" if model else "the request names no model"
    return fallback, f"assumed: {said}; priced as {fallback} (pass --model)"


def started_at(row: dict[str, Any], line: int) -> _dt.datetime:
    text = row.get("started_at")
    if not isinstance(text, str):
        raise AnalyzerError(f"row {line}: no started_at; a request is priced at its own time, so the log needs "
                            "it (write the log with `analyze proxy` or `analyze observe`)")
    try:
        at = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise AnalyzerError(f"row {line}: started_at {text!r} is not an ISO time") from None
    return at if at.tzinfo else at.replace(tzinfo=_dt.UTC)


# ---- money ----

def price(b: Buckets, q: Quote) -> Money:
    r, per = q.rates, q.per_tokens
    write = sum(n * r.write_rate(ttl)[0] for ttl, n in b.cache_write)
    return Money(b.uncached * r.uncached_input / per, b.cache_read * r.cache_read / per, write / per,
                 b.output * r.output / per)


def no_cache_price(b: Buckets, q: Quote) -> float:
    """The same tokens with no prompt cache: every prompt token billed as uncached input."""
    return (b.prompt * q.rates.uncached_input + b.output * q.rates.output) / q.per_tokens


def bill(rows: list[dict[str, Any]], book: PriceBook, *, provider: str | None = None, model: str | None = None,
         log: str | None = None) -> CostReport:
    """Every row with usage priced at its own start time; breaks are added by `add_breaks`."""
    if provider is None:
        provider, why = detect_provider(rows, book)
    else:
        why = "chosen with --provider"
    prov = book.provider(provider)
    if prov is None:
        raise AnalyzerError(f"--provider {provider}: no prices; known: {', '.join(book.names())} (or pass "
                            "--prices FILE)")
    requests, skipped, model_whys = [], [], set()
    for n, row in enumerate(rows, 1):
        b = row_buckets(row)
        if b is None:
            skipped.append(f"row {n}: no usage reported")
            continue
        name, mwhy = _model_for(row, prov, model)
        model_whys.add(mwhy)
        q = book.quote(provider, name, started_at(row, n))
        requests.append(RequestCost(n, str(row["started_at"]), name, b, q, price(b, q), no_cache_price(b, q),
                                    series=str(row.get("series") or "proxy")))
    if not requests:
        raise AnalyzerError("no row of the log reports usage; pass a log written by `analyze proxy` or "
                            "`analyze observe` with finished requests")
    notes = sorted({c for r in requests for c in r.quote.caveats})
    report = CostReport(log, provider, why, "; ".join(sorted(model_whys)), prov.currency, requests, [], skipped,
                        notes)
    factor = next((r.get("factor") for r in rows if r.get("factor")), None)
    if factor:
        values: dict[str, Any] = {}
        for r in rows:
            values.setdefault(str(r.get("series")), r.get("value"))
        report.experiment = {"factor": factor, "experiment": rows[0].get("experiment"), "values": values}
    return report


# ---- breaks ----

def _where(s: Any) -> str:
    if s.part == "system" and s.path and not str(s.path).startswith("system"):
        return f"system ({s.path})"
    role = f" ({s.role})" if s.role and s.part == "messages" else ""
    return f"{s.path}{role}"


def _cause_key(s: Any, attribution: str | None) -> str:
    if s.part == "messages":
        part = f"messages ({s.role or 'message'}) {s.kind}"
    elif s.part == "tools":
        part = f"tools {s.kind}" if s.kind != "changed" else f"{(s.path or 'tools').split('.', 1)[0]} changed"
    else:   # the system prompt: `system`, `instructions`, or a chat body's leading `messages[0]`
        part = f"{s.part or s.path} {s.kind}"
    return f"{part} — {attribution}" if attribution else part


def _attribution_text(a: Any) -> str | None:
    if a is None:
        return None
    parts = []
    if a.hazard is not None:
        parts.append(f"hazard {a.hazard['id']}")
    if a.literal is not None and not a.only_later:
        parts.append(f"written by {a.literal.repo} {a.literal.place()} @ {a.literal.commit[:12]}")
    return "; ".join(parts) or None


def add_breaks(report: CostReport, prefix: PrefixReport) -> None:
    """Price the breaks of a prefix report (`analyzer.prefix.PrefixReport`) into `report` and group them: each
    request against the baseline its lineage chose (the cache entry it matched, else the request before it in
    its conversation), so a break is priced once, against what could have been reused."""
    by_row = {r.row: r for r in report.requests}
    tokens = {r.row: r.prompt_tokens for r in prefix.requests}
    for rep in prefix.requests:
        s = rep.structure
        cost = by_row.get(rep.row)
        if s is None or s.kind in ("identical", "appended") or cost is None or rep.token_index is None:
            continue
        base_tokens = tokens.get(rep.baseline_row or -1, 0)
        recomputed = max(0, min(base_tokens, rep.prompt_tokens) - rep.token_index)
        if not prefix.exact and rep.prompt_tokens and cost.buckets.prompt:
            recomputed = round(recomputed * cost.buckets.prompt / rep.prompt_tokens)
        r = cost.quote.rates
        if cost.buckets.written:
            billed, why = r.write_rate(cost.buckets.cache_write[0][0])
        else:
            billed, why = r.uncached_input, "uncached input"
        if recomputed == 0:   # nothing of the earlier prompt was given up (a removed last answer, say)
            continue
        lost = recomputed * (billed - r.cache_read) / cost.quote.per_tokens
        attribution = _attribution_text(rep.attribution)
        cost.breaks.append(Break(rep.row, rep.baseline_row, s.kind, _where(s), _cause_key(s, attribution),
                                 s.old, s.new, attribution, recomputed, lost,
                                 f"{why} − cache read, per {cost.quote.per_tokens:,} tokens; "
                                 f"compared with {rep.baseline}"))
    groups: dict[str, list[Break]] = {}
    for c in report.requests:
        for b in c.breaks:
            groups.setdefault(b.cause, []).append(b)
    report.causes = sorted((Cause(k, len(v), sum(b.recomputed for b in v), sum(b.lost for b in v),
                                  tuple(b.row for b in v), v[0].old, v[0].new, v[0].attribution)
                            for k, v in groups.items()), key=lambda c: -c.lost)
    report.tokens_note = (f"break tokens: {prefix.renderer}" + ("" if prefix.exact else
                          ", scaled to each request's reported prompt tokens"))
