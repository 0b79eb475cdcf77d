"""A response's tokens in the four billing buckets: uncached input, cache read, cache write (by TTL), output.

Read through `analyzer.requests.read_usage` when that function exists (the one reader of every usage shape);
until then through `_read_usage` below, which fills the same `analyzer.requests.Usage` dataclass so nothing
else changes when the shared reader lands. Shapes: DeepSeek (`prompt_cache_hit_tokens`/`_miss_`), OpenAI chat
(`prompt_tokens_details.cached_tokens` inside `prompt_tokens`) and Responses (`input_tokens_details`),
Anthropic (`input_tokens` is the uncached part; `cache_read_input_tokens`, `cache_creation_input_tokens` and
its per-TTL split beside it), Gemini (`cachedContentTokenCount` inside `promptTokenCount`; thinking tokens are
billed as output), llama.cpp (`timings.cache_n`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.requests import Usage


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


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _read_usage(usage: dict[str, Any], timings: dict[str, Any] | None = None) -> Usage:
    """Until `analyzer.requests.read_usage` lands: the buckets of one raw usage object."""
    u = usage
    out = _int(u.get("completion_tokens"))
    out = out if out is not None else _int(u.get("output_tokens"))
    if _int(u.get("prompt_cache_hit_tokens")) is not None:          # DeepSeek
        hit, miss = _int(u["prompt_cache_hit_tokens"]) or 0, _int(u.get("prompt_cache_miss_tokens"))
        prompt = _int(u.get("prompt_tokens"))
        miss = miss if miss is not None else (prompt - hit if prompt is not None else None)
        return Usage(prompt=prompt, cached=hit, uncached=miss, output=out, prompt_field="usage.prompt_tokens",
                     cached_field="usage.prompt_cache_hit_tokens", output_field="usage.completion_tokens")
    if "cache_read_input_tokens" in u or "cache_creation_input_tokens" in u:   # Anthropic
        read = _int(u.get("cache_read_input_tokens")) or 0
        write = _int(u.get("cache_creation_input_tokens")) or 0
        split = _dict(u.get("cache_creation"))
        by_ttl = tuple((ttl, n) for ttl, key in (("5m", "ephemeral_5m_input_tokens"),
                                                  ("1h", "ephemeral_1h_input_tokens"))
                       if (n := _int(split.get(key))))
        uncached = _int(u.get("input_tokens")) or 0
        return Usage(prompt=uncached + read + write, cached=read, cache_write=write, cache_write_by_ttl=by_ttl,
                     uncached=uncached, output=out, prompt_field="usage.input_tokens + cache_*_input_tokens",
                     cached_field="usage.cache_read_input_tokens", output_field="usage.output_tokens")
    if "promptTokenCount" in u or "prompt_token_count" in u:                   # Gemini
        prompt = _int(u.get("promptTokenCount", u.get("prompt_token_count"))) or 0
        cached = _int(u.get("cachedContentTokenCount", u.get("cached_content_token_count"))) or 0
        gen = (_int(u.get("candidatesTokenCount", u.get("candidates_token_count"))) or 0) + \
              (_int(u.get("thoughtsTokenCount", u.get("thoughts_token_count"))) or 0)
        return Usage(prompt=prompt, cached=cached, uncached=prompt - cached, output=gen,
                     prompt_field="usageMetadata.promptTokenCount",
                     cached_field="usageMetadata.cachedContentTokenCount",
                     output_field="usageMetadata.candidatesTokenCount + thoughtsTokenCount")
    shapes = (("prompt_tokens", "prompt_tokens_details"), ("input_tokens", "input_tokens_details"))
    for total_key, details_key in shapes:
        if _int(u.get(total_key)) is not None:                                 # OpenAI chat / Responses, llama.cpp
            total = _int(u[total_key]) or 0
            details = _dict(u.get(details_key))
            reused = _int(details.get("cached_tokens"))
            field = f"usage.{details_key}.cached_tokens"
            if reused is None and timings and _int(timings.get("cache_n")) is not None:
                reused, field = _int(timings["cache_n"]), "timings.cache_n"
            written = _int(details.get("cache_write_tokens"))
            return Usage(prompt=total, cached=reused, cache_write=written,
                         uncached=None if reused is None else total - reused - (written or 0), output=out,
                         prompt_field=f"usage.{total_key}", cached_field=None if reused is None else field,
                         output_field="usage.completion_tokens" if "completion_tokens" in u else "usage.output_tokens")
    return Usage()


def read_usage(usage: dict[str, Any], timings: dict[str, Any] | None = None) -> Usage:
    """The shared reader when it exists, else the one above."""
    import analyzer.requests as requests

    shared = getattr(requests, "read_usage", None)
    if callable(shared):
        result = shared(usage)
        if isinstance(result, Usage):
            return result
    return _read_usage(usage, timings)


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
