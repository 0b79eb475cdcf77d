"""Editing token m: layer 1 changes only at m, later layers at every position >= m; reuse of < m is exact."""

from __future__ import annotations

import numpy as np
import pytest

from analyzer.attention import ModelConfig, run_edit, run_edit_contrast
from analyzer.errors import AnalyzerError


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layers", [2, 3, 4])
@pytest.mark.parametrize("kv_heads", [4, 2, 1])
@pytest.mark.parametrize("n,m", [(12, 0), (12, 5), (12, 11), (20, 9)])
def test_invalidation_pattern_is_exact(dtype: str, layers: int, kv_heads: int, n: int, m: int) -> None:
    config = ModelConfig(layers=layers, heads=4, kv_heads=kv_heads, d_model=16, head_dim=4, d_ff=24, vocab=32,
                         dtype=dtype, seed=layers + kv_heads)
    r = run_edit(config, n, m)
    assert r.changed_positions(0) == [m]
    for layer in range(1, layers):
        assert r.changed_positions(layer) == list(range(m, n))
    # positions before m are bit-for-bit unchanged in every layer (no tolerance hiding a drift)
    assert np.all(r.delta[:, :m] == 0)
    # reuse positions < m, recompute the rest: same result as recomputing everything
    assert r.within_tolerance
    h = config.kv_heads
    assert r.prefix_reusable_kv == layers * h * m
    assert r.must_recompute_kv == layers * h * (n - m)
    assert r.unchanged_kv == h * (layers * m + (n - m - 1))  # layer 1 keeps every position but m
    assert r.reused.kv_computed == [h * (n - m)] * layers
    assert r.reused.kv_reused == [h * m] * layers
    assert r.reused.qk_dots == [4 * (n * (n + 1) // 2 - m * (m + 1) // 2)] * layers
    assert r.recomputed.qk_dots == [4 * n * (n + 1) // 2] * layers
    assert list(np.flatnonzero(r.changed_logits)) == list(range(m, n))


def test_one_layer_contrast_keeps_later_kv() -> None:
    deep, shallow = run_edit_contrast(ModelConfig(layers=2), 16, 6)
    assert deep.config.layers == 2 and shallow.config.layers == 1
    assert shallow.changed_positions(0) == [6]
    assert shallow.unchanged_kv == shallow.config.kv_heads * 15
    assert deep.changed_positions(1) == list(range(6, 16))
    assert deep.unchanged_kv == deep.config.kv_heads * (2 * 6 + 9)
    # even with 1 layer the outputs at every position >= m change: the surviving K/V do not save their attention
    assert list(np.flatnonzero(shallow.changed_logits)) == list(range(6, 16))


def test_one_layer_config_gives_a_single_result() -> None:
    assert len(run_edit_contrast(ModelConfig(layers=1), 8, 3)) == 1


@pytest.mark.parametrize("n,m", [(8, 8), (8, -1), (1, 0)])
def test_bad_edit_position_is_an_error(n: int, m: int) -> None:
    with pytest.raises(AnalyzerError):
        run_edit(ModelConfig(), n, m)
