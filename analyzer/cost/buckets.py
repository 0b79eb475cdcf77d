"""A response's tokens in the four billing buckets: uncached input, cache read, cache write (by TTL), output.

Read through `analyzer.requests.read_usage`, the one reader of every usage shape (DeepSeek, chat, Anthropic
with its per-TTL write split, Responses, Gemini's `usageMetadata`, llama.cpp timings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.requests import Usage, read_usage


@dataclass(frozen=True)
class Buckets:
    uncached: int
    cache_read: int
    cache_write: tuple[tuple[str | None, int], ...]   # (TTL or None for the provider default, tokens)
    output: int
    fields: str                                         # which usage fields the numbers came from

    @property
    def written(self) -> int:
        return sum(n for _t, n in self.cache_write)

    @property
    def prompt(self) -> int:
        return self.uncached + self.cache_read + self.written

    def as_json(self) -> dict[str, Any]:
        return {"uncached_input": self.uncached, "cache_read": self.cache_read,
                "cache_write": {t or "default": n for t, n in self.cache_write}, "output": self.output,
                "fields": self.fields}


def buckets(usage: Usage) -> Buckets | None:
    """The billing buckets, or None when the usage says nothing about the prompt."""
    if usage.prompt is None and usage.uncached is None:
        return None
    read = usage.cached or 0
    write_total = usage.cache_write or 0
    by_ttl: list[tuple[str | None, int]] = list(usage.cache_write_by_ttl)
    rest = write_total - sum(n for _t, n in by_ttl)
    if rest > 0:
        by_ttl.append((None, rest))
    uncached = usage.uncached if usage.uncached is not None else max(0, (usage.prompt or 0) - read - write_total)
    fields = ", ".join(f for f in (usage.prompt_field, usage.cached_field, usage.output_field) if f)
    return Buckets(uncached, read, tuple(by_ttl), usage.output or 0, fields)


def row_buckets(row: dict[str, Any]) -> Buckets | None:
    """The buckets of one log row (`usage`, and llama.cpp `timings` when the usage has no cached count)."""
    usage = row.get("usage")
    if not isinstance(usage, dict):
        return None
    timings = row.get("timings") if isinstance(row.get("timings"), dict) else None
    return buckets(read_usage(usage, timings))
