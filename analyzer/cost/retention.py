"""What-if on a recorded log: retention and warm-up. For the recorded idle gaps between requests, what the shared
prefix costs when the cache has expired (written or computed again) against keeping it warm with keep-warm
requests every N minutes (each ping's own cost counted), under each TTL the provider sells; and from which idle
gap on keeping warm stops paying.

The TTLs are the cache model's (`analyzer.cachemodel.provider_rule(provider).ttls`, from analyzer/rules/cache/):
one definition for `prefix` and `cost`. A provider whose rule states no TTL (DeepSeek: best-effort,
undocumented) gets a verdict only with an assumed `--ttl`, and the result says it was assumed.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from typing import Any

from analyzer.cost.bill import CostReport, RequestCost
from analyzer.cost.text import money

PING_NEW_TOKENS = 1     # a keep-warm request: the shared prefix, one new input token, one output token
PING_OUTPUT_TOKENS = 1


def _minutes(ttl: str) -> float | None:
    unit = ttl[-1:]
    try:
        n = float(ttl[:-1])
    except ValueError:
        return None
    return {"s": n / 60, "m": n, "h": n * 60, "d": n * 1440}.get(unit)


@dataclass
class Option:
    ttl: str
    ttl_min: float
    assumed: bool
    warm_every_min: float
    gaps_over_ttl: int = 0
    cold: float = 0.0            # the shared prefixes after those gaps, written/computed again
    warm: float = 0.0            # the same prefixes read warm, plus the keep-warm pings
    pings: int = 0
    cache_cost: float = 0.0      # every request's prompt under this TTL with no keep-warm
    break_even_min: float | None = None
    median_prefix: int = 0
    gaps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def pays(self) -> bool:
        return self.warm < self.cold

    def as_json(self) -> dict[str, Any]:
        return {"ttl": self.ttl, "ttl_minutes": self.ttl_min, "assumed": self.assumed,
                "warm_every_minutes": self.warm_every_min, "gaps_over_ttl": self.gaps_over_ttl,
                "cold": self.cold, "kept_warm": self.warm, "pings": self.pings, "keep_warm_pays": self.pays,
                "stops_paying_from_gap_minutes": self.break_even_min, "median_shared_prefix_tokens":
                    self.median_prefix, "prompt_cost_without_keep_warm": self.cache_cost, "gaps": self.gaps}


@dataclass
class RetentionWhatIf:
    provider: str
    options: list[Option]
    note: str | None
    ping: str
    ttl_source: str

    def as_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "options": [o.as_json() for o in self.options], "note": self.note,
                "ping": self.ping, "ttl_source": self.ttl_source}


def cacheable(provider: str, model: str, shared: int) -> int:
    """The part of a shared prefix the provider's cache rule can hold: nothing below its minimum for the model,
    whole steps of its granularity above it (the cache model's rule, not a copy)."""
    from analyzer.cachemodel import all_rules

    rule = all_rules().get(provider)
    if rule is None:
        return shared
    if shared < rule.min_prefix_for(model):
        return 0
    return shared // rule.granularity * rule.granularity


def cache_ttls(provider: str) -> tuple[list[tuple[str, float, bool]], str]:
    """([(name, minutes, assumed)], where they come from): the cache model's TTLs of the provider's rule —
    named lifetimes ("5m", "1h") where it sells several, else its idle expiry."""
    from analyzer.cachemodel import all_rules

    rule = all_rules().get(provider)
    if rule is None:
        return [], f"no cache rule for {provider} in analyzer/rules/cache/"
    named = [(k, m, False) for k, v in rule.ttls.items() if (m := _minutes(k)) is not None and v > 0]
    if not named and rule.ttls.get("idle"):
        named = [("idle", rule.ttls["idle"] / 60, False)]
    return named, f"cache rule {rule.name}: {rule.cite}"


def _at(r: RequestCost) -> _dt.datetime:
    return _dt.datetime.fromisoformat(r.started_at.replace("Z", "+00:00"))


def _shared(prefix: Any) -> dict[int, int]:
    """Row → tokens this request shares with the request before it (the prefix report's tokens)."""
    tokens = {r.row: r.prompt_tokens for r in prefix.requests}
    out = {}
    for r in prefix.requests:
        if r.baseline_row is None:
            continue
        if r.token_index is not None:
            out[r.row] = r.token_index
        else:   # identical: the whole baseline
            out[r.row] = min(tokens.get(r.baseline_row, 0), r.prompt_tokens)
    return out


def retention_whatif(report: CostReport, prefix: Any, *, warm_every_min: float | None = None,
                     ttl_min: float | None = None) -> RetentionWhatIf:
    reqs = report.requests
    est = {r.row: r.prompt_tokens for r in prefix.requests}
    shared_est = _shared(prefix)
    ttls, source = cache_ttls(report.provider)
    note = None
    if ttl_min is not None:
        ttls = [(f"{ttl_min:g}m", ttl_min, not ttls)] if not ttls else \
            [t for t in ttls if t[1] == ttl_min] or [(f"{ttl_min:g}m", ttl_min, True)]
    if not ttls:
        note = (f"the cache model states no TTL for {report.provider} ({source}): pass --ttl MIN to assume one")
    ping = (f"a keep-warm request re-sends the shared prefix with {PING_NEW_TOKENS} new input token and "
            f"{PING_OUTPUT_TOKENS} output token")
    options = []
    for name, minutes, assumed in ttls:
        every = min(warm_every_min or minutes * 0.9, minutes)
        opt = Option(name, minutes, assumed, every)
        prefixes = []
        for prev, cur in zip(reqs, reqs[1:], strict=False):
            r, q = cur.quote.rates, cur.quote
            shared = shared_est.get(cur.row, 0)
            if est.get(cur.row):
                shared = round(shared * cur.buckets.prompt / est[cur.row])
            shared = cacheable(report.provider, cur.model, min(shared, cur.buckets.prompt))
            prefixes.append(shared)
            cold_rate, _why = r.write_rate(name) if r.cache_write else (r.uncached_input, "")
            gap = (_at(cur) - _at(prev)).total_seconds() / 60
            new = cur.buckets.prompt - shared
            if gap <= minutes:
                opt.cache_cost += (shared * r.cache_read + new * cold_rate) / q.per_tokens
                continue
            opt.cache_cost += cur.buckets.prompt * cold_rate / q.per_tokens
            pings = max(0, math.ceil(gap / every) - 1)
            ping_cost = (shared * r.cache_read + PING_NEW_TOKENS * cold_rate + PING_OUTPUT_TOKENS * r.output) \
                / q.per_tokens
            cold = shared * cold_rate / q.per_tokens
            warm = pings * ping_cost + shared * r.cache_read / q.per_tokens
            opt.gaps_over_ttl += 1
            opt.cold += cold
            opt.warm += warm
            opt.pings += pings
            opt.gaps.append({"row": cur.row, "gap_minutes": round(gap, 2), "shared_tokens": shared,
                             "pings": pings, "cold": cold, "kept_warm": warm})
        if prefixes:
            s = sorted(prefixes)[len(prefixes) // 2]
            opt.median_prefix = s
            r, q = reqs[-1].quote.rates, reqs[-1].quote
            cold_rate = r.write_rate(name)[0] if r.cache_write else r.uncached_input
            ping_cost = s * r.cache_read + PING_NEW_TOKENS * cold_rate + PING_OUTPUT_TOKENS * r.output
            if s and ping_cost > 0:
                k_max = math.ceil(s * (cold_rate - r.cache_read) / ping_cost) - 1   # pings that still pay
                opt.break_even_min = round((k_max + 1) * every, 1) if k_max >= 0 else minutes
        options.append(opt)
    return RetentionWhatIf(report.provider, options, note, ping, source)


def retention_lines(data: dict[str, Any], currency: str) -> list[str]:
    """The what-if as sentences (from its JSON form, so text and --json say the same)."""
    out = ["", "what-if: retention and keep-warm"]
    if data.get("note"):
        out.append(f"  {data['note']}")
    for o in data["options"]:
        said = " (assumed with --ttl)" if o["assumed"] else ""
        head = f"  TTL {o['ttl']}{said}, keep-warm every {o['warm_every_minutes']:g} min:"
        if not o["gaps_over_ttl"]:
            out.append(f"{head} no recorded idle gap is longer than the TTL; keeping warm buys nothing here")
        else:
            verdict = "pays" if o["keep_warm_pays"] else "does not pay"
            out.append(f"{head} {o['gaps_over_ttl']:,} idle gap(s) outlive the cache; recomputing their prefixes "
                       f"costs {money(o['cold'], currency)}, keeping warm {money(o['kept_warm'], currency)} "
                       f"({o['pings']:,} pings): keeping warm {verdict}")
        if o["stops_paying_from_gap_minutes"] is not None:
            out.append(f"    for a {o['median_shared_prefix_tokens']:,}-token shared prefix (the log's median), "
                       f"keeping warm stops paying from an idle gap of {o['stops_paying_from_gap_minutes']:g} min on")
        out.append(f"    the log's prompts under this TTL without keep-warm: "
                   f"{money(o['prompt_cost_without_keep_warm'], currency)}")
    out.append(f"  {data['ping']}; TTLs from the {data['ttl_source']}")
    return out
