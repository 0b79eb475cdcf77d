"""Experiment "append": one more token with the cache vs. recomputing the whole sequence.

It answers which work the cache removes (projecting old K/V, old queries' QK products) and which it keeps
(the new query still reads every cached key), and checks the two paths give the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analyzer.attention.config import ModelConfig
from analyzer.attention.decoder import AttentionModel
from analyzer.attention.kvcache import Counters
from analyzer.errors import AnalyzerError


def sample_tokens(config: ModelConfig, n: int, stream: int = 1) -> np.ndarray:
    """Deterministic token ids from the seed (a separate stream from the weights)."""
    return np.random.default_rng([config.seed, stream]).integers(0, config.vocab, size=n)


@dataclass
class AppendResult:
    config: ModelConfig
    prefill: int
    max_abs_logits: float
    max_abs_hidden: float
    max_abs_kv: float
    cached: Counters
    recomputed: Counters
    qk_curve: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def within_tolerance(self) -> bool:
        return max(self.max_abs_logits, self.max_abs_hidden, self.max_abs_kv) <= self.config.tolerance

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": "append", "config": self.config.to_dict(), "prefill_tokens": self.prefill,
                "max_abs_delta": {"logits": self.max_abs_logits, "hidden": self.max_abs_hidden,
                                  "kv": self.max_abs_kv},
                "tolerance": self.config.tolerance, "within_tolerance": self.within_tolerance,
                "with_cache": self.cached.to_dict(), "without_cache": self.recomputed.to_dict(),
                "qk_curve": [{"length": n, "with_cache": a, "without_cache": b} for n, a, b in self.qk_curve]}


def run_append(config: ModelConfig, prefill: int, curve_max: int = 0) -> AppendResult:
    """Prefill `prefill` tokens, append one with the cache, and compare with a full recompute of prefill+1."""
    if prefill < 1:
        raise AnalyzerError(f"--length must be at least 1 (got {prefill})")
    model = AttentionModel(config)
    tokens = sample_tokens(config, prefill + 1)
    cache = model.forward(tokens[:prefill]).cache
    cached = model.new_counters()
    step = model.forward(tokens[prefill:], cache, cached)
    recomputed = model.new_counters()
    full = model.recompute(tokens, recomputed)
    kv_delta = max(max(float(np.abs(step.cache.k[i] - full.cache.k[i]).max()),
                       float(np.abs(step.cache.v[i] - full.cache.v[i]).max())) for i in range(config.layers))
    return AppendResult(
        config=config, prefill=prefill,
        max_abs_logits=float(np.abs(step.logits[-1] - full.logits[-1]).max()),
        max_abs_hidden=float(np.abs(step.hidden[:, -1] - full.hidden[:, -1]).max()),
        max_abs_kv=kv_delta, cached=cached, recomputed=recomputed,
        qk_curve=qk_by_length(model, curve_max) if curve_max else [],
    )


def qk_by_length(model: AttentionModel, max_len: int) -> list[tuple[int, int, int]]:
    """Measured QK products to produce the token at each length: decode with the cache vs. recompute all."""
    tokens = sample_tokens(model.config, max_len, stream=2)
    cache = None
    rows: list[tuple[int, int, int]] = []
    for length in range(1, max_len + 1):
        with_cache = model.new_counters()
        cache = model.forward(tokens[length - 1:length], cache, with_cache).cache
        without = model.new_counters()
        model.recompute(tokens[:length], without)
        rows.append((length, with_cache.qk_total, without.qk_total))
    return rows
