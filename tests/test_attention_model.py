"""The cached path must equal the full recompute, and every counter must equal its closed form."""

from __future__ import annotations

import numpy as np
import pytest

from analyzer.attention import (
    AttentionModel,
    KVCache,
    ModelConfig,
    closed_form_counters,
    export_params,
    init_params,
    load_params,
    param_spec,
    run_append,
)
from analyzer.errors import AnalyzerError

TOL = {"float64": 1e-12, "float32": 1e-5}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("layers", [1, 2, 3, 4])
@pytest.mark.parametrize("heads,kv_heads", [(4, 4), (4, 2), (4, 1)])  # MHA, GQA, MQA
@pytest.mark.parametrize("n", [1, 7, 20])
def test_append_with_cache_equals_recompute(dtype: str, layers: int, heads: int, kv_heads: int, n: int) -> None:
    config = ModelConfig(layers=layers, heads=heads, kv_heads=kv_heads, d_model=16, head_dim=4, d_ff=24, vocab=32,
                         seed=layers * 10 + kv_heads, dtype=dtype)
    r = run_append(config, n)
    assert r.max_abs_logits <= TOL[dtype]
    assert r.max_abs_hidden <= TOL[dtype]
    assert r.max_abs_kv <= TOL[dtype]
    assert r.within_tolerance
    # Closed forms, per layer: with the cache 1 new K/V per KV head and N+1 QK per query head.
    assert r.cached.kv_computed == [kv_heads] * layers
    assert r.cached.kv_reused == [n * kv_heads] * layers
    assert r.cached.qk_dots == [(n + 1) * heads] * layers
    # Without it: N+1 K/V per KV head and (N+1)(N+2)/2 QK per query head.
    assert r.recomputed.kv_computed == [(n + 1) * kv_heads] * layers
    assert r.recomputed.kv_reused == [0] * layers
    assert r.recomputed.qk_dots == [(n + 1) * (n + 2) // 2 * heads] * layers


def test_float32_state_stays_float32() -> None:
    config = ModelConfig(dtype="float32")
    model = AttentionModel(config)
    out = model.forward([1, 2, 3])
    assert all(p.dtype == np.float32 for p in model.params.values())
    assert out.logits.dtype == np.float32 and out.hidden.dtype == np.float32
    assert out.cache.k[0].dtype == np.float32 and out.cache.v[-1].dtype == np.float32


def _macs(c: ModelConfig, start: int, n: int) -> int:
    """Multiply-adds written out from the shapes, independently of the module."""
    per_token_layer = (c.d_model * c.heads * c.head_dim  # q
                       + 2 * c.d_model * c.kv_heads * c.head_dim  # k, v
                       + c.heads * c.head_dim * c.d_model  # output projection
                       + c.d_model * c.d_ff + c.d_ff * c.d_model)  # MLP
    keys = sum(t + 1 for t in range(start, start + n))
    attention = 2 * keys * c.heads * c.head_dim  # QK and weights·V
    return c.layers * (n * per_token_layer + attention) + n * c.d_model * c.vocab


@pytest.mark.parametrize("start,n", [(0, 1), (0, 9), (5, 1), (5, 4), (12, 3)])
def test_counters_match_closed_forms_for_chunks(start: int, n: int) -> None:
    config = ModelConfig(layers=3, heads=6, kv_heads=2, d_model=12, head_dim=4, d_ff=10, vocab=16)
    model = AttentionModel(config)
    tokens = np.arange(start + n) % config.vocab
    cache = model.forward(tokens[:start]).cache if start else None
    counters = model.new_counters()
    model.forward(tokens[start:], cache, counters)
    keys = (start + n) * (start + n + 1) // 2 - start * (start + 1) // 2
    assert counters.kv_computed == [n * 2] * 3
    assert counters.kv_reused == [start * 2] * 3
    assert counters.qk_dots == [keys * 6] * 3
    assert counters.macs == _macs(config, start, n)
    assert closed_form_counters(config, start, n).to_dict() == counters.to_dict()


def test_token_by_token_decode_equals_one_prefill() -> None:
    config = ModelConfig(layers=2, heads=4, kv_heads=1)
    model = AttentionModel(config)
    tokens = np.array([5, 1, 9, 9, 0, 33, 2, 7])
    full = model.recompute(tokens)
    cache = None
    for i, tok in enumerate(tokens):
        step = model.forward([tok], cache)
        cache = step.cache
        assert np.abs(step.logits[0] - full.logits[i]).max() <= 1e-12
    assert cache is not None and cache.length == len(tokens)


def test_causal_mask_future_tokens_do_not_change_the_past() -> None:
    model = AttentionModel(ModelConfig())
    a = model.recompute([3, 4, 5, 6])
    b = model.recompute([3, 4, 5, 60])
    assert np.array_equal(a.logits[:3], b.logits[:3])
    assert np.abs(a.logits[3] - b.logits[3]).max() > 1e-3


def test_rope_is_applied_before_k_is_cached() -> None:
    """The same token at two positions must cache different K (rotated) but identical V (not rotated)."""
    model = AttentionModel(ModelConfig(layers=1))
    cache = model.forward([7, 7]).cache
    assert np.abs(cache.k[0][:, 0] - cache.k[0][:, 1]).max() > 1e-6
    assert np.array_equal(cache.v[0][:, 0], cache.v[0][:, 1])


def test_param_spec_names_shapes_and_roundtrip(tmp_path) -> None:
    config = ModelConfig(layers=2, heads=4, kv_heads=2, d_model=16, head_dim=4, d_ff=24, vocab=20, seed=3)
    params = init_params(config)
    spec = param_spec(config)
    assert list(params) == list(spec)
    assert params["layers.1.wk"].shape == (16, 2 * 4)
    assert params["layers.0.wq"].shape == (16, 4 * 4)
    assert params["layers.0.wo"].shape == (16, 16)
    assert params["unembed"].shape == (16, 20)
    path = tmp_path / "p.npz"
    export_params(config, params, path)
    config2, params2 = load_params(path)
    assert config2 == config
    assert all(np.array_equal(params[k], params2[k]) for k in params)
    assert not list(tmp_path.glob(".*.tmp"))


def test_same_seed_same_weights_other_seed_differs() -> None:
    a = init_params(ModelConfig(seed=1))
    b = init_params(ModelConfig(seed=1))
    c = init_params(ModelConfig(seed=2))
    assert np.array_equal(a["layers.0.wq"], b["layers.0.wq"])
    assert not np.array_equal(a["layers.0.wq"], c["layers.0.wq"])


@pytest.mark.parametrize("kwargs,needle", [
    ({"heads": 4, "kv_heads": 3}, "multiple of KV heads"),
    ({"head_dim": 5}, "even"),
    ({"layers": 0}, "layers"),
    ({"dtype": "float16"}, "dtype"),
])
def test_bad_config_is_a_one_line_error(kwargs: dict, needle: str) -> None:
    with pytest.raises(AnalyzerError, match=needle):
        ModelConfig(**kwargs)


def test_bad_tokens_and_foreign_cache_rejected() -> None:
    model = AttentionModel(ModelConfig(vocab=10))
    with pytest.raises(AnalyzerError, match="0..9"):
        model.forward([3, 10])
    with pytest.raises(AnalyzerError, match="different model"):
        model.forward([1], KVCache(ModelConfig(vocab=10, layers=3)))


def test_load_params_rejects_mismatched_shapes(tmp_path) -> None:
    config = ModelConfig()
    params = init_params(config)
    params["layers.0.wk"] = params["layers.0.wk"][:, :4]
    export_params(config, params, tmp_path / "bad.npz")
    with pytest.raises(AnalyzerError, match="layers.0.wk"):
        load_params(tmp_path / "bad.npz")
