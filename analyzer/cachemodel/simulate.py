"""Run a cache rule over a whole log: the state when each request arrives, the entry it matches, the tokens
it should find cached. Rejected and broken requests never enter the state (`skipped`).

`simulate(arrivals, rule)` is the one definition `prefix` and `cost` share: a what-if (another TTL, a
keep-warm request) is a changed `Rule` (`dataclasses.replace`) or added arrivals, never a second model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from analyzer.cachemodel.blocks import BlockCache
from analyzer.cachemodel.llamacpp import LlamaCppCache, Settings, settings_from
from analyzer.cachemodel.model import Arrival, Held, Lost, Match, PrefixIndex, Skipped
from analyzer.cachemodel.providers import AnthropicBreakpoints, DeepSeekUnits, OpenAIAutomatic
from analyzer.cachemodel.rules import Rule, provider_rule

HELD_SHOWN = 8
TOGETHER_S = 0.05   # arrivals closer than this are simultaneous as far as a log's clock can tell


class Cache(Protocol):
    fate: dict[int, tuple[str, str]]

    def step(self, a: Arrival) -> tuple[Match, tuple[Held, ...]]: ...


def new_cache(rule: Rule, first: Arrival | None = None, settings: Settings | None = None) -> Cache:
    """An empty cache under `rule` (llama.cpp: with the settings the first row records, else its defaults)."""
    if rule.name == "llama.cpp":
        return LlamaCppCache(rule, settings or settings_from(first.settings if first else None, rule))
    if rule.name == "vllm":
        return BlockCache(rule, capacity=int(rule.params.get("capacity_blocks", 0)))
    if rule.name == "deepseek":
        return DeepSeekUnits(rule)
    if rule.name == "openai":
        return OpenAIAutomatic(rule)
    if rule.name == "anthropic":
        return AnthropicBreakpoints(rule)
    raise ValueError(f"no cache model for rule {rule.name!r}")


def skipped(arrivals: Sequence[Arrival]) -> list[Skipped]:
    """The requests that never reached the cache, with their error."""
    return [Skipped(a.key, a.error or "not a successful exchange") for a in arrivals if not a.ok]


def arrival_order(arrivals: list[Arrival], *, together_s: float = TOGETHER_S) -> list[Arrival]:
    """The order the server took the requests in. A log written as exchanges finish lists concurrent requests
    out of order, so they are sorted by arrival time; requests that arrived within `together_s` of each other
    cannot be told apart by their clock (the proxy forwards each on its own thread), so among them the one
    that got its first token first is taken as served first (the server fills free slots in the order it
    receives requests; a later one waits)."""
    if not arrivals or any(a.at is None for a in arrivals):
        return list(arrivals)
    ordered = sorted(arrivals, key=lambda a: a.at or 0.0)
    out: list[Arrival] = []
    group: list[Arrival] = []
    for a in ordered:
        if group and (a.at or 0.0) - (group[0].at or 0.0) > together_s:
            out += _by_first_token(group)
            group = []
        group.append(a)
    return out + _by_first_token(group)


def _by_first_token(group: list[Arrival]) -> list[Arrival]:
    if len(group) < 2 or any(a.first_token is None for a in group):
        return group
    return sorted(group, key=lambda a: (a.at or 0.0) + (a.first_token or 0.0))


def simulate(arrivals: Sequence[Arrival], rule: Rule | str, *, settings: Settings | None = None) -> list[Match]:
    """One `Match` per successful arrival, in the order the server took them (`arrival_order`). An engine's
    state is emptied when the rows say the server changed (another `server_id`: a restart)."""
    rule = provider_rule(rule) if isinstance(rule, str) else rule
    ok = arrival_order([a for a in arrivals if a.ok])
    cache = new_cache(rule, ok[0] if ok else None, settings)
    out: list[Match] = []
    earlier: list[Arrival] = []
    index = PrefixIndex()
    server: str | None = None
    for a in ok:
        if rule.kind == "engine" and a.server_id and server and a.server_id != server:
            why = f"the server changed before row {a.key} ({server} → {a.server_id}): a restart empties it"
            if isinstance(cache, LlamaCppCache):
                cache.restart(why)
                cache = LlamaCppCache(rule, settings or settings_from(a.settings, rule), fate=cache.fate)
            else:
                fate = cache.fate
                for e in earlier:
                    fate.setdefault(e.key, ("restart", why))
                cache = new_cache(rule, a, settings)
                cache.fate.update(fate)
        server = a.server_id or server
        match, _held = cache.step(a)
        best_key, best = index.longest(a.tokens)
        lost = list(match.lost)
        if best_key is not None and best > match.shared and best_key != match.entry \
                and not any(x.key == best_key for x in lost) and best_key in cache.fate:
            kind, detail = cache.fate[best_key]
            lost.append(Lost(best_key, best, kind, detail))
        held = match.held
        if rule.kind != "engine":   # a provider holds every account's prefixes: show the ones this request meets
            held = tuple(sorted((h for h in held if h.shared > 0), key=lambda h: -h.shared)[:HELD_SHOWN])
        out.append(dataclasses.replace(match, best_key=best_key, best_shared=best, lost=tuple(lost), held=held))
        earlier.append(a)
        index.add(a.key, a.tokens)
    return out
