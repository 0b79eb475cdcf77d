"""Quantized K/V: per-token symmetric codes with 16-bit scales — the bytes (scales counted), the error per layer
against the full-precision cache, and whether greedy tokens change."""

from __future__ import annotations

import numpy as np
import pytest

from analyzer.attention import AttentionModel, ModelConfig
from analyzer.attention.append import sample_tokens
from analyzer.attention.quantize import QuantizedKVCache, dequantize, quantize_vectors, run_quantize
from analyzer.errors import AnalyzerError


@pytest.mark.parametrize("bits", [8, 4, 2])
def test_codes_stay_in_range_and_error_is_half_a_step(bits: int) -> None:
    x = np.random.default_rng(1).normal(size=(3, 50, 8)) * np.array([0.01, 1.0, 30.0])[:, None, None]
    codes, scales = quantize_vectors(x, bits)
    qmax = 2 ** (bits - 1) - 1
    assert codes.dtype == np.int8 and scales.dtype == np.float16 and scales.shape == (3, 50, 1)
    assert np.abs(codes).max() == qmax  # the largest element of each vector uses the top code
    step = scales.astype(np.float64)
    error = np.abs(dequantize(codes, scales, np.float64) - x)
    assert np.all(error <= step / 2 + np.abs(x).max(axis=-1, keepdims=True) * 2e-3)  # + float16 scale rounding
    zero_codes, zero_scales = quantize_vectors(np.zeros((1, 2, 8)), bits)
    assert not zero_codes.any() and not zero_scales.any()


def test_quantized_cache_holds_dequantized_values_and_counts_codes_and_scales() -> None:
    config = ModelConfig(layers=2, kv_heads=2, head_dim=8)
    cache = QuantizedKVCache(config, 4)
    AttentionModel(config).forward(sample_tokens(config, 5), cache)
    k = cache.k[1]
    ratio = k / np.abs(k).max(axis=-1, keepdims=True) * 7  # codes = x / (max|x| / 7), up to float16 rounding
    assert np.abs(ratio - np.rint(ratio)).max() < 1e-2
    assert cache.stored_elements == 5 * 2 * 2 * 2 * 8  # tokens · layers · KV heads · (K, V) · head dim
    assert cache.stored_scales == 5 * 2 * 2 * 2
    assert cache.stored_bytes == 5 * 2 * 2 * 2 * (8 * 4 / 8 + 2)


def test_bytes_per_token_count_the_scales() -> None:
    r = run_quantize(ModelConfig(layers=2, kv_heads=2, head_dim=8), 12, 3)
    assert r.baseline_bytes_per_token == 2 * 2 * 2 * 8 * 2 == 128
    by_bits = {run.bits: run for run in r.runs}
    assert sorted(by_bits) == [4, 8]
    assert by_bits[8].bytes_per_token == 8 * (8 + 2) == 80  # not 64: eight 2-byte scales per token
    assert by_bits[4].bytes_per_token == 8 * (4 + 2) == 48
    for run in r.runs:
        assert run.counted_bytes == 12 * run.bytes_per_token
    assert r.to_dict()["runs"][0]["saving"] == pytest.approx(1 - 80 / 128)


def test_error_against_full_precision_grows_from_8_to_4_bits() -> None:
    config = ModelConfig()
    r = run_quantize(config, 32, 8)
    by_bits = {run.bits: run for run in r.runs}
    for run in r.runs:
        assert len(run.layer_max_abs) == len(run.layer_rel) == config.layers
        assert all(x > 0 for x in run.layer_max_abs) and run.max_abs_logits > 0
    assert max(by_bits[8].layer_max_abs) < max(by_bits[4].layer_max_abs)
    assert max(by_bits[8].layer_rel) < 0.02 < max(by_bits[4].layer_rel)
    assert by_bits[8].max_abs_logits < by_bits[4].max_abs_logits


def test_greedy_generation_matches_an_uncached_greedy_loop_and_reports_divergence() -> None:
    config = ModelConfig()
    r = run_quantize(config, 32, 8)
    model = AttentionModel(config)
    tokens = list(sample_tokens(config, 32))
    for _ in range(8):  # the reference, recomputing the whole sequence every step
        tokens.append(int(np.argmax(model.recompute(tokens).logits[-1])))
    assert r.reference_generated == tokens[32:]
    for run in r.runs:
        differing = [i for i, (a, b) in enumerate(zip(run.generated, r.reference_generated, strict=True)) if a != b]
        assert run.first_divergence == (differing[0] if differing else None)
    assert {run.bits: run.first_divergence for run in r.runs} == {8: None, 4: 2}  # seed 0, default model


@pytest.mark.parametrize("kwargs", [{"prompt": 0, "steps": 2}, {"prompt": 4, "steps": 0}])
def test_bad_quantize_input_is_an_error(kwargs: dict) -> None:
    with pytest.raises(AnalyzerError):
        run_quantize(ModelConfig(), **kwargs)
    with pytest.raises(AnalyzerError, match="bits"):
        quantize_vectors(np.ones((1, 1, 4)), 9)
