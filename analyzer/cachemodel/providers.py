"""Hosted providers' prompt caches: DeepSeek's prefix units, OpenAI's automatic cache, Anthropic's breakpoints.

Each class keeps what the provider holds for one account as the log goes by, and each method cites the page
its rule came from (the rule files hold the numbers, the sources and the date they were checked).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.cachemodel.model import Arrival, Held, Lost, Marker, Match, common_prefix
from analyzer.cachemodel.rules import Rule


def floor_to(n: int, minimum: int, step: int) -> int:
    """`n` tokens as a provider reports them: 0 below `minimum`, else rounded down to `step` above it."""
    if n < minimum or n <= 0:
        return 0
    base = minimum if minimum > 0 else 0
    return base + (n - base) // step * step


def _floor_name(shared: int, cached: int, minimum: int) -> str | None:
    if shared > 0 and cached == 0 and shared < minimum:
        return "minimum"
    if cached < shared:
        return "granularity"
    return None


@dataclass
class _Entry:
    key: int
    tokens: tuple[int, ...]
    written: float
    used: float
    ttl: float                      # seconds; 0: no expiry modelled
    route: str | None = None


@dataclass
class DeepSeekUnits:
    """https://api-docs.deepseek.com/guides/kv_cache: a hit needs a *full* match of a cache prefix unit. Units
    are stored at the end of each request's input (and output — not in the log), at a common prefix the
    system detects across requests, and at fixed intervals (length undocumented); counted in 64-token
    storage units (an earlier version of the page)."""

    rule: Rule
    units: dict[tuple[int, ...], _Entry] = field(default_factory=dict)    # one entry per distinct prefix
    fate: dict[int, tuple[str, str]] = field(default_factory=dict)

    def step(self, a: Arrival) -> tuple[Match, tuple[Held, ...]]:
        now = a.at or 0.0
        best, entry = 0, None
        held, detected = [], []
        for u in self.units.values():
            shared = common_prefix(u.tokens, a.tokens)
            held.append(Held(u.key, len(u.tokens), "unit", shared))
            if shared == len(u.tokens) and len(u.tokens) > best:
                best, entry = len(u.tokens), u.key
            # common-prefix detection: the prefix this request shares with a unit becomes a unit of its own
            if 0 < shared < len(u.tokens) and shared < len(a.tokens):
                detected.append(_Entry(u.key, a.tokens[:shared], now, now, 0.0))
        for d in detected:
            self.units.setdefault(d.tokens, d)
        self.units.setdefault(a.tokens, _Entry(a.key, a.tokens, now, now, 0.0))
        minimum, step = self.rule.min_prefix, self.rule.granularity
        cached = best // step * step if best >= minimum else 0
        basis = (f"the longest whole cache prefix unit it starts with is {best:,} tokens (row {entry}), "
                 f"{cached:,} in {step}-token storage units" if entry is not None else
                 "it starts with no whole cache prefix unit of an earlier request")
        return Match(key=a.key, rule=self.rule.name, cached=cached, entry=entry, shared=best, basis=basis,
                     held=tuple(held), floor=_floor_name(best, cached, minimum)), tuple(held)


@dataclass
class OpenAIAutomatic:
    """https://developers.openai.com/api/docs/guides/prompt-caching: prompts of 1,024 tokens or more; a request
    goes to a machine chosen by a hash of its first tokens combined with `prompt_cache_key`, which holds the
    prefixes it processed recently; hits count in 128-token steps; an entry lives 5–10 minutes idle, at
    most an hour."""

    rule: Rule
    entries: list[_Entry] = field(default_factory=list)
    fate: dict[int, tuple[str, str]] = field(default_factory=dict)
    recent: dict[str, list[float]] = field(default_factory=dict)   # route → arrival times in the last minute

    def _route(self, a: Arrival) -> str:
        n = int(self.rule.params.get("routing_tokens", 256))
        return f"{a.cache_key}|{hash(a.tokens[:n])}"

    def step(self, a: Arrival) -> tuple[Match, tuple[Held, ...]]:
        now = a.at or 0.0
        idle = self.rule.ttls.get("idle", 0)
        longest = self.rule.ttls.get("max", 0)
        live, lost = [], []
        route = self._route(a)
        for e in self.entries:
            gone = None
            if idle and now - e.used > idle:
                gone = f"idle {now - e.used:,.0f} s, over the {idle // 60}-minute minimum retention"
            elif longest and now - e.written > longest:
                gone = f"written {now - e.written:,.0f} s before, over the one-hour maximum"
            if gone:
                shared = common_prefix(e.tokens, a.tokens)
                if shared:
                    lost.append(Lost(e.key, shared, "ttl", gone))
                self.fate.setdefault(e.key, ("ttl", gone))
            else:
                live.append(e)
        self.entries = live
        held, best, entry, hit_entry = [], 0, None, None
        for e in live:
            shared = common_prefix(e.tokens, a.tokens)
            held.append(Held(e.key, len(e.tokens), "prefix", shared))
            if e.route != route:
                if shared > best:
                    lost.append(Lost(e.key, shared, "routing", "another prompt_cache_key or first-token hash: "
                                                                "routed to another machine"))
                continue
            if shared > best:
                best, entry, hit_entry = shared, e.key, e
        minimum = self.rule.min_prefix_for(a.model)
        cached = floor_to(min(best, len(a.tokens)), minimum, self.rule.granularity)
        if hit_entry is not None and cached:
            hit_entry.used = now
        times = [t for t in self.recent.get(route, []) if now - t < 60.0] + [now]
        self.recent[route] = times
        limit = int(self.rule.params.get("overflow_per_minute", 0))
        if limit and len(times) > limit and entry is not None and cached:
            lost.append(Lost(entry, best, "routing", f"{len(times)} requests on this prefix and key in a minute, over "
                                                     f"about {limit}: some are routed to machines without it"))
        if len(a.tokens) >= minimum:
            self.entries.append(_Entry(a.key, a.tokens, now, now, float(idle), route))
        basis = (f"{best:,} tokens shared with row {entry} on the same route, {cached:,} counted "
                 f"({minimum:,}-token minimum, {self.rule.granularity}-token steps)" if entry is not None else
                 "no live prefix on its route")
        floor = "minimum" if len(a.tokens) < minimum else _floor_name(best, cached, minimum)
        if len(a.tokens) < minimum:
            basis = f"the prompt ({len(a.tokens):,} tokens) is under the {minimum:,}-token minimum: never cached"
        return Match(key=a.key, rule=self.rule.name, cached=cached, entry=entry, shared=best,
                     basis=basis, held=tuple(held), lost=tuple(lost), floor=floor), tuple(held)


@dataclass
class AnthropicBreakpoints:
    """https://platform.claude.com/docs/en/build-with-claude/prompt-caching: the prompt (tools, system,
    messages) is cached up to each `cache_control` breakpoint (automatic mode: the last block); a request
    reads the longest cached prefix found at a breakpoint or at most 20 blocks before it, then writes the
    rest up to its last breakpoint; a prefix under the model's minimum is never cached; entries live 5
    minutes (or 1 hour), refreshed each time they are read."""

    rule: Rule
    entries: dict[tuple[int, ...], _Entry] = field(default_factory=dict)
    fate: dict[int, tuple[str, str]] = field(default_factory=dict)

    def _ttl(self, name: str | None) -> tuple[str, float]:
        name = name or str(self.rule.params.get("default_ttl", "5m"))
        return name, float(self.rule.ttls.get(name, self.rule.ttls.get("5m", 300)))

    def step(self, a: Arrival) -> tuple[Match, tuple[Held, ...]]:
        now = a.at or 0.0
        lost = []
        for k, e in list(self.entries.items()):
            if e.ttl and now - e.used > e.ttl:
                del self.entries[k]
                shared = common_prefix(e.tokens, a.tokens)
                why = f"not read for {now - e.used:,.0f} s, over its {e.ttl / 60:g}-minute TTL"
                if shared:
                    lost.append(Lost(e.key, shared, "ttl", why))
                self.fate.setdefault(e.key, ("ttl", why))
        markers = list(a.markers)
        if a.automatic and a.block_ends:   # automatic mode: a breakpoint on the last cacheable block
            markers.append(Marker(a.block_ends[-1]))
        held = tuple(Held(e.key, len(e.tokens), "breakpoint", common_prefix(e.tokens, a.tokens))
                     for e in self.entries.values())
        lookback = int(self.rule.params.get("lookback_blocks", 20))
        minimum = self.rule.min_prefix_for(a.model)
        ends = sorted(set(a.block_ends) | {m.end for m in markers})
        read, entry = 0, None
        hit: _Entry | None = None
        for m in sorted(markers, key=lambda m: -m.end):
            candidates = [p for p in ends if p <= m.end][-(lookback + 1):]
            for pos in reversed(candidates):
                found = self.entries.get(a.tokens[:pos])
                if found is not None:
                    if pos > read:
                        read, entry, hit = pos, found.key, found
                    break
            if read:
                break
        if hit is not None:
            hit.used = now
        written, by_ttl = 0, []
        last = max((m.end for m in markers), default=0)
        for m in sorted(markers, key=lambda m: m.end):
            name, ttl = self._ttl(m.ttl)
            if m.end < minimum or m.end <= read:
                continue
            key = a.tokens[:m.end]
            if key not in self.entries:
                self.entries[key] = _Entry(a.key, key, now, now, ttl)
            else:
                self.entries[key].used = now
        if last >= minimum and last > read:
            written = last - read
            by_ttl = [(self._ttl(max(markers, key=lambda m: m.end).ttl)[0], written)]
        best_shared = max((common_prefix(e.tokens, a.tokens) for e in self.entries.values() if e.key != a.key),
                          default=0)
        if not markers:
            basis = "no cache_control breakpoint: nothing is read or written"
        elif entry is not None:
            basis = (f"read {read:,} tokens cached by row {entry} (at a breakpoint or within {lookback} blocks "
                     f"before one); wrote {written:,}")
        elif last < minimum:
            basis = f"the prompt up to its last breakpoint ({last:,} tokens) is under the {minimum:,}-token minimum"
        else:
            basis = f"no cached prefix at its breakpoints or {lookback} blocks before them; wrote {written:,}"
        floor = "minimum" if markers and last < minimum and best_shared > 0 else None
        return Match(key=a.key, rule=self.rule.name, cached=read, entry=entry, shared=read, basis=basis,
                     written=written, written_by_ttl=tuple(by_ttl), held=held, lost=tuple(lost),
                     floor=floor), held
