"""Prefix block hashing (vLLM-style chained hashes) and the prefix experiment's counts."""

from __future__ import annotations

import numpy as np
import pytest

from analyzer.attention import ModelConfig, PrefixCache, block_hashes, run_prefix
from analyzer.attention.blocks import ROOT_HASH, block_hash
from analyzer.attention.prefix import RequestPair, default_pairs


def test_hash_chains_parent_and_block_tokens() -> None:
    tokens = list(range(10))
    hashes = block_hashes(tokens, 4)
    assert len(hashes) == 2  # the trailing partial block (8, 9) has no identity
    assert hashes[0] == block_hash(ROOT_HASH, [0, 1, 2, 3])
    assert hashes[1] == block_hash(hashes[0], [4, 5, 6, 7])
    assert hashes[1] != block_hash(ROOT_HASH, [4, 5, 6, 7])
    assert block_hashes(tokens, 4) == hashes  # deterministic


def test_full_hit_is_capped_so_the_last_token_is_computed() -> None:
    cache = PrefixCache(4)
    cache.insert(list(range(12)))
    assert cache.hit_tokens(list(range(12))) == 8  # 12 would leave nothing to produce logits
    assert cache.hit_tokens(list(range(13))) == 12
    assert cache.hit_tokens(list(range(12)) + [99, 98]) == 12


def test_partial_block_is_not_cached_and_does_not_hit() -> None:
    cache = PrefixCache(4)
    cache.insert(list(range(6)))  # one full block + 2 tokens
    assert cache.hit_tokens(list(range(6)) + [50, 51, 52]) == 4
    assert cache.hit_tokens([0, 1, 2]) == 0


def test_same_block_after_different_prefix_does_not_hit() -> None:
    cache = PrefixCache(4)
    shared = [7, 7, 7, 7]
    cache.insert([1, 2, 3, 4] + shared)
    assert cache.hit_tokens([9, 9, 9, 9] + shared + [0]) == 0
    assert cache.hit_tokens([1, 2, 3, 4] + shared + [0]) == 8


def test_hits_stop_at_the_first_differing_block() -> None:
    cache = PrefixCache(4)
    a = list(range(20))
    cache.insert(a)
    b = list(a)
    b[9] = 99  # third block differs; blocks 4 and 5 have equal tokens but a different parent
    assert cache.hit_tokens(b) == 8


def test_prefix_experiment_runs_the_model_and_matches_closed_forms() -> None:
    config = ModelConfig()
    base = np.arange(100) % config.vocab
    pair = RequestPair("t", base[:70], np.concatenate([base[:70], [1, 2, 3]]))
    results = run_prefix(config, (16, 64), [pair], verify_max=1000)
    by_size = {r.block_size: r for r in results}
    assert by_size[16].hit_tokens == 64 and by_size[64].hit_tokens == 64
    for r in results:
        assert r.ran_model and r.max_abs_logits is not None and r.max_abs_logits <= 1e-12
        h, n, heads, kv = r.hit_tokens, 73, config.heads, config.kv_heads
        assert r.cached.kv_computed == [kv * (n - h)] * config.layers
        assert r.kv_saved == config.layers * kv * h
        assert r.qk_saved == config.layers * heads * h * (h + 1) // 2
        assert r.qk_saved_fraction == pytest.approx(h * (h + 1) / (n * (n + 1)))


def test_counted_pairs_equal_what_a_run_would_count() -> None:
    config = ModelConfig()
    base = np.arange(300) % config.vocab
    pair = RequestPair("t", base[:200], base[:230])
    ran = run_prefix(config, (16,), [pair], verify_max=1000)[0]
    counted = run_prefix(config, (16,), [pair], verify_max=10)[0]
    assert ran.ran_model and not counted.ran_model
    assert ran.cached.to_dict() == counted.cached.to_dict()
    assert ran.recomputed.to_dict() == counted.recomputed.to_dict()


def test_default_pairs_include_the_10000_token_cases() -> None:
    results = {(r.pair, r.block_size): r for r in run_prefix(ModelConfig(), (16, 64), verify_max=300)}
    assert results[("next turn: 10,000 then +50", 16)].hit_tokens == 10_000
    assert results[("next turn: 10,000 then +50", 64)].hit_tokens == 9_984
    assert results[("10,000, token 5,000 edited", 16)].hit_tokens == 4_992
    assert results[("10,000, token 5,000 edited", 64)].same_token_blocks == 155
    assert results[("same 128 after other 128", 16)].hit_tokens == 0
    assert results[("same 128 after other 128", 16)].same_token_blocks == 8
    assert results[("10 tokens (< 1 block)", 16)].hit_tokens == 0
    assert results[("identical 1,000 tokens", 64)].hit_tokens == 960
    assert len(default_pairs(ModelConfig())) == 6
