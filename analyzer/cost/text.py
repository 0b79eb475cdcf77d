"""The cost report as lines people read: money as people write it ($0.0123), tokens with separators."""

from __future__ import annotations

import math

from analyzer.cost.bill import CostReport
from analyzer.prefix.structure import visible

SYMBOLS = {"USD": "$", "CNY": "¥"}


def money(x: float, currency: str = "USD") -> str:
    """$1,234.56 / $1.23 / $0.0123 / $0.000045: three significant digits below a dollar, cents above."""
    sign, x = ("-" if x < 0 else ""), abs(x)
    symbol = SYMBOLS.get(currency, currency + " ")
    if x == 0:
        return f"{symbol}0"
    if x >= 1:
        return f"{sign}{symbol}{x:,.2f}"
    decimals = max(2, 2 - math.floor(math.log10(x)))
    text = f"{x:.{decimals}f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{sign}{symbol}{whole}.{frac.ljust(2, '0')}"


def tokens(n: int) -> str:
    return f"{n:,} token" + ("" if n == 1 else "s")


def report_lines(rep: CostReport) -> list[str]:
    cur = rep.currency
    out = []
    if rep.log:
        out.append(f"log: {rep.log}")
    out.append(f"provider: {rep.provider} ({rep.provider_why}); model: {rep.model_why}")
    out.append("")
    out.append(f"{'row':>4}  {'started (UTC)':<19} {'period':<8} {'uncached':>9} {'read':>9} {'written':>8} "
               f"{'output':>7} {'cost':>10} {'no cache':>10}  break")
    for r in rep.requests:
        b = r.buckets
        brk = "; ".join(f"{x.where} {x.kind}: −{money(x.lost, cur)}" for x in r.breaks)
        out.append(f"{r.row:>4}  {r.started_at[:19].replace('T', ' '):<19} {(r.quote.period or '–'):<8} "
                   f"{b.uncached:>9,} {b.cache_read:>9,} {b.written:>8,} {b.output:>7,} "
                   f"{money(r.money.total, cur):>10} {money(r.no_cache, cur):>10}  {brk}")
    t = rep.tokens()
    total, nocache = rep.total(), rep.no_cache_total()
    out.append("")
    out.append(f"tokens: {tokens(t['uncached_input'])} uncached, {t['cache_read']:,} read from the cache, "
               f"{t['cache_write']:,} written to it, {t['output']:,} output")
    pct = f" ({(nocache - total) / nocache:.0%})" if nocache else ""
    out.append(f"cost: {money(total, cur)} for {len(rep.requests):,} requests; with no cache {money(nocache, cur)}: "
               f"the cache saved {money(nocache - total, cur)}{pct}")
    series = rep.by_series()
    if len(series) > 1:
        out.append("by series: " + "; ".join(f"{name} {money(v['money'], cur)} for {v['requests']:,} requests "
                                             f"({v['cache_read']:,} of {v['prompt']:,} prompt tokens cached)"
                                             for name, v in series.items()))
        if {"control", "treatment"} <= set(series):
            control, treatment = series["control"], series["treatment"]
            diff = treatment["money"] - control["money"]
            out.append(f"the treatment cost {money(abs(diff), cur)} {'more' if diff >= 0 else 'less'} than the "
                       f"control ({abs(control['cache_read'] - treatment['cache_read']):,} "
                       f"{'fewer' if control['cache_read'] >= treatment['cache_read'] else 'more'} cached tokens)")
    if rep.causes:
        out.append(f"prefix breaks lost {money(rep.lost_total(), cur)}, by cause:")
        for c in rep.causes:
            out.append(f"  {money(c.lost, cur):>10}  {c.breaks:,} break(s), {tokens(c.recomputed)} recomputed — "
                       f"{c.cause} (rows {', '.join(map(str, c.rows[:8]))}{'…' if len(c.rows) > 8 else ''})")
            out.append(f"              was {visible(c.example_old)[:60]!r} → now {visible(c.example_new)[:60]!r}")
    else:
        out.append("prefix breaks: none found between consecutive requests of a series")
    if rep.tokens_note:
        out.append(rep.tokens_note)
    out.append("prices: " + "; ".join(rep.sources()))
    out.extend(f"note: {n}" for n in rep.notes)
    out.extend(f"skipped {s}" for s in rep.skipped[:5])
    if len(rep.skipped) > 5:
        out.append(f"skipped {len(rep.skipped) - 5:,} more rows")
    return out
