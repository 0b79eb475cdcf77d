"""`read_usage` on each provider's usage shape: the right bucket from the right field, and None (never 0) for
what was not reported."""

from __future__ import annotations

from analyzer.requests import read_usage


def test_deepseek_hit_and_miss() -> None:
    u = read_usage({"prompt_tokens": 100, "prompt_cache_hit_tokens": 64, "prompt_cache_miss_tokens": 36,
                    "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1}})
    assert (u.prompt, u.cached, u.uncached, u.output) == (100, 64, 36, 5)
    assert u.cached_field == "usage.prompt_cache_hit_tokens" and u.prompt_field == "usage.prompt_tokens"
    no_total = read_usage({"prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 9})
    assert (no_total.prompt, no_total.cached) == (9, 0)  # a reported 0 stays 0


def test_chat_cached_tokens_are_inside_prompt_tokens() -> None:
    u = read_usage({"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 80},
                    "completion_tokens_details": {"reasoning_tokens": 3}})
    assert (u.prompt, u.cached, u.uncached, u.output, u.reasoning) == (100, 80, 20, 7, 3)
    assert u.cached_field == "usage.prompt_tokens_details.cached_tokens" and u.output_field == \
        "usage.completion_tokens"
    assert u.cache_write is None and u.reported


def test_responses_input_tokens_include_the_cached_ones() -> None:
    u = read_usage({"input_tokens": 2006, "input_tokens_details": {"cached_tokens": 1920}, "output_tokens": 300,
                    "output_tokens_details": {"reasoning_tokens": 200}, "total_tokens": 2306})
    assert (u.prompt, u.cached, u.uncached, u.output, u.reasoning) == (2006, 1920, 86, 300, 200)
    assert (u.prompt_field, u.cached_field) == ("usage.input_tokens", "usage.input_tokens_details.cached_tokens")


def test_anthropic_input_tokens_are_only_the_uncached_part() -> None:
    u = read_usage({"input_tokens": 10, "cache_read_input_tokens": 80, "cache_creation_input_tokens": 5,
                    "cache_creation": {"ephemeral_5m_input_tokens": 2, "ephemeral_1h_input_tokens": 3},
                    "output_tokens": 4})
    assert (u.prompt, u.cached, u.cache_write, u.uncached, u.output) == (95, 80, 5, 10, 4)
    assert u.cache_write_by_ttl == (("5m", 2), ("1h", 3))
    assert u.prompt_field == "usage.input_tokens + cache_read_input_tokens + cache_creation_input_tokens"
    write_only = read_usage({"input_tokens": 10, "cache_creation_input_tokens": 50})
    assert (write_only.prompt, write_only.cached, write_only.cache_write) == (60, None, 50)
    assert not write_only.reported


def test_llama_cpp_timings_when_the_usage_has_no_cache_field() -> None:
    u = read_usage({"prompt_tokens": 100}, {"cache_n": 90, "prompt_n": 10})
    assert (u.prompt, u.cached, u.uncached, u.cached_field) == (100, 90, 10, "timings.cache_n")
    only = read_usage(None, {"cache_n": 7, "prompt_n": 3})
    assert (only.prompt, only.prompt_field) == (10, "timings.cache_n + timings.prompt_n")
    # the usage's own cache field wins over timings
    both = read_usage({"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 64}}, {"cache_n": 90})
    assert (both.cached, both.cached_field) == (64, "usage.prompt_tokens_details.cached_tokens")


def test_not_reported_is_none_never_zero() -> None:
    plain = read_usage({"prompt_tokens": 5})
    assert (plain.prompt, plain.cached, plain.uncached, plain.cached_field) == (5, None, None, None)
    assert not plain.reported
    empty = read_usage(None)
    assert (empty.prompt, empty.cached, empty.output, empty.prompt_field) == (None, None, None, None)
    responses_plain = read_usage({"input_tokens": 12, "output_tokens": 3})
    assert (responses_plain.prompt, responses_plain.cached, responses_plain.output) == (12, None, 3)
    junk = read_usage({"prompt_tokens": "12", "prompt_tokens_details": {"cached_tokens": True}})
    assert (junk.prompt, junk.cached) == (None, None)


def test_gemini_usage_metadata_cached_inside_the_prompt_and_thinking_as_output() -> None:
    u = read_usage({"promptTokenCount": 4000, "cachedContentTokenCount": 3000, "candidatesTokenCount": 200,
                    "thoughtsTokenCount": 50, "totalTokenCount": 4250})
    assert (u.prompt, u.cached, u.uncached, u.output, u.reasoning) == (4000, 3000, 1000, 250, 50)
    assert u.cached_field == "usageMetadata.cachedContentTokenCount"
    assert u.output_field == "usageMetadata.candidatesTokenCount + usageMetadata.thoughtsTokenCount"
    snake = read_usage({"prompt_token_count": 10, "cached_content_token_count": 4, "candidates_token_count": 2})
    assert (snake.prompt, snake.cached, snake.uncached, snake.output) == (10, 4, 6, 2)


def test_gemini_without_a_cached_count_is_not_reported_and_all_uncached() -> None:
    u = read_usage({"promptTokenCount": 900, "candidatesTokenCount": 12})
    assert (u.prompt, u.cached, u.uncached, u.output) == (900, None, 900, 12) and not u.reported
    assert u.prompt_field == "usageMetadata.promptTokenCount"
