"""Read prompt and cached token counts out of whichever usage shape a provider returned, and say which field.

The raw usage stays verbatim in the log; this is only for the summary. Providers disagree: DeepSeek reports
`prompt_cache_hit_tokens` (+ `_miss_`), OpenAI-compatible servers (llama.cpp, vLLM) `prompt_tokens_details.
cached_tokens` inside `prompt_tokens`, Anthropic-style APIs `cache_read_input_tokens` *outside* `input_tokens`,
and llama.cpp also sends `timings.cache_n` / `timings.prompt_n`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Counts:
    prompt: int | None
    cached: int | None
    prompt_field: str | None
    cached_field: str | None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def counts(usage: dict[str, Any] | None, timings: dict[str, Any] | None = None) -> Counts:
    """Prompt tokens and cached tokens, first field found wins (DeepSeek, OpenAI, Anthropic, llama.cpp timings)."""
    u = usage or {}
    t = timings or {}
    raw_details = u.get("prompt_tokens_details")
    details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
    prompt, prompt_field = _int(u.get("prompt_tokens")), "usage.prompt_tokens"
    if _int(u.get("prompt_cache_hit_tokens")) is not None:
        return Counts(prompt, _int(u["prompt_cache_hit_tokens"]), prompt_field, "usage.prompt_cache_hit_tokens")
    if _int(details.get("cached_tokens")) is not None:
        return Counts(prompt, _int(details["cached_tokens"]), prompt_field,
                      "usage.prompt_tokens_details.cached_tokens")
    if _int(u.get("cache_read_input_tokens")) is not None:
        parts = [_int(u.get(k)) or 0 for k in ("input_tokens", "cache_read_input_tokens",
                                                "cache_creation_input_tokens")]
        return Counts(sum(parts), _int(u["cache_read_input_tokens"]),
                      "usage.input_tokens + cache_read_input_tokens + cache_creation_input_tokens",
                      "usage.cache_read_input_tokens")
    if _int(t.get("cache_n")) is not None:
        total = (_int(t.get("cache_n")) or 0) + (_int(t.get("prompt_n")) or 0)
        return Counts(prompt if prompt is not None else total, _int(t["cache_n"]),
                      prompt_field if prompt is not None else "timings.cache_n + timings.prompt_n", "timings.cache_n")
    if prompt is None:
        return Counts(None, None, None, None)
    return Counts(prompt, None, prompt_field, None)
