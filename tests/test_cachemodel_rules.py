"""The cache model on hand-built token logs: each rule's state, the entry a request matches, its prediction,
and the cause named when a server reports otherwise."""

from __future__ import annotations

import dataclasses

import pytest

from analyzer.cachemodel import Arrival, Marker, explain, provider_rule, simulate, skipped
from analyzer.cachemodel.llamacpp import settings_from
from analyzer.errors import AnalyzerError


def toks(seed: int, n: int) -> tuple[int, ...]:
    """n distinct token ids of a 'text' named by seed (two seeds never share a token)."""
    return tuple(seed * 100_000 + i for i in range(n))


SYS_A, SYS_B = toks(1, 600), toks(2, 60)
ONE_SLOT = {"slots": 1, "cache_ram_mib": 8192, "slot_similarity": 0.1, "cache_reuse": 0, "cache_idle_slots": True}


def conv_a(turn: int) -> tuple[int, ...]:
    return SYS_A + sum((toks(10 + t, 40) for t in range(turn)), ())


def conv_b(turn: int) -> tuple[int, ...]:
    return SYS_B + toks(50 + turn, 20)


def test_provider_rules_carry_their_numbers_source_and_date() -> None:
    openai = provider_rule("openai")
    assert (openai.min_prefix, openai.granularity) == (1024, 128)
    assert openai.ttls["idle"] == 300 and openai.ttls["max"] == 3600
    anthropic = provider_rule("anthropic")
    assert anthropic.ttls == {"5m": 300, "1h": 3600}
    assert anthropic.min_prefix_for("claude-opus-4-6") == 4096
    assert anthropic.min_prefix_for("claude-sonnet-4-5") == 1024
    assert anthropic.min_prefix_for("claude-3-5-haiku-20241022") == 2048
    assert provider_rule("deepseek").granularity == 64
    for name in ("llama.cpp", "vllm", "deepseek", "openai", "anthropic"):
        rule = provider_rule(name)
        assert rule.checked == "2026-12-07" and rule.source
    with pytest.raises(AnalyzerError, match="no cache rule 'gemini'"):
        provider_rule("gemini")


def test_llamacpp_one_slot_restores_the_interleaved_conversation_from_the_prompt_cache() -> None:
    # A1, B1 (a side call), A2 continuing A1: the slot holds B1, the host prompt cache holds A1
    arrivals = [Arrival(1, conv_a(1), settings=ONE_SLOT), Arrival(2, conv_b(1), settings=ONE_SLOT),
                Arrival(3, conv_a(2), settings=ONE_SLOT), Arrival(4, conv_b(2), settings=ONE_SLOT)]
    m = simulate(arrivals, "llama.cpp")
    assert [x.cached for x in m] == [0, 0, len(conv_a(1)), len(SYS_B)]
    assert [x.entry for x in m] == [None, None, 1, 2]
    assert any(h.where == "prompt cache" and h.key == 1 for h in m[2].held)
    assert any(h.where == "slot 0" and h.key == 2 for h in m[2].held)


def test_llamacpp_without_prompt_cache_loses_the_conversation_to_the_side_call() -> None:
    settings = {**ONE_SLOT, "cache_ram_mib": 0}
    arrivals = [Arrival(1, conv_a(1), settings=settings), Arrival(2, conv_b(1), settings=settings),
                Arrival(3, conv_a(2), settings=settings)]
    m = simulate(arrivals, "llama.cpp")
    assert m[2].cached == 0 and m[2].best_key == 1 and m[2].best_shared == len(conv_a(1))
    assert [x.why for x in m[2].lost] == ["other-slot"]
    # a server that did keep it: the cause names the dropped entry, not another client
    cause = explain(m[2], len(conv_a(1)))
    assert cause is not None and cause.kind == "other-slot" and "row 1" in cause.text


def test_llamacpp_two_slots_keep_both_conversations() -> None:
    settings = {**ONE_SLOT, "slots": 2, "cache_ram_mib": 0}
    arrivals = [Arrival(1, conv_a(1), settings=settings), Arrival(2, conv_b(1), settings=settings),
                Arrival(3, conv_a(2), settings=settings), Arrival(4, conv_b(2), settings=settings)]
    m = simulate(arrivals, "llama.cpp")
    assert [x.cached for x in m] == [0, 0, len(conv_a(1)), len(SYS_B)]
    assert m[2].slot != m[3].slot


def test_llamacpp_identical_prompt_recomputes_its_last_token_and_a_restart_empties_the_state() -> None:
    arrivals = [Arrival(1, conv_a(1), settings=ONE_SLOT, server_id="pid 1"),
                Arrival(2, conv_a(1), settings=ONE_SLOT, server_id="pid 1"),
                Arrival(3, conv_a(1), settings=ONE_SLOT, server_id="pid 2")]
    m = simulate(arrivals, "llama.cpp")
    assert m[1].cached == len(conv_a(1)) - 1
    assert m[2].cached == 0 and m[2].lost and m[2].lost[0].why == "restart"


def test_rejected_requests_never_enter_the_state_and_are_listed_with_their_error() -> None:
    arrivals = [Arrival(1, conv_a(1), settings=ONE_SLOT),
                Arrival(2, conv_b(1), ok=False, error="HTTP 400: request exceeds the context", settings=ONE_SLOT),
                Arrival(3, conv_a(2), settings=ONE_SLOT)]
    m = simulate(arrivals, "llama.cpp")
    assert [x.key for x in m] == [1, 3]
    assert m[1].cached == len(conv_a(1)) and m[1].entry == 1
    assert [(s.key, s.error) for s in skipped(arrivals)] == [(2, "HTTP 400: request exceeds the context")]


def test_settings_not_in_the_rows_are_the_servers_defaults_and_said_assumed() -> None:
    rule = provider_rule("llama.cpp")
    s = settings_from({}, rule)
    assert (s.slots, s.kv_unified, s.cache_ram_mib, s.slot_similarity) == (4, True, 8192, 0.1)
    assert "slots" in s.assumed and "cache_ram_mib" in s.assumed
    given = settings_from({"settings": {"parallel": 2, "cache_ram": 0}}, rule)
    assert (given.slots, given.kv_unified, given.cache_ram_mib) == (2, False, 0)
    assert "slots" not in given.assumed


def test_llamacpp_default_unified_slots_park_idle_state_in_the_prompt_cache() -> None:
    # auto slots (4, unified KV): starting a task saves and clears every idle slot; the conversation's
    # state comes back from the prompt cache
    arrivals = [Arrival(1, conv_a(1)), Arrival(2, conv_b(1)), Arrival(3, conv_a(2))]
    m = simulate(arrivals, "llama.cpp")
    assert m[2].cached == len(conv_a(1)) and m[2].entry == 1
    assert any(h.where == "prompt cache" and h.key == 1 for h in m[2].held)
    assert not any(h.where.startswith("slot") and h.key == 1 for h in m[2].held)


def test_llamacpp_cache_reuse_shifts_a_chunk_after_the_first_difference() -> None:
    settings = {**ONE_SLOT, "cache_reuse": 32}
    first = toks(1, 100) + toks(4, 5) + toks(3, 200)
    second = toks(1, 100) + toks(3, 200) + toks(5, 10)     # 5 tokens removed: the rest shifts back
    m = simulate([Arrival(1, first, settings=settings), Arrival(2, second, settings=settings)], "llama.cpp")
    assert m[1].cached == 300
    plain = simulate([Arrival(1, first, settings=ONE_SLOT), Arrival(2, second, settings=ONE_SLOT)], "llama.cpp")
    assert plain[1].cached == 100


def test_vllm_counts_whole_blocks_of_the_hash_chain() -> None:
    m = simulate([Arrival(1, toks(1, 100)), Arrival(2, toks(1, 70) + toks(2, 30))], "vllm")
    assert m[1].cached == 64 and m[1].entry == 1
    small = dataclasses.replace(provider_rule("vllm"), params={**provider_rule("vllm").params, "capacity_blocks": 4})
    m = simulate([Arrival(1, toks(1, 100)), Arrival(2, toks(2, 100)), Arrival(3, toks(1, 100))], small)
    assert m[2].cached == 0 and m[2].lost and m[2].lost[0].why == "eviction"


def test_deepseek_hits_only_whole_units_in_64_token_storage() -> None:
    a_b = toks(1, 300) + toks(2, 100)
    a_c = toks(1, 300) + toks(3, 100)
    a_d = toks(1, 300) + toks(4, 100)
    m = simulate([Arrival(1, a_b), Arrival(2, a_c), Arrival(3, a_d), Arrival(4, a_b + toks(5, 10))], "deepseek")
    assert m[1].cached == 0                       # A+C does not fully match the unit A+B
    assert m[2].cached == 256 and m[2].shared == 300   # the common prefix A became a unit; 64-token storage
    assert m[3].cached == 384 and m[3].entry == 1


def test_openai_minimum_steps_routing_key_and_idle_ttl() -> None:
    base = toks(1, 1500)
    m = simulate([Arrival(1, base, at=0.0), Arrival(2, base[:1400] + toks(2, 50), at=10.0)], "openai")
    assert m[1].cached == 1024 + 2 * 128 and m[1].floor == "granularity"
    short = simulate([Arrival(1, toks(1, 900), at=0.0), Arrival(2, toks(1, 900) + toks(2, 9), at=1.0)], "openai")
    assert short[1].cached == 0 and short[1].floor == "minimum"
    keyed = simulate([Arrival(1, base, at=0.0, cache_key="a"), Arrival(2, base, at=1.0, cache_key="b")], "openai")
    assert keyed[1].cached == 0 and keyed[1].lost[0].why == "routing"
    late = simulate([Arrival(1, base, at=0.0), Arrival(2, base, at=400.0)], "openai")
    assert late[1].cached == 0 and late[1].lost[0].why == "ttl"
    cause = explain(late[1], 0)
    assert cause is None


def test_anthropic_breakpoints_lookback_minimum_ttl_refresh_and_writes() -> None:
    blocks = tuple(range(100, 3100, 100))        # 30 blocks of 100 tokens
    prompt = toks(1, 3000)
    first = Arrival(1, prompt, at=0.0, markers=(Marker(3000),), block_ends=blocks, model="claude-sonnet-4-5")
    m = simulate([first, dataclasses.replace(first, key=2, at=200.0),
                  dataclasses.replace(first, key=3, at=450.0),   # 250 s after the read at 200: still live
                  dataclasses.replace(first, key=4, at=800.0)], "anthropic")   # 350 s idle: expired
    assert (m[0].cached, m[0].written) == (0, 3000)
    assert (m[1].cached, m[1].written) == (3000, 0) and m[1].entry == 1
    assert m[2].cached == 3000
    assert m[3].cached == 0 and m[3].written == 3000 and m[3].lost[0].why == "ttl"
    # the breakpoint moved 25 blocks on (the conversation grew): the old entry is beyond the 20-block lookback
    longer = toks(1, 3000) + toks(2, 2500)
    ends = blocks + tuple(range(3100, 5600, 100))
    far = Arrival(2, longer, at=10.0, markers=(Marker(5500),), block_ends=ends, model="claude-sonnet-4-5")
    near = dataclasses.replace(far, tokens=toks(1, 3000) + toks(2, 1500), markers=(Marker(4500),),
                               block_ends=blocks + tuple(range(3100, 4600, 100)))
    assert simulate([first, far], "anthropic")[1].cached == 0
    assert simulate([first, near], "anthropic")[1].cached == 3000
    # under the model's minimum nothing is written, so nothing is read
    small = Arrival(1, toks(1, 800), markers=(Marker(800),), block_ends=(800,), model="claude-sonnet-4-5")
    m = simulate([small, dataclasses.replace(small, key=2)], "anthropic")
    assert m[1].cached == 0 and m[0].written == 0 and m[1].floor is None


def test_llamacpp_a_busy_slot_is_passed_over_while_its_request_runs() -> None:
    # two slots, no prompt cache: B arrives while A1 still runs, so it cannot take A1's slot; A2 after both
    settings = {**ONE_SLOT, "slots": 2, "cache_ram_mib": 0}
    arrivals = [Arrival(1, conv_a(1), at=0.0, duration=10.0, settings=settings),
                Arrival(2, conv_a(1) + toks(60, 10), at=1.0, duration=1.0, settings=settings),
                Arrival(3, conv_a(2), at=20.0, duration=1.0, settings=settings)]
    m = simulate(arrivals, "llama.cpp")
    assert m[0].slot != m[1].slot and m[1].cached == 0          # A1's slot was busy: nothing to reuse
    sequential = [dataclasses.replace(a, at=a.key * 20.0) for a in arrivals]
    assert simulate(sequential, "llama.cpp")[1].cached == len(conv_a(1))


def test_llamacpp_prompt_cache_limits_evict_the_oldest_entry() -> None:
    # a 1 MiB prompt cache and 1 KiB of KV per token hold about 1,000 tokens: the third prompt pushes out the first
    settings = {**ONE_SLOT, "cache_ram_mib": 1, "state_bytes_per_token": 1024}
    big = [toks(20 + i, 450) for i in range(3)]
    arrivals = [Arrival(i + 1, big[i], settings=settings) for i in range(3)]
    arrivals.append(Arrival(4, big[0] + toks(30, 5), settings=settings))
    m = simulate(arrivals, "llama.cpp")
    assert m[3].cached == 0 and m[3].lost and m[3].lost[0].why == "eviction" and m[3].lost[0].key == 1
    cause = explain(m[3], 450)
    assert cause is not None and cause.kind == "eviction" and "evicted from the prompt cache" in cause.text
    roomy = simulate([dataclasses.replace(a, settings=ONE_SLOT) for a in arrivals], "llama.cpp")
    assert roomy[3].cached == 450


def test_causes_name_the_answer_tokens_and_only_then_requests_the_log_does_not_show() -> None:
    m = simulate([Arrival(1, conv_a(1), settings=ONE_SLOT), Arrival(2, conv_a(2), settings=ONE_SLOT)], "llama.cpp")
    answer = explain(m[1], len(conv_a(1)) + 30, previous_output=40)
    assert answer is not None and answer.kind == "answer-tokens" and "row 1" in answer.text
    unseen = explain(m[1], len(conv_a(2)) - 1, previous_output=5)
    assert unseen is not None and unseen.kind == "unseen"
    assert explain(m[1], len(conv_a(1)) + 5) is None              # within max(8 tokens, 2%)


def test_anthropic_automatic_mode_caches_up_to_the_last_block() -> None:
    blocks = (1500, 1600)
    first = Arrival(1, toks(1, 1600), at=0.0, block_ends=blocks, automatic=True, model="claude-sonnet-4-5")
    grown = Arrival(2, toks(1, 1600) + toks(2, 100), at=5.0, block_ends=(1500, 1600, 1700), automatic=True,
                    model="claude-sonnet-4-5")
    m = simulate([first, grown], "anthropic")
    assert (m[0].written, m[1].cached, m[1].written) == (1600, 1600, 100)
    assert m[1].written_by_ttl == (("5m", 100),)


def test_llamacpp_a_known_answer_stays_in_the_slot_and_the_next_turn_matches_into_it() -> None:
    answer = toks(70, 6)
    first = Arrival(1, conv_a(1), output_tokens=7, generated=answer, settings=ONE_SLOT)   # 6 tokens, then the end
    second = Arrival(2, conv_a(1) + answer + toks(71, 30), settings=ONE_SLOT)
    m = simulate([first, second], "llama.cpp")
    assert m[1].cached == len(conv_a(1)) + len(answer)
    unknown = simulate([dataclasses.replace(first, generated=None), second], "llama.cpp")
    assert unknown[1].cached == len(conv_a(1))


def test_arrivals_are_taken_in_the_order_the_server_took_them() -> None:
    from analyzer.cachemodel.simulate import arrival_order

    logged = [Arrival(1, toks(1, 5), at=10.000, first_token=0.4), Arrival(2, toks(2, 5), at=10.001, first_token=0.3),
              Arrival(3, toks(3, 5), at=9.0, first_token=0.2), Arrival(4, toks(4, 5), at=12.0, first_token=0.1)]
    # row 3 arrived first; rows 1 and 2 arrived together, row 2 got its first token first
    assert [a.key for a in arrival_order(logged)] == [3, 2, 1, 4]
    assert [a.key for a in arrival_order([dataclasses.replace(a, at=None) for a in logged])] == [1, 2, 3, 4]


def test_llamacpp_an_unlimited_prompt_cache_still_holds_no_more_tokens_than_the_context() -> None:
    # --cache-ram -1: no byte limit, but server_prompt_cache keeps at most n_ctx tokens (the whole context)
    # (the limit is applied after a restore: server_prompt_cache::update runs after load, so it takes a fourth
    # prompt to push the first one out)
    settings = {**ONE_SLOT, "cache_ram_mib": -1, "ctx_size": 1000}
    big = [toks(20 + i, 450) for i in range(4)]
    arrivals = [Arrival(i + 1, big[i], settings=settings) for i in range(4)]
    arrivals.append(Arrival(5, big[0] + toks(30, 5), settings=settings))
    m = simulate(arrivals, "llama.cpp")
    assert m[4].cached == 0 and m[4].lost and m[4].lost[0].why == "eviction"
    assert "over 1,000 tokens" in m[4].lost[0].detail
    roomy = simulate([dataclasses.replace(a, settings={**settings, "ctx_size": 4000}) for a in arrivals], "llama.cpp")
    assert roomy[4].cached == 450


def test_llamacpp_request_options_cache_prompt_off_and_a_named_slot() -> None:
    settings = {**ONE_SLOT, "slots": 2, "cache_ram_mib": 0}
    off = simulate([Arrival(1, conv_a(1), settings=settings),
                    Arrival(2, conv_a(2), settings=settings, cache_prompt=False)], "llama.cpp")
    assert off[1].cached == 0
    # the main call asks for slot 1; the side call is sent to slot 1 too, so the main call's state is gone there
    named = simulate([Arrival(1, conv_a(1), settings=settings, slot_id=1),
                      Arrival(2, conv_b(1), settings=settings, slot_id=1),
                      Arrival(3, conv_a(2), settings=settings, slot_id=1)], "llama.cpp")
    assert [m.slot for m in named] == [1, 1, 1] and named[2].cached == 0
    free = simulate([Arrival(1, conv_a(1), settings=settings), Arrival(2, conv_b(1), settings=settings),
                     Arrival(3, conv_a(2), settings=settings)], "llama.cpp")
    assert free[2].cached == len(conv_a(1))


def test_the_cache_rules_stay_out_of_the_stored_graphs_key() -> None:
    from pathlib import Path

    from analyzer.graph import store

    root = Path(store.__file__).resolve().parent.parent
    assert store._hazard_rule(root / "rules" / "cache" / "llamacpp.toml", root)   # read over logs, not the graph


def test_openai_more_than_about_15_requests_a_minute_on_one_prefix_names_the_overflow() -> None:
    base = toks(1, 2000)
    arrivals = [Arrival(i + 1, base + toks(10 + i, 20), at=i * 2.0) for i in range(17)]
    m = simulate(arrivals, "openai")
    assert m[1].cached == 1024 + 7 * 128 and not any(x.why == "routing" for x in m[1].lost)
    late = m[16]
    assert any(x.why == "routing" for x in late.lost)
    cause = explain(late, 0, engine=False, step=128, minimum=1024)
    assert cause is not None and cause.kind == "routing" and "about 15" in cause.text
    # a server counting in other steps, or caching from a higher floor than documented
    step = explain(m[1], m[1].cached - 100, engine=False, step=128, minimum=1024)
    assert step is not None and step.kind == "granularity"
    floor = explain(m[1], 0, engine=False, step=128, minimum=1024)
    assert floor is not None and floor.kind == "minimum" and "1,024-token minimum" in floor.text
