"""Experiment "edit": change the token at position m of a cached sequence and see which K/V go stale.

Layer 1's K/V at position t depend only on token t (and t itself, through RoPE), so only position m changes
there. Every later layer reads the previous layer's output, which at t ≥ m has attended to the edited token,
so from layer 2 on every position ≥ m changes. A prefix cache can therefore keep only positions < m.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from analyzer.attention.append import sample_tokens
from analyzer.attention.config import ModelConfig
from analyzer.attention.decoder import AttentionModel
from analyzer.attention.kvcache import Counters
from analyzer.errors import AnalyzerError


@dataclass
class EditResult:
    config: ModelConfig
    length: int
    position: int
    old_token: int
    new_token: int
    delta: np.ndarray  # (layers, length): max |Δ| over KV heads and K and V between old and edited K/V
    changed_logits: np.ndarray  # (length,): positions whose logits moved beyond tolerance
    max_abs_logits: float  # reuse of positions < m + recompute of the rest vs. a full recompute
    max_abs_kv: float
    reused: Counters
    recomputed: Counters

    @property
    def changed(self) -> np.ndarray:
        return self.delta > self.config.tolerance

    def changed_positions(self, layer: int) -> list[int]:
        return [int(p) for p in np.flatnonzero(self.changed[layer])]

    @property
    def unchanged_kv(self) -> int:
        """K/V pairs (over layers and KV heads) identical before and after the edit."""
        return int((~self.changed).sum()) * self.config.kv_heads

    @property
    def prefix_reusable_kv(self) -> int:
        """K/V pairs a prefix cache may keep: positions < m, every layer."""
        return self.position * self.config.layers * self.config.kv_heads

    @property
    def must_recompute_kv(self) -> int:
        return (self.length - self.position) * self.config.layers * self.config.kv_heads

    @property
    def within_tolerance(self) -> bool:
        return max(self.max_abs_logits, self.max_abs_kv) <= self.config.tolerance

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config.to_dict(), "length": self.length, "position": self.position,
                "old_token": self.old_token, "new_token": self.new_token,
                "changed_positions_by_layer": [self.changed_positions(i) for i in range(self.config.layers)],
                "max_abs_kv_change_by_layer": [float(x) for x in self.delta.max(axis=1)],
                "changed_logit_positions": [int(p) for p in np.flatnonzero(self.changed_logits)],
                "unchanged_kv": self.unchanged_kv, "prefix_reusable_kv": self.prefix_reusable_kv,
                "must_recompute_kv": self.must_recompute_kv,
                "reuse_vs_recompute_max_abs_delta": {"logits": self.max_abs_logits, "kv": self.max_abs_kv},
                "tolerance": self.config.tolerance, "within_tolerance": self.within_tolerance,
                "with_prefix_reuse": self.reused.to_dict(), "full_recompute": self.recomputed.to_dict()}


def run_edit(config: ModelConfig, length: int, position: int) -> EditResult:
    """Cache `length` tokens, replace token `position`, compare K/V per layer and position."""
    if length < 2:
        raise AnalyzerError(f"--length must be at least 2 for an edit (got {length})")
    if not 0 <= position < length:
        raise AnalyzerError(f"--edit-pos must be in 0..{length - 1} (got {position})")
    model = AttentionModel(config)
    tokens = sample_tokens(config, length)
    edited = tokens.copy()
    edited[position] = (tokens[position] + 1) % config.vocab
    before = model.forward(tokens)
    recomputed = model.new_counters()
    after = model.recompute(edited, recomputed)
    delta = np.stack([np.maximum(np.abs(before.cache.k[i] - after.cache.k[i]).max(axis=(0, 2)),
                                 np.abs(before.cache.v[i] - after.cache.v[i]).max(axis=(0, 2)))
                      for i in range(config.layers)])
    reused = model.new_counters()
    patched = model.forward(edited[position:], before.cache.truncated(position), reused)
    kv = max(max(float(np.abs(patched.cache.k[i] - after.cache.k[i]).max()),
                 float(np.abs(patched.cache.v[i] - after.cache.v[i]).max())) for i in range(config.layers))
    return EditResult(
        config=config, length=length, position=position,
        old_token=int(tokens[position]), new_token=int(edited[position]), delta=delta,
        changed_logits=np.abs(before.logits - after.logits).max(axis=1) > config.tolerance,
        max_abs_logits=float(np.abs(patched.logits - after.logits[position:]).max()),
        max_abs_kv=kv, reused=reused, recomputed=recomputed,
    )


def run_edit_contrast(config: ModelConfig, length: int, position: int) -> list[EditResult]:
    """The edit on the configured model and on a 1-layer twin (same sizes and seed), deepest first."""
    results = [run_edit(config, length, position)]
    if config.layers != 1:
        results.append(run_edit(replace(config, layers=1), length, position))
    return results
