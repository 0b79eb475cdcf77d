"""Experiment "quantize": K/V stored in 8 and 4 bits with per-token scales, against the full-precision cache.

Quantization changes *precision*, not what is kept. Each cached vector (one KV head's K or V at one position)
is stored as integers q = round(x / s) in −(2^(b−1)−1)..2^(b−1)−1 with its own 16-bit scale
s = max|x| / (2^(b−1)−1) — symmetric, per token. Per-token scales let each token be quantized when it is written,
without waiting for a group of tokens; KIVI (arXiv:2402.02750) argues keys do better per channel, and Hugging
Face's QuantizedCache keeps its newest tokens unquantized — neither is done here, so these errors are the plain
per-token case. The model computes with the dequantized values; the bytes are those of the stored integers plus
the scales.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analyzer.attention.append import sample_tokens
from analyzer.attention.config import ModelConfig
from analyzer.attention.decoder import AttentionModel, causal_attention, rmsnorm, rope
from analyzer.attention.kvcache import KVCache
from analyzer.attention.kvsize import SCALE_BITS, quantized_bytes
from analyzer.errors import AnalyzerError

BITS = (8, 4)
BASELINE_BITS = 16  # the stored format the savings are measured against (BF16/FP16), whatever the toy computes in


def quantize_vectors(x: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-vector quantization along the last axis: int8 codes and one float16 scale per vector."""
    if not 2 <= bits <= 8:
        raise AnalyzerError(f"quantized K/V needs 2 to 8 bits per element (got {bits})")
    qmax = 2 ** (bits - 1) - 1
    scales = (np.abs(x).max(axis=-1, keepdims=True) / qmax).astype(np.float16)
    s = scales.astype(x.dtype)
    safe = np.where(s > 0, s, 1)
    codes = np.where(s > 0, np.clip(np.rint(x / safe), -qmax, qmax), 0).astype(np.int8)
    return codes, scales


def dequantize(codes: np.ndarray, scales: np.ndarray, dtype: type) -> np.ndarray:
    return codes.astype(dtype) * scales.astype(dtype)


class QuantizedKVCache(KVCache):
    """Quantizes every K/V vector as it is written (the current token's included) and keeps the dequantized values
    for attention; counts the integers and scales it stores."""

    def __init__(self, config: ModelConfig, bits: int) -> None:
        super().__init__(config)
        self.bits = bits
        self.stored_elements = 0
        self.stored_scales = 0

    def extend(self, layer: int, k_new: np.ndarray, v_new: np.ndarray) -> None:
        dtype = self.config.np_dtype
        parts = []
        for x in (k_new, v_new):
            codes, scales = quantize_vectors(x, self.bits)
            self.stored_elements += codes.size
            self.stored_scales += scales.size
            parts.append(dequantize(codes, scales, dtype))
        super().extend(layer, parts[0], parts[1])

    @property
    def stored_bytes(self) -> float:
        return quantized_bytes(self.stored_elements, self.stored_scales, self.bits)


@dataclass
class QuantRun:
    bits: int
    bytes_per_token: float
    counted_bytes: float  # integers + scales the cache actually stored for the prompt
    layer_max_abs: list[float]  # attention output (before wo), exact inputs, quantized vs exact K/V
    layer_rel: list[float]  # ‖Δ‖ / ‖o‖ of the same
    max_abs_logits: float  # whole prompt through the quantized cache vs the full-precision cache
    argmax_changed: list[int]  # prompt positions whose greedy next token differs
    generated: list[int]
    first_divergence: int | None  # first generated step that differs from full precision

    def to_dict(self, baseline: float) -> dict[str, Any]:
        return {"bits": self.bits, "bytes_per_token": self.bytes_per_token,
                "bytes_per_token_16bit": baseline, "saving": 1 - self.bytes_per_token / baseline,
                "bytes_stored_for_prompt": self.counted_bytes,
                "attention_output_max_abs_error_by_layer": self.layer_max_abs,
                "attention_output_relative_error_by_layer": self.layer_rel,
                "prompt_max_abs_logits": self.max_abs_logits, "prompt_argmax_changed_positions": self.argmax_changed,
                "generated_tokens": self.generated, "first_generated_step_differing": self.first_divergence}


@dataclass
class QuantizeResult:
    config: ModelConfig
    prompt: int
    steps: int
    reference_generated: list[int]
    runs: list[QuantRun] = field(default_factory=list)

    @property
    def vectors_per_token(self) -> int:
        return 2 * self.config.layers * self.config.kv_heads

    @property
    def elements_per_token(self) -> int:
        return self.vectors_per_token * self.config.head_dim

    @property
    def baseline_bytes_per_token(self) -> float:
        return self.elements_per_token * BASELINE_BITS / 8

    def formula(self, bits: int) -> str:
        c = self.config
        return (f"2·{c.layers}·{c.kv_heads} vectors × ({c.head_dim}·{bits}/8 + {SCALE_BITS // 8}) B "
                f"= {quantized_bytes(self.elements_per_token, self.vectors_per_token, bits):g} B")

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": "quantize", "config": self.config.to_dict(), "prompt_tokens": self.prompt,
                "generated_steps": self.steps,
                "scheme": "symmetric, per token: one float16 scale per cached vector (KV head × K or V × position)",
                "vectors_per_token": self.vectors_per_token, "elements_per_token": self.elements_per_token,
                "full_precision_generated_tokens": self.reference_generated,
                "runs": [r.to_dict(self.baseline_bytes_per_token) for r in self.runs]}


def greedy(model: AttentionModel, prompt: np.ndarray, steps: int, cache: KVCache) -> tuple[np.ndarray, list[int]]:
    """Prompt logits and `steps` greedily generated tokens (argmax, ties to the lowest id)."""
    out = model.forward(prompt, cache)
    logits, tokens = out.logits, []
    last = out.logits[-1]
    for _ in range(steps):
        token = int(np.argmax(last))
        tokens.append(token)
        last = model.forward([token], cache).logits[0]
    return logits, tokens


def layer_attention_errors(model: AttentionModel, hidden: np.ndarray, exact: KVCache,
                           bits: int) -> tuple[list[float], list[float]]:
    """Per layer, the attention output for every prompt position from the exact queries, reading exact vs
    quantized K/V: the error the cache alone adds at that layer, before any propagation."""
    c, p = model.config, model.params
    positions = np.arange(hidden.shape[1])
    max_abs, rel = [], []
    for i in range(c.layers):
        a = rmsnorm(hidden[i], p[f"layers.{i}.attn_norm"])
        q = rope((a @ p[f"layers.{i}.wq"]).reshape(len(positions), c.heads, c.head_dim), positions, c.np_dtype)
        k, v = exact.k[i], exact.v[i]
        kq, vq = (dequantize(*quantize_vectors(x, bits), c.np_dtype) for x in (k, v))
        o, _ = causal_attention(q, positions, k, v)
        oq, _ = causal_attention(q, positions, kq, vq)
        max_abs.append(float(np.abs(oq - o).max()))
        rel.append(float(np.linalg.norm(oq - o) / np.linalg.norm(o)))
    return max_abs, rel


def run_quantize(config: ModelConfig, prompt: int, steps: int, bits: tuple[int, ...] = BITS) -> QuantizeResult:
    """Prompt of `prompt` tokens, then `steps` greedy tokens, with the full-precision cache and each bit width."""
    if prompt < 1 or steps < 1:
        raise AnalyzerError("the quantize experiment needs --length ≥ 1 and --generate ≥ 1")
    if config.window:
        raise AnalyzerError("the quantize experiment runs the full-attention model (window 0)")
    model = AttentionModel(config)
    tokens = sample_tokens(config, prompt)
    exact = KVCache(config)
    reference_logits, reference_tokens = greedy(model, tokens, steps, exact)
    prompt_run = model.recompute(tokens)
    result = QuantizeResult(config=config, prompt=prompt, steps=steps, reference_generated=reference_tokens)
    for b in bits:
        cache = QuantizedKVCache(config, b)
        logits, generated = greedy(model, tokens, steps, cache)
        counted = QuantizedKVCache(config, b)
        model.forward(tokens, counted)
        layer_abs, layer_rel = layer_attention_errors(model, prompt_run.hidden, prompt_run.cache, b)
        diverged = [i for i, (x, y) in enumerate(zip(generated, reference_tokens, strict=True)) if x != y]
        result.runs.append(QuantRun(
            bits=b, bytes_per_token=quantized_bytes(result.elements_per_token, result.vectors_per_token, b),
            counted_bytes=counted.stored_bytes, layer_max_abs=layer_abs, layer_rel=layer_rel,
            max_abs_logits=float(np.abs(logits - reference_logits).max()),
            argmax_changed=[int(x) for x in np.flatnonzero(logits.argmax(axis=1) != reference_logits.argmax(axis=1))],
            generated=generated, first_divergence=diverged[0] if diverged else None))
    return result
