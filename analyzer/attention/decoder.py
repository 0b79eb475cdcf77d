"""The toy decoder's forward pass, with and without a KV cache (see `params` for the exact math).

One code path serves both: `forward(tokens, cache)` runs the new tokens at positions cache.length.. and reads
every earlier K/V from the cache; `recompute(tokens)` is the same call on an empty cache, so it projects every
K/V again. Attention is evaluated one query row at a time over keys 0..t only, so the counters record the
causal work actually done rather than a masked square.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from analyzer.attention.config import RMS_EPS, ROPE_BASE, ModelConfig
from analyzer.attention.kvcache import Counters, KVCache
from analyzer.attention.params import Params, check_params, init_params
from analyzer.errors import AnalyzerError


@dataclass
class ForwardResult:
    """logits: (n_new, vocab); hidden: (layers + 1, n_new, d_model), hidden[0] the embeddings and hidden[i] the
    residual stream after layer i; cache: the cache now holding every position up to the last new token."""

    logits: np.ndarray
    hidden: np.ndarray
    cache: KVCache


def rmsnorm(x: np.ndarray, gain: np.ndarray) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + RMS_EPS) * gain


def silu(z: np.ndarray) -> np.ndarray:
    return z / (1.0 + np.exp(-z))


def rope(x: np.ndarray, positions: np.ndarray, dtype: type) -> np.ndarray:
    """Rotate pairs (2p, 2p+1) of every head by position * base^(-2p/head_dim); x is (n, heads, head_dim)."""
    half = x.shape[-1] // 2
    inv_freq = ROPE_BASE ** (-2.0 * np.arange(half) / x.shape[-1])
    theta = positions[:, None].astype(np.float64) * inv_freq[None, :]
    cos = np.cos(theta).astype(dtype)[:, None, :]
    sin = np.sin(theta).astype(dtype)[:, None, :]
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def causal_attention(q: np.ndarray, positions: np.ndarray, k: np.ndarray, v: np.ndarray,
                     key_positions: np.ndarray | None = None, window: int = 0,
                     observe: Callable[[np.ndarray, np.ndarray], None] | None = None) -> tuple[np.ndarray, int]:
    """q: (n, heads, hd) at `positions`; k, v: (kv_heads, T, hd). Query head h reads KV head h // group.

    Keys are at `key_positions` (ascending; None = 0..T-1). The query at t reads the keys at positions ≤ t, and with
    a window W only those > t − W. Returns the output and the number of keys read summed over rows (per KV head).
    """
    n, heads, hd = q.shape
    kv_heads = k.shape[0]
    grouped = q.reshape(n, kv_heads, heads // kv_heads, hd)
    scale = q.dtype.type(1.0 / np.sqrt(hd))
    keys_t = np.ascontiguousarray(k.transpose(0, 2, 1))  # (kv_heads, hd, T): each row's slice stays contiguous
    out = np.empty_like(grouped)
    keys_read = 0
    for row, t in enumerate(positions):
        first = int(t) - window + 1 if window else 0
        if key_positions is None:
            lo, hi = max(first, 0), int(t) + 1
        else:
            lo = int(np.searchsorted(key_positions, first, "left"))
            hi = int(np.searchsorted(key_positions, t, "right"))
        scores = np.matmul(grouped[row], keys_t[:, :, lo:hi])  # (kv_heads, group, hi-lo): exactly hi-lo QK each
        scores *= scale
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        if observe is not None:
            observe(np.arange(lo, hi) if key_positions is None else key_positions[lo:hi], scores)
        out[row] = np.matmul(scores, v[:, lo:hi])
        keys_read += hi - lo
    return out.reshape(n, heads, hd), keys_read


def old_keys_read(cache_positions: np.ndarray | None, start: int, window: int) -> int:
    """Cached positions (< start) that at least one of the new queries reads: the first new query reaches back
    furthest, to start − W + 1 with a window W."""
    first = start - window + 1 if window else 0
    if cache_positions is None:
        return start - max(first, 0)
    old = cache_positions[cache_positions < start]
    return int(np.count_nonzero(old >= first))


def as_tokens(tokens: Sequence[int] | np.ndarray, vocab: int) -> np.ndarray:
    arr = np.asarray(tokens)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise AnalyzerError("tokens must be a flat list of integers")
    if arr.size and (arr.min() < 0 or arr.max() >= vocab):
        raise AnalyzerError(f"token ids must be in 0..{vocab - 1}")
    return arr.astype(np.int64)


class AttentionModel:
    """A seeded decoder-only transformer whose parameters are plain arrays (see `params.param_spec`)."""

    def __init__(self, config: ModelConfig, params: Params | None = None) -> None:
        self.config = config
        self.params = params if params is not None else init_params(config)
        check_params(config, self.params)

    def forward(self, tokens: Sequence[int] | np.ndarray, cache: KVCache | None = None,
                counters: Counters | None = None) -> ForwardResult:
        """Process `tokens` after the cached positions, extending `cache` in place (a fresh one if None)."""
        c, p = self.config, self.params
        ids = as_tokens(tokens, c.vocab)
        cache = cache if cache is not None else KVCache(c)
        if cache.config != c:
            raise AnalyzerError("the KV cache was built for a different model config")
        start, n = cache.seen, len(ids)
        positions = np.arange(start, start + n)
        x = p["embed"][ids]
        hidden = [x]
        for i in range(c.layers):
            a = rmsnorm(x, p[f"layers.{i}.attn_norm"])
            q = rope((a @ p[f"layers.{i}.wq"]).reshape(n, c.heads, c.head_dim), positions, c.np_dtype)
            k = rope((a @ p[f"layers.{i}.wk"]).reshape(n, c.kv_heads, c.head_dim), positions, c.np_dtype)
            v = (a @ p[f"layers.{i}.wv"]).reshape(n, c.kv_heads, c.head_dim)
            cache.extend(i, k.transpose(1, 0, 2), v.transpose(1, 0, 2))
            keys, values, key_positions = cache.view(i)
            observe = partial(cache.observe_attention, i) if cache.wants_attention else None
            o, keys_read = causal_attention(q, positions, keys, values, key_positions, c.window, observe)
            x = x + o.reshape(n, c.heads * c.head_dim) @ p[f"layers.{i}.wo"]
            m = rmsnorm(x, p[f"layers.{i}.mlp_norm"])
            x = x + silu(m @ p[f"layers.{i}.w1"]) @ p[f"layers.{i}.w2"]
            hidden.append(x)
            if counters is not None:
                counters.kv_computed[i] += n * c.kv_heads
                counters.kv_reused[i] += old_keys_read(key_positions, start, c.window) * c.kv_heads
                counters.qk_dots[i] += keys_read * c.heads
                counters.macs += n * (c.d_model * c.heads * c.head_dim * 2 + 2 * c.d_model * c.kv_heads * c.head_dim
                                      + 2 * c.d_model * c.d_ff) + 2 * keys_read * c.heads * c.head_dim
        cache.step_done()
        logits = rmsnorm(x, p["final_norm"]) @ p["unembed"]
        if counters is not None:
            counters.macs += n * c.d_model * c.vocab
        return ForwardResult(logits=logits, hidden=np.stack(hidden), cache=cache)

    def recompute(self, tokens: Sequence[int] | np.ndarray, counters: Counters | None = None) -> ForwardResult:
        """The no-cache path: every position's K/V projected again and every causal QK product redone."""
        return self.forward(tokens, None, counters)

    def new_counters(self) -> Counters:
        return Counters(self.config.layers)
