"""The KV cache and the counters that make "what did the cache save" an exact number, not an estimate."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from analyzer.attention.config import ModelConfig


@dataclass
class Counters:
    """Work done by one or more forward calls, per layer (index 0 = layer 1).

    - kv_computed: K/V vector pairs projected (one K and one V of head_dim), summed over KV heads.
    - kv_reused: K/V pairs read from the cache instead of being projected, summed over KV heads.
    - qk_dots: query·key dot products, summed over query heads (each query reads positions 0..t only).
    - macs: multiply-adds of every matrix product (projections, QK, weights·V, MLP, logits).
    """

    layers: int
    kv_computed: list[int] = field(default_factory=list)
    kv_reused: list[int] = field(default_factory=list)
    qk_dots: list[int] = field(default_factory=list)
    macs: int = 0

    def __post_init__(self) -> None:
        for name in ("kv_computed", "kv_reused", "qk_dots"):
            if not getattr(self, name):
                setattr(self, name, [0] * self.layers)

    @property
    def kv_computed_total(self) -> int:
        return sum(self.kv_computed)

    @property
    def kv_reused_total(self) -> int:
        return sum(self.kv_reused)

    @property
    def qk_total(self) -> int:
        return sum(self.qk_dots)

    def to_dict(self) -> dict[str, object]:
        return {"kv_computed_by_layer": list(self.kv_computed), "kv_reused_by_layer": list(self.kv_reused),
                "qk_dots_by_layer": list(self.qk_dots), "kv_computed": self.kv_computed_total,
                "kv_reused": self.kv_reused_total, "qk_dots": self.qk_total, "macs": self.macs}


class KVCache:
    """Per layer, K (after RoPE) and V for every cached position: arrays of shape (kv_heads, length, head_dim).

    The model talks to a cache through `seen`, `extend`, `view`, `observe_attention` and `step_done`, so the
    capacity strategies (rolling window, quantized, evicting, offloaded caches) are subclasses that change what is
    kept, at what precision or where, while the forward pass stays one code path.
    """

    wants_attention = False  # True when the cache needs the attention weights (score-based eviction)

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        empty = np.zeros((config.kv_heads, 0, config.head_dim), dtype=config.np_dtype)
        self.k: list[np.ndarray] = [empty.copy() for _ in range(config.layers)]
        self.v: list[np.ndarray] = [empty.copy() for _ in range(config.layers)]

    @property
    def length(self) -> int:
        """Positions cached (every layer holds the same number once a forward call returns)."""
        return int(self.k[0].shape[1])

    @property
    def seen(self) -> int:
        """Positions processed so far: where the next token goes. Equal to `length` unless positions were dropped."""
        return self.length

    def extend(self, layer: int, k_new: np.ndarray, v_new: np.ndarray) -> None:
        self.k[layer] = np.concatenate([self.k[layer], k_new], axis=1)
        self.v[layer] = np.concatenate([self.v[layer], v_new], axis=1)

    def view(self, layer: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """K, V and their positions in ascending order; None means positions 0..length-1 (the fast path)."""
        return self.k[layer], self.v[layer], None

    def observe_attention(self, layer: int, key_positions: np.ndarray, weights: np.ndarray) -> None:
        """Called with one query row's attention weights (kv_heads, group, keys) when `wants_attention`."""

    def step_done(self) -> None:
        """Called after every layer has processed a forward call's tokens (eviction happens here)."""

    def truncated(self, length: int) -> KVCache:
        """A copy holding only positions < length: what survives when the token at `length` changes."""
        if not 0 <= length <= self.length:
            raise ValueError(f"cannot keep {length} of {self.length} cached positions")
        out = KVCache(self.config)
        out.k = [k[:, :length].copy() for k in self.k]
        out.v = [v[:, :length].copy() for v in self.v]
        return out

    def copy(self) -> KVCache:
        return self.truncated(self.length)

    @classmethod
    def from_blocks(cls, config: ModelConfig, blocks: list[tuple[list[np.ndarray], list[np.ndarray]]]) -> KVCache:
        """Concatenate cached blocks (each: per-layer K list, per-layer V list) into one cache, in order."""
        out = cls(config)
        for layer in range(config.layers):
            if blocks:
                out.k[layer] = np.concatenate([b[0][layer] for b in blocks], axis=1)
                out.v[layer] = np.concatenate([b[1][layer] for b in blocks], axis=1)
        return out


def closed_form_counters(config: ModelConfig, start: int, n: int) -> Counters:
    """What `forward` must count for n new tokens after `start` cached ones, derived on paper.

    Per layer: n·kv_heads K/V pairs computed, start·kv_heads reused, and heads · Σ_{t=start}^{start+n-1} (t+1)
    QK products = heads · (T(T+1)/2 − start(start+1)/2) with T = start + n. Used for lengths too long to run.
    """
    c = config
    end = start + n
    keys_read = end * (end + 1) // 2 - start * (start + 1) // 2
    macs = c.layers * (n * (2 * c.d_model * c.heads * c.head_dim + 2 * c.d_model * c.kv_heads * c.head_dim
                            + 2 * c.d_model * c.d_ff) + 2 * keys_read * c.heads * c.head_dim) + n * c.d_model * c.vocab
    return Counters(c.layers, kv_computed=[n * c.kv_heads] * c.layers, kv_reused=[start * c.kv_heads] * c.layers,
                    qk_dots=[keys_read * c.heads] * c.layers, macs=macs)
