"""What one factor of an experiment costs a new session: the treatment session's first request that breaks
against the control's at the same turn (the one-factor comparison the app experiment's prefix report makes,
`against="control"`), priced at a provider's published prices — DeepSeek's by default, the research route's
service. A value changed inside a session (`from_turn`) is priced the same way, at the turn it changes.

Why the first request only: a value that differs between sessions (a directory, an environment variable, a
file) makes a new session recompute its prompt from where the value enters it, tokens a session with a stable
value would read from the cache the previous session left; later turns of the same session reuse that
session's own prefix. So "per new session" is that one request's recomputed tokens × (the rate they were billed
at − the cache-read rate), at the request's own recorded time (DeepSeek's peak and off-peak hours).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analyzer.cost.bill import DEFAULT_PROVIDER, add_breaks, bill
from analyzer.cost.prices import PriceBook, load_book

if TYPE_CHECKING:
    from analyzer.prefix.run import PrefixReport, RequestReport


@dataclass(frozen=True)
class SessionCost:
    series: str
    value: Any
    row: int
    baseline_row: int | None
    tokens: int                 # recomputed: a new session with the control's value would read them
    prompt_tokens: int          # the request's prompt, as the server reported it
    reported_cached: int        # what the server read from its cache for this request
    money: float
    currency: str
    where: str | None           # the request part the value changed (None: no break)
    new: str | None
    attribution: str | None
    family: str
    period: str | None
    source: str                 # the price's source and the date it was checked
    model_why: str
    estimated: bool             # break tokens estimated (no engine rendered the requests), scaled

    def as_json(self) -> dict[str, Any]:
        return {"series": self.series, "value": self.value, "row": self.row, "baseline_row": self.baseline_row,
                "tokens": self.tokens, "prompt_tokens": self.prompt_tokens, "reported_cached": self.reported_cached,
                "money": self.money, "currency": self.currency, "where": self.where, "new": self.new,
                "attribution": self.attribution, "family": self.family, "period": self.period,
                "price_source": self.source, "model_why": self.model_why, "estimated": self.estimated}


def new_session_costs(rows: list[dict[str, Any]], prefix: PrefixReport, *, provider: str = DEFAULT_PROVIDER,
                      model: str | None = None, book: PriceBook | None = None) -> list[SessionCost]:
    """Per treatment series: its first request's break against the control request at the same index, priced.
    `prefix`: the prefix report of `rows` made with `against="control"`."""
    report = bill(rows, book or load_book(), provider=provider, model=model)
    add_breaks(report, prefix)
    by_row = {r.row: r for r in report.requests}
    firsts: dict[str, RequestReport] = {}
    for rep in prefix.requests:   # the first request of each treatment series that breaks, else its first
        if rep.series == "control" or rep.row not in by_row:
            continue
        if rep.series not in firsts or (not by_row[firsts[rep.series].row].breaks and by_row[rep.row].breaks):
            firsts[rep.series] = rep
    out = []
    for series, rep in firsts.items():
        cost = by_row[rep.row]
        brk = cost.breaks[0] if cost.breaks else None
        value = rows[rep.row - 1].get("value")
        out.append(SessionCost(series, value, rep.row, rep.baseline_row, brk.recomputed if brk else 0,
                               cost.buckets.prompt, cost.buckets.cache_read, brk.lost if brk else 0.0,
                               report.currency, brk.where if brk else None, brk.new if brk else None,
                               brk.attribution if brk else None, cost.quote.family, cost.quote.period,
                               cost.quote.cite(), report.model_why, not prefix.exact))
    return out


def session_cost_line(c: dict[str, Any], *, finding: str | None = None, from_turn: int | None = None) -> str:
    """One line a user who ran the experiment reads: what the factor costs each new session (or each change
    inside a session, `from_turn`), and where the price is from."""
    from analyzer.cost.text import money

    what = f"this finding ({finding})" if finding else f"the {c['series']} value"
    per = "per new session" if from_turn is None else f"each time it changes inside a session (turn {from_turn})"
    period = f", {c['period'].replace('_', '-')}" if c.get("period") else ""
    price = f"at {c['family']} prices{period}: {c['price_source']}"
    if not c["tokens"]:
        return (f"{what} costs nothing {per} here: {c['series']} row {c['row']} shares the control's prompt up to "
                f"its end ({price})")
    est = ", estimated" if c["estimated"] else ""
    return (f"{what} costs {c['tokens']:,} tokens, {money(c['money'], c['currency'])} {per} {price} — "
            f"{c['series']} row {c['row']} recomputes them from {c['where']} on (vs control row {c['baseline_row']}"
            f"{est}; the server read {c['reported_cached']:,} of its {c['prompt_tokens']:,} prompt tokens from the "
            "cache)")
