"""Token usage of every response shape → `Usage`, each number with the field it came from.

Providers disagree on what "input" means, so each reader says which buckets it fills:

- DeepSeek: `prompt_cache_hit_tokens` + `prompt_cache_miss_tokens` (= `prompt_tokens`).
- OpenAI chat completions (also llama.cpp, vLLM): `prompt_tokens` *includes* `prompt_tokens_details.cached_tokens`.
- OpenAI Responses: `input_tokens` includes `input_tokens_details.cached_tokens`; `output_tokens`.
- Anthropic Messages: `input_tokens` is only the *uncached* part; the prompt is `input_tokens` +
  `cache_read_input_tokens` + `cache_creation_input_tokens` (split by TTL in `cache_creation.ephemeral_5m/1h…`).
- Gemini `usageMetadata` (camelCase over REST, snake_case in the SDKs): `promptTokenCount` *includes*
  `cachedContentTokenCount`; thinking (`thoughtsTokenCount`) is billed as output beside `candidatesTokenCount`.
- llama.cpp `timings`: `cache_n` tokens reused, `prompt_n` evaluated.

A field that is absent stays None: "not reported" is never 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analyzer.requests.model import Usage


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def read_usage(usage: Mapping[str, Any] | None, timings: Mapping[str, Any] | None = None) -> Usage:
    """The buckets of one response's usage (and llama.cpp timings); the first shape whose cache field is present
    decides (DeepSeek, chat, Anthropic, Responses), then Gemini's prompt count, then timings."""
    u = _dict(usage)
    t = _dict(timings)
    for reader in (_deepseek, _chat, _anthropic, _responses, _gemini):
        found = reader(u)
        if found is not None:
            return found
    return _timings_or_plain(u, t)


def _deepseek(u: Mapping[str, Any]) -> Usage | None:
    hit = _int(u.get("prompt_cache_hit_tokens"))
    if hit is None:
        return None
    miss = _int(u.get("prompt_cache_miss_tokens"))
    prompt = _int(u.get("prompt_tokens"))
    prompt_field = "usage.prompt_tokens"
    if prompt is None and miss is not None:
        prompt, prompt_field = hit + miss, "usage.prompt_cache_hit_tokens + prompt_cache_miss_tokens"
    return Usage(prompt=prompt, cached=hit, uncached=miss if miss is not None else _minus(prompt, hit),
                 output=_int(u.get("completion_tokens")),
                 reasoning=_int(_dict(u.get("completion_tokens_details")).get("reasoning_tokens")),
                 prompt_field=prompt_field if prompt is not None else None,
                 cached_field="usage.prompt_cache_hit_tokens", output_field=_field(u, "completion_tokens"))


def _chat(u: Mapping[str, Any]) -> Usage | None:
    cached = _int(_dict(u.get("prompt_tokens_details")).get("cached_tokens"))
    if cached is None:
        return None
    prompt = _int(u.get("prompt_tokens"))
    return Usage(prompt=prompt, cached=cached, uncached=_minus(prompt, cached),
                 output=_int(u.get("completion_tokens")),
                 reasoning=_int(_dict(u.get("completion_tokens_details")).get("reasoning_tokens")),
                 prompt_field=_field(u, "prompt_tokens"), cached_field="usage.prompt_tokens_details.cached_tokens",
                 output_field=_field(u, "completion_tokens"))


def _anthropic(u: Mapping[str, Any]) -> Usage | None:
    read = _int(u.get("cache_read_input_tokens"))
    write = _int(u.get("cache_creation_input_tokens"))
    if read is None and write is None:
        return None
    uncached = _int(u.get("input_tokens"))
    parts = [x for x in (uncached, read, write) if x is not None]
    by_ttl = []
    creation = _dict(u.get("cache_creation"))
    for key, ttl in (("ephemeral_5m_input_tokens", "5m"), ("ephemeral_1h_input_tokens", "1h")):
        n = _int(creation.get(key))
        if n is not None:
            by_ttl.append((ttl, n))
    named = [name for name, x in (("input_tokens", uncached), ("cache_read_input_tokens", read),
                                  ("cache_creation_input_tokens", write)) if x is not None]
    return Usage(prompt=sum(parts), cached=read, cache_write=write, cache_write_by_ttl=tuple(by_ttl),
                 uncached=uncached, output=_int(u.get("output_tokens")),
                 prompt_field="usage." + " + ".join(named),
                 cached_field="usage.cache_read_input_tokens" if read is not None else None,
                 output_field=_field(u, "output_tokens"))


def _responses(u: Mapping[str, Any]) -> Usage | None:
    cached = _int(_dict(u.get("input_tokens_details")).get("cached_tokens"))
    if cached is None:
        return None
    prompt = _int(u.get("input_tokens"))
    return Usage(prompt=prompt, cached=cached, uncached=_minus(prompt, cached), output=_int(u.get("output_tokens")),
                 reasoning=_int(_dict(u.get("output_tokens_details")).get("reasoning_tokens")),
                 prompt_field=_field(u, "input_tokens"), cached_field="usage.input_tokens_details.cached_tokens",
                 output_field=_field(u, "output_tokens"))


def _gemini(u: Mapping[str, Any]) -> Usage | None:
    """Gemini's `usageMetadata`. Its JSON omits zero-valued fields, so a prompt with no cache hit arrives without
    `cachedContentTokenCount` ("If implicit caching is not active or no content was cached, this will be 0":
    firebase.google.com/docs/reference/js/ai.usagemetadata, checked 2026-12-07); here it stays None (not
    reported) like every absent field, and the billing buckets count it as 0. `toolUsePromptTokenCount` is not
    read (not in the prompt count, and no price page read says how it is billed)."""
    names = _gemini_names(u)
    if names is None:
        return None
    prompt_key, cached_key, out_key, thoughts_key = names
    prompt, cached = _int(u.get(prompt_key)), _int(u.get(cached_key))
    candidates, thoughts = _int(u.get(out_key)), _int(u.get(thoughts_key))
    parts = [x for x in (candidates, thoughts) if x is not None]
    output_field = " + ".join(f"usageMetadata.{k}" for k, x in ((out_key, candidates), (thoughts_key, thoughts))
                              if x is not None)
    return Usage(prompt=prompt, cached=cached, uncached=_minus(prompt, cached if cached is not None else 0),
                 output=sum(parts) if parts else None, reasoning=thoughts,
                 prompt_field=f"usageMetadata.{prompt_key}" if prompt is not None else None,
                 cached_field=f"usageMetadata.{cached_key}" if cached is not None else None,
                 output_field=output_field or None)


def _gemini_names(u: Mapping[str, Any]) -> tuple[str, str, str, str] | None:
    """The field names of the spelling the usage uses: REST's camelCase or the SDKs' snake_case."""
    if _int(u.get("promptTokenCount")) is not None:
        return "promptTokenCount", "cachedContentTokenCount", "candidatesTokenCount", "thoughtsTokenCount"
    if _int(u.get("prompt_token_count")) is not None:
        return "prompt_token_count", "cached_content_token_count", "candidates_token_count", "thoughts_token_count"
    return None


def _timings_or_plain(u: Mapping[str, Any], t: Mapping[str, Any]) -> Usage:
    """No cache field in the usage: llama.cpp's timings when present, else the prompt size alone (cached None)."""
    prompt, prompt_field = _int(u.get("prompt_tokens")), "usage.prompt_tokens"
    output, output_field = _int(u.get("completion_tokens")), "usage.completion_tokens"
    if prompt is None and _int(u.get("input_tokens")) is not None:
        prompt, prompt_field = _int(u.get("input_tokens")), "usage.input_tokens"
    if output is None and _int(u.get("output_tokens")) is not None:
        output, output_field = _int(u.get("output_tokens")), "usage.output_tokens"
    cache_n, prompt_n = _int(t.get("cache_n")), _int(t.get("prompt_n"))
    if cache_n is not None:
        if prompt is None and prompt_n is not None:
            prompt, prompt_field = cache_n + prompt_n, "timings.cache_n + timings.prompt_n"
        return Usage(prompt=prompt, cached=cache_n, uncached=prompt_n, output=output,
                     prompt_field=prompt_field if prompt is not None else None, cached_field="timings.cache_n",
                     output_field=output_field if output is not None else None)
    return Usage(prompt=prompt, output=output, prompt_field=prompt_field if prompt is not None else None,
                 output_field=output_field if output is not None else None)


def _minus(total: int | None, part: int | None) -> int | None:
    return None if total is None or part is None else total - part


def _field(u: Mapping[str, Any], name: str) -> str | None:
    return f"usage.{name}" if _int(u.get(name)) is not None else None
