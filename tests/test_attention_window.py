"""Sliding window: a rolling cache of W positions equals the windowed recompute, keeps exactly W, and loses
exactly what full attention reads beyond the window; a second request can resume only where the window holds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from analyzer.attention import AttentionModel, ModelConfig
from analyzer.attention.append import sample_tokens
from analyzer.attention.window import RollingKVCache, decode_each, run_window
from analyzer.errors import AnalyzerError

TOL = {"float64": 1e-12, "float32": 1e-5}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layers", [1, 2, 3])
@pytest.mark.parametrize("kv_heads", [4, 2, 1])
@pytest.mark.parametrize("n,w", [(20, 1), (20, 3), (20, 8), (6, 8)])
def test_rolling_cache_equals_windowed_recompute(dtype: str, layers: int, kv_heads: int, n: int, w: int) -> None:
    config = ModelConfig(layers=layers, heads=4, kv_heads=kv_heads, d_model=16, head_dim=4, d_ff=24, vocab=32,
                         dtype=dtype, seed=layers + kv_heads)
    r = run_window(config, n, w)
    assert max(r.max_abs_logits, r.max_abs_hidden, r.max_abs_kv) <= TOL[dtype] and r.within_tolerance
    kept = min(n, w)
    assert r.kept_per_layer == [kept] * layers
    assert r.held_positions == list(range(n - kept, n))
    # counts, written out from the window: query t reads min(t+1, W) keys, min(t, W-1) of them from the cache
    assert r.rolling.qk_dots == [4 * sum(min(t + 1, w) for t in range(n))] * layers
    assert r.rolling.kv_reused == [kv_heads * sum(min(t, w - 1) for t in range(n))] * layers
    assert r.rolling.kv_computed == [kv_heads * n] * layers
    assert r.windowed_recompute.qk_dots == r.rolling.qk_dots
    assert r.full_recompute.qk_dots == [4 * n * (n + 1) // 2] * layers
    # positions before W read exactly what full attention reads: bit-for-bit equal; position W is the first loss
    assert all(d == 0.0 for d in r.vs_full_by_position[:w])
    assert r.first_position_differing == (w if w < n else None)


def test_window_mask_reads_w_keys_including_itself() -> None:
    """A windowed model with W >= length is the full model; with W = 1 each position sees only itself."""
    config = ModelConfig(layers=2)
    tokens = sample_tokens(config, 10)
    full = AttentionModel(config)
    wide = AttentionModel(replace(config, window=10), full.params)
    assert np.array_equal(wide.recompute(tokens).logits, full.recompute(tokens).logits)
    narrow = AttentionModel(replace(config, window=1), full.params)
    one = narrow.recompute(tokens).logits
    for t in (0, 4, 9):  # with W = 1 the output at t depends on token t alone (and its position)
        alone = narrow.forward(tokens[t:t + 1], RollingKVCache(narrow.config, start=t)).logits[0]
        assert np.abs(alone - one[t]).max() <= 1e-12


def test_rolling_cache_overwrites_the_oldest_slot_and_takes_one_token_per_call() -> None:
    config = ModelConfig(layers=1, window=4)
    model = AttentionModel(config)
    cache = RollingKVCache(config)
    decode_each(model, sample_tokens(config, 6), cache)
    assert cache.seen == 6 and cache.length == 4 and cache.held() == [2, 3, 4, 5]
    assert sorted(cache.slot_position[0].tolist()) == [2, 3, 4, 5]
    assert cache.slot_position[0][5 % 4] == 5  # position t lives in slot t mod W
    with pytest.raises(AnalyzerError, match="one token"):
        model.forward([1, 2], cache)
    assert cache.can_resume_at(6) and cache.can_resume_at(5)
    assert not cache.can_resume_at(4)  # the token at 4 would read position 1, already overwritten
    with pytest.raises(AnalyzerError, match="no longer holds"):
        cache.resumed_at(4)
    with pytest.raises(AnalyzerError, match="windowed model"):
        RollingKVCache(ModelConfig())


def test_second_request_resumes_only_where_the_window_holds_and_restarts_from_p_minus_l_w() -> None:
    config = ModelConfig(layers=2)
    r = run_window(config, 32, 8)
    cases = {c.shared: c for c in r.reuse}
    assert sorted(cases) == [16, 24, 31, 32]
    for shared in (32, 31):
        assert cases[shared].resumable and cases[shared].resume_delta is not None
        assert cases[shared].resume_delta <= 1e-12
    for shared in (24, 16):
        assert not cases[shared].resumable and cases[shared].resume_delta is None
    assert cases[24].needed == (17, 23) and cases[24].held == (24, 31)
    for case in r.reuse:
        assert case.restart_from == max(0, case.shared - 2 * 7)
        assert case.restart_delta <= 1e-12  # no token before P - L(W-1) reaches position P
        assert case.restart_later_delta is not None and case.restart_later_delta > 1e-6  # one token later does


@pytest.mark.parametrize("n,w,needle", [(32, 0, "--window"), (1, 4, "--length")])
def test_bad_window_input_is_an_error(n: int, w: int, needle: str) -> None:
    with pytest.raises(AnalyzerError, match=needle):
        run_window(ModelConfig(), n, w)
