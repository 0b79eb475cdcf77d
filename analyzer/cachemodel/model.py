"""What the cache model reads (`Arrival`: one request as the server saw it) and what it says (`Match`).

Why its own types: the cache model runs on token ids and times alone, so `prefix`, `cost` and what-ifs
(another TTL, a keep-warm request) feed it the same way, whichever shape or renderer made the tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Marker:
    """A cache breakpoint as a token position: the prompt up to `end` tokens is cached for `ttl`."""

    end: int
    ttl: str | None = None          # "5m", "1h"; None: the rule's default


@dataclass(frozen=True)
class Arrival:
    """One request in arrival order. `ok` False (a 4xx/5xx, a broken exchange): it never enters the cache.

    `at` and `duration` are seconds (any origin, the same for the whole log); None when unknown, in which
    case requests are taken as one after another and TTLs as not expired. `block_ends` are the token
    offsets where each content block ends (Anthropic's lookback counts blocks); `settings` the server's
    settings as recorded in the row (llama.cpp)."""

    key: int                               # the row (1-based line of the log) or any id the caller uses
    tokens: tuple[int, ...]
    at: float | None = None
    duration: float | None = None
    ok: bool = True
    error: str | None = None
    output_tokens: int | None = None
    model: str | None = None
    cache_key: str | None = None           # prompt_cache_key (OpenAI routing)
    markers: tuple[Marker, ...] = ()       # cache_control breakpoints as token positions (Anthropic)
    automatic: bool = False                # a top-level cache_control (Anthropic's automatic mode)
    block_ends: tuple[int, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)
    server_id: str | None = None           # what identifies the server process (a restart changes it)
    generated: tuple[int, ...] | None = None   # the answer's token ids, when known (an engine's fixed answer)
    first_token: float | None = None       # seconds from `at` to the first answer token (TTFT), when known
    cache_prompt: bool = True              # llama.cpp: the request's `cache_prompt` (false: nothing reused)
    slot_id: int | None = None             # llama.cpp: the slot the request asked for (`id_slot`)


@dataclass(frozen=True)
class Held:
    """One entry the cache holds when a request arrives: whose prompt, how many tokens, where."""

    key: int
    tokens: int
    where: str                             # "slot 0", "prompt cache", "blocks", "unit", "breakpoint"
    shared: int = 0                        # common prefix with the arriving request

    def describe(self) -> str:
        return f"{self.where}: row {self.key} ({self.tokens:,} tokens, {self.shared:,} shared)"


@dataclass(frozen=True)
class Lost:
    """An entry that would have given more but was gone: evicted, expired, cleared by a restart."""

    key: int
    shared: int
    why: str                               # "eviction" | "ttl" | "restart" | "other-slot" | "routing"
    detail: str


@dataclass(frozen=True)
class Match:
    """The cache model's answer for one request."""

    key: int
    rule: str
    cached: int                            # predicted cached (read) tokens
    entry: int | None                      # the request whose cached state this one matched (None: nothing)
    shared: int                            # tokens shared with that entry before the rule's floor and steps
    basis: str                             # how the number was reached, in a sentence
    written: int = 0                       # predicted tokens written to the cache (providers that report it)
    written_by_ttl: tuple[tuple[str, int], ...] = ()
    held: tuple[Held, ...] = ()            # the cache's state on arrival
    lost: tuple[Lost, ...] = ()            # longer matches that were gone, and why
    floor: str | None = None               # "minimum" | "granularity" when the rule cut the shared prefix
    slot: int | None = None                # llama.cpp: the slot the request ran on
    best_key: int | None = None            # the earlier request sharing the longest prefix (any state)
    best_shared: int = 0
    assumed: tuple[str, ...] = ()          # settings taken as defaults

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "rule": self.rule, "cached": self.cached, "entry": self.entry,
                "shared": self.shared, "basis": self.basis, "written": self.written,
                "written_by_ttl": [list(p) for p in self.written_by_ttl],
                "held": [h.describe() for h in self.held],
                "lost": [{"key": x.key, "shared": x.shared, "why": x.why, "detail": x.detail} for x in self.lost],
                "floor": self.floor, "slot": self.slot, "best_key": self.best_key, "best_shared": self.best_shared,
                "assumed": list(self.assumed)}


@dataclass(frozen=True)
class Skipped:
    """A request the cache never saw as a prompt: rejected or broken."""

    key: int
    error: str


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Number of leading tokens `a` and `b` share. Slices are compared in C, growing then halving, so the
    cost follows the shared length rather than the prompt's (a whole log is compared pairwise)."""
    a, b = tuple(a), tuple(b)
    n = min(len(a), len(b))
    lo, step = 0, 64
    while lo < n:                      # a[:lo] == b[:lo]; grow until a slice differs
        hi = min(n, lo + step)
        if a[lo:hi] != b[lo:hi]:
            break
        lo, step = hi, step * 2
    else:
        return n
    while hi - lo > 1:                 # a[:lo] equal, a[:hi] not: halve
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class PrefixIndex:
    """Every earlier prompt in a trie of fixed-size token chunks, so "which earlier request shares the longest
    prefix with this one" costs one walk down, not a comparison with each of them (logs of hundreds of long
    agent prompts). Ties go to the latest request, the one a cache would still hold."""

    CHUNK = 64

    def __init__(self) -> None:
        self._root: dict[tuple[int, ...], list[Any]] = {}   # chunk → [children, latest key through it]

    def add(self, key: int, tokens: Sequence[int]) -> None:
        node, t = self._root, tuple(tokens)
        for i in range(0, len(t), self.CHUNK):
            chunk = t[i:i + self.CHUNK]
            entry = node.get(chunk)
            if entry is None:
                entry = node[chunk] = [{}, key]
            else:
                entry[1] = max(entry[1], key)
            node = entry[0]

    def longest(self, tokens: Sequence[int]) -> tuple[int | None, int]:
        """(key, tokens shared) of the earlier prompt sharing the longest prefix; (None, 0) when none shares."""
        node, t = self._root, tuple(tokens)
        best_key: int | None = None
        best, i = 0, 0
        while node:
            chunk = t[i:i + self.CHUNK]
            entry = node.get(chunk) if len(chunk) == self.CHUNK else None
            if entry is not None:
                best_key, best, node, i = entry[1], i + self.CHUNK, entry[0], i + self.CHUNK
                continue
            for other, (_children, key) in node.items():
                n = common_prefix(other, chunk)
                if n > 0 and (i + n > best or (i + n == best and best_key is not None and key > best_key)):
                    best_key, best = key, i + n
            break
        return best_key, best
