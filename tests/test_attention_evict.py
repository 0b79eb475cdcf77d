"""Eviction under a budget: sinks + recent, heavy hitters + recent, recent only — bytes kept, deviation from the
full cache, and where the next token first changes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from analyzer.attention import AttentionModel, ModelConfig
from analyzer.attention.append import sample_tokens
from analyzer.attention.evict import (
    EvictingKVCache,
    keep_heavy_and_recent,
    keep_recent,
    keep_sinks_and_recent,
    run_evict,
)
from analyzer.attention.window import decode_each
from analyzer.errors import AnalyzerError


def test_policies_choose_the_positions_they_name() -> None:
    positions = np.arange(10, 20)
    scores = np.array([5.0, 0, 0, 9, 0, 0, 7, 0, 0, 0])
    assert keep_recent(positions, scores, 4).tolist() == [6, 7, 8, 9]
    assert keep_sinks_and_recent(4)(np.arange(10), scores, 6).tolist() == [0, 1, 2, 3, 8, 9]
    assert keep_sinks_and_recent(4)(positions, scores, 6).tolist() == [4, 5, 6, 7, 8, 9]  # no position < 4 left
    assert keep_heavy_and_recent(positions, scores, 6).tolist() == [0, 3, 6, 7, 8, 9]  # 3 heaviest + 3 recent


@pytest.mark.parametrize("budget", [3, 8])
def test_recent_budget_b_is_the_windowed_model_with_w_b(budget: int) -> None:
    """Keeping the last B positions (the new one included) must give exactly a window of B."""
    config = ModelConfig()
    tokens = sample_tokens(config, 24)
    model = AttentionModel(config)
    evicted = decode_each(model, tokens, EvictingKVCache(config, keep_recent, budget))
    windowed = AttentionModel(replace(config, window=budget), model.params).recompute(tokens).logits
    assert np.abs(evicted - windowed).max() <= 1e-12


def test_budget_counts_bytes_and_deviation_starts_at_the_budget() -> None:
    config = ModelConfig()
    r = run_evict(config, 32, (8, 16, 32), sinks=4)
    assert r.bytes_per_position == 2 * 2 * 2 * 8 * 2 and r.full_bytes == 32 * 128
    runs = {(run.policy, run.budget): run for run in r.runs}
    assert len(runs) == 9
    for (_, budget), run in runs.items():
        assert run.kept_per_layer == [budget] * config.layers
        assert run.bytes_kept == budget * 128
        assert all(len(p) == budget for p in run.kept_positions)
        assert all(d == 0.0 for d in run.by_position[:budget])  # nothing dropped yet: the same keys
        if budget < 32:
            assert max(run.by_position[budget:]) > 1e-6
    assert runs[("sinks + recent", 8)].kept_positions[0] == [0, 1, 2, 3, 28, 29, 30, 31]
    assert runs[("recent", 8)].kept_positions[1] == list(range(24, 32))
    full = runs[("recent", 32)]
    assert max(full.by_position) == 0.0 and full.argmax_changed == [] and full.first_change is None
    recent8 = runs[("recent", 8)]
    assert recent8.first_change == recent8.argmax_changed[0] and recent8.first_change >= 8


def test_threshold_is_the_smallest_budget_from_which_no_token_changes() -> None:
    config = ModelConfig()
    r = run_evict(config, 24, (6,), sinks=2)
    model = AttentionModel(config)
    tokens = sample_tokens(config, 24)
    reference = decode_each(model, tokens, EvictingKVCache(config)).argmax(axis=1)
    for t in r.thresholds:
        policy = {"recent": keep_recent, "sinks + recent": keep_sinks_and_recent(2),
                  "heavy hitters + recent": keep_heavy_and_recent}[t.policy]
        for budget in sorted({t.stable_from, 23} & set(range(t.stable_from, 24))):
            same = decode_each(model, tokens, EvictingKVCache(config, policy, budget)).argmax(axis=1)
            assert np.array_equal(same, reference)
        if t.position is not None:
            below = decode_each(model, tokens, EvictingKVCache(config, policy, t.stable_from - 1)).argmax(axis=1)
            assert int(np.flatnonzero(below != reference)[0]) == t.position


def test_sink_share_is_the_last_querys_attention_on_the_first_positions() -> None:
    r = run_evict(ModelConfig(), 16, (8,), sinks=4, policies=("recent",))
    assert 0 < r.sink_share < 1
    assert r.to_dict()["uniform_sink_attention_share"] == 4 / 16


@pytest.mark.parametrize("kwargs,needle", [({"length": 1}, "--length"), ({"budgets": (0,)}, "--budget"),
                                           ({"sinks": -1}, "--sinks")])
def test_bad_evict_input_is_an_error(kwargs: dict, needle: str) -> None:
    args = {"length": 8, **kwargs}
    with pytest.raises(AnalyzerError, match=needle):
        run_evict(ModelConfig(), **args)
