"""Seeded weights as plain NumPy arrays with documented names and shapes.

The names and the forward pass below are a contract: an independent implementation that reads an
exported `.npz` must be able to recompute the same logits without importing this package.

Forward pass (row vectors, `x @ W`; no biases):

    x_0[t]      = embed[token_t]
    for layer i = 0 .. layers-1 (the text calls it "layer i+1"):
        a       = rmsnorm(x_i[t], layers.i.attn_norm)           rmsnorm(x, g) = x / sqrt(mean(x**2) + 1e-6) * g
        q       = a @ layers.i.wq   -> heads    x head_dim      (head h = columns h*head_dim .. )
        k       = a @ layers.i.wk   -> kv_heads x head_dim
        v       = a @ layers.i.wv   -> kv_heads x head_dim
        q, k    = rope(q, t), rope(k, t)                         K is cached *after* RoPE; V is not rotated
        query head h reads KV head h // (heads // kv_heads)
        s_j     = q_h . k_j / sqrt(head_dim)   for j = 0 .. t   (causal: no j > t; with config window W > 0,
                                                              only j = max(0, t-W+1) .. t: W keys, itself included)
        o_h     = sum_j softmax(s)_j v_j
        x'      = x_i[t] + concat_h(o_h) @ layers.i.wo
        x_{i+1} = x' + silu(rmsnorm(x', layers.i.mlp_norm) @ layers.i.w1) @ layers.i.w2     silu(z) = z / (1 + e^-z)
    logits[t]   = rmsnorm(x_L[t], final_norm) @ unembed

    rope(x, t): for each head and pair p = 0 .. head_dim/2 - 1, theta = t * 10000 ** (-2p / head_dim),
    (x[2p], x[2p+1]) -> (x[2p] cos theta - x[2p+1] sin theta, x[2p] sin theta + x[2p+1] cos theta).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from analyzer.atomic import write_bytes_atomic
from analyzer.attention.config import ModelConfig
from analyzer.errors import AnalyzerError

Params = dict[str, np.ndarray]


def param_spec(config: ModelConfig) -> dict[str, tuple[tuple[int, ...], str]]:
    """Every parameter's name -> (shape, meaning), in creation order."""
    c = config
    spec: dict[str, tuple[tuple[int, ...], str]] = {
        "embed": ((c.vocab, c.d_model), "token embedding rows"),
    }
    for i in range(c.layers):
        spec[f"layers.{i}.attn_norm"] = ((c.d_model,), "RMSNorm gain before attention")
        spec[f"layers.{i}.wq"] = ((c.d_model, c.heads * c.head_dim), "query projection, head-major columns")
        spec[f"layers.{i}.wk"] = ((c.d_model, c.kv_heads * c.head_dim), "key projection, KV-head-major columns")
        spec[f"layers.{i}.wv"] = ((c.d_model, c.kv_heads * c.head_dim), "value projection, KV-head-major columns")
        spec[f"layers.{i}.wo"] = ((c.heads * c.head_dim, c.d_model), "attention output projection")
        spec[f"layers.{i}.mlp_norm"] = ((c.d_model,), "RMSNorm gain before the MLP")
        spec[f"layers.{i}.w1"] = ((c.d_model, c.d_ff), "MLP up projection (SiLU after it)")
        spec[f"layers.{i}.w2"] = ((c.d_ff, c.d_model), "MLP down projection")
    spec["final_norm"] = ((c.d_model,), "RMSNorm gain before the output projection")
    spec["unembed"] = ((c.d_model, c.vocab), "output projection to logits")
    return spec


def init_params(config: ModelConfig) -> Params:
    """Random weights from `config.seed`: N(0, 1/fan_in) matrices keep activations O(1); gains 1 + N(0, 0.1²)."""
    rng = np.random.default_rng(config.seed)
    params: Params = {}
    for name, (shape, _) in param_spec(config).items():
        if len(shape) == 1:
            values = 1.0 + 0.1 * rng.standard_normal(shape)
        elif name == "embed":
            values = rng.standard_normal(shape)
        else:
            values = rng.standard_normal(shape) / np.sqrt(shape[0])
        params[name] = values.astype(config.np_dtype)
    return params


def check_params(config: ModelConfig, params: Params) -> None:
    """Refuse parameters whose names or shapes do not match the config (e.g. a hand-edited export)."""
    spec = param_spec(config)
    missing = sorted(set(spec) - set(params))
    extra = sorted(set(params) - set(spec))
    if missing or extra:
        raise AnalyzerError(f"parameters do not match the config: missing {missing or 'none'}, "
                            f"unexpected {extra or 'none'}")
    for name, (shape, _) in spec.items():
        if params[name].shape != shape:
            raise AnalyzerError(f"parameter {name} has shape {params[name].shape}, expected {shape}")


def export_params(config: ModelConfig, params: Params, path: str | Path) -> None:
    """Write the config (as JSON under `__config__`) and every array to one `.npz`, atomically."""
    buffer = io.BytesIO()
    arrays: dict[str, Any] = {"__config__": np.array(json.dumps(config.to_dict())), **params}
    np.savez(buffer, **arrays)
    write_bytes_atomic(path, buffer.getvalue())


def load_params(path: str | Path) -> tuple[ModelConfig, Params]:
    """Read an export back; the config comes from the file so sizes cannot drift from the arrays."""
    try:
        with np.load(path, allow_pickle=False) as data:
            raw: dict[str, Any] = json.loads(str(data["__config__"]))
            params = {name: data[name] for name in data.files if name != "__config__"}
    except (OSError, KeyError, ValueError) as exc:
        raise AnalyzerError(f"cannot read parameters from {path}: {exc}; export them again") from exc
    config = ModelConfig(**raw)
    check_params(config, params)
    return config, params
