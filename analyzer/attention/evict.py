"""Experiment "evict": a K/V budget on a full-attention model — which positions to keep, and what dropping costs.

Eviction changes *what is kept* on a model that was not built for it (unlike a window). Tokens stream through the
model one at a time (teacher-forced: every policy sees the same tokens), and before each token is written the
cache drops positions so that at most `budget` are held per layer — the new token included, so a query reads
`budget` keys, as a window of W reads W. Policies:

- recent: the last `budget` positions (the "window attention" baseline that StreamingLLM shows failing);
- sinks + recent: the first `sinks` positions plus the most recent ones (StreamingLLM, arXiv:2309.17453);
- heavy hitters + recent: half the budget for the most recent positions, the rest for the positions that have
  received the most attention so far, summed over the layer's query heads (H2O, arXiv:2306.14048; H2O scores each
  head separately, here one score per layer keeps one set of positions per layer).

Kept keys keep the rotation of their original position; StreamingLLM instead re-numbers positions inside the
cache, which this model does not do. Output deviation is measured against the full cache on the same tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from analyzer.attention.append import sample_tokens
from analyzer.attention.config import ModelConfig
from analyzer.attention.decoder import AttentionModel
from analyzer.attention.kvcache import KVCache
from analyzer.attention.window import decode_each
from analyzer.errors import AnalyzerError

STORAGE_BITS = 16  # bytes kept are counted in a 16-bit cache format, like kv-size

Policy = Callable[[np.ndarray, np.ndarray, int], np.ndarray]  # (positions, scores, budget) -> kept indices


def keep_recent(positions: np.ndarray, scores: np.ndarray, budget: int) -> np.ndarray:
    return np.arange(max(0, len(positions) - budget), len(positions))


def keep_sinks_and_recent(sinks: int) -> Policy:
    def policy(positions: np.ndarray, scores: np.ndarray, budget: int) -> np.ndarray:
        head = np.flatnonzero(positions < sinks)[:budget]
        recent = budget - len(head)  # sinks not in the cache leave their share to recent positions
        tail = np.arange(len(positions) - recent, len(positions)) if recent else np.arange(0)
        return np.union1d(head, tail)
    return policy


def keep_heavy_and_recent(positions: np.ndarray, scores: np.ndarray, budget: int) -> np.ndarray:
    recent = budget // 2
    tail = np.arange(len(positions) - recent, len(positions)) if recent else np.arange(0, dtype=np.int64)
    rest = np.arange(len(positions) - recent)
    order = rest[np.argsort(-scores[rest], kind="stable")]  # ties go to the earlier position
    return np.union1d(order[:budget - recent], tail)


POLICIES = ("recent", "sinks + recent", "heavy hitters + recent")


def policy_named(name: str, sinks: int) -> Policy:
    if name == "recent":
        return keep_recent
    if name == "sinks + recent":
        return keep_sinks_and_recent(sinks)
    if name == "heavy hitters + recent":
        return keep_heavy_and_recent
    raise AnalyzerError(f"unknown eviction policy {name!r}; choose one of: {', '.join(POLICIES)}")


class EvictingKVCache(KVCache):
    """Holds K/V with their positions and the attention each position has received so far. Before new positions
    are written it drops positions chosen by `policy` so that, new ones included, at most `budget` are held: the
    budget is the number of keys a query reads, as a window of W reads W (budget None: keep everything)."""

    wants_attention = True

    def __init__(self, config: ModelConfig, policy: Policy | None = None, budget: int | None = None) -> None:
        super().__init__(config)
        self.policy, self.budget = policy, budget
        self.positions = [np.zeros(0, dtype=np.int64) for _ in range(config.layers)]
        self.scores = [np.zeros(0) for _ in range(config.layers)]
        self.last_row: list[np.ndarray] = [np.zeros(0) for _ in range(config.layers)]  # newest query's weights
        self._seen = 0
        self._pending = 0

    @property
    def seen(self) -> int:
        return self._seen

    def extend(self, layer: int, k_new: np.ndarray, v_new: np.ndarray) -> None:
        n = k_new.shape[1]
        if self.policy is not None and self.budget is not None:
            if n > self.budget:
                raise AnalyzerError(f"cannot write {n} positions into a cache with a budget of {self.budget}")
            if len(self.positions[layer]) + n > self.budget:
                keep = self.policy(self.positions[layer], self.scores[layer], self.budget - n)
                self.k[layer], self.v[layer] = self.k[layer][:, keep], self.v[layer][:, keep]
                self.positions[layer], self.scores[layer] = self.positions[layer][keep], self.scores[layer][keep]
        super().extend(layer, k_new, v_new)
        self.positions[layer] = np.concatenate([self.positions[layer], np.arange(self._seen, self._seen + n)])
        self.scores[layer] = np.concatenate([self.scores[layer], np.zeros(n)])
        self._pending = n

    def view(self, layer: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        return self.k[layer], self.v[layer], self.positions[layer]

    def observe_attention(self, layer: int, key_positions: np.ndarray, weights: np.ndarray) -> None:
        per_key = weights.sum(axis=(0, 1))  # over KV heads and the query heads of each group
        self.scores[layer][np.searchsorted(self.positions[layer], key_positions)] += per_key
        self.last_row[layer] = per_key / (weights.shape[0] * weights.shape[1])

    def step_done(self) -> None:
        self._seen += self._pending
        self._pending = 0


@dataclass
class EvictRun:
    policy: str
    budget: int
    kept_per_layer: list[int]
    kept_positions: list[list[int]]  # per layer, at the end of the stream
    bytes_kept: float
    by_position: list[float]  # max |Δ logits| vs the full cache at each position
    argmax_changed: list[int]

    @property
    def first_change(self) -> int | None:
        """The first position whose greedy next token differs from the full cache's."""
        return self.argmax_changed[0] if self.argmax_changed else None

    def to_dict(self, full_bytes: float) -> dict[str, Any]:
        return {"policy": self.policy, "budget": self.budget, "kv_kept_per_layer_per_kv_head": self.kept_per_layer,
                "kept_positions_by_layer": self.kept_positions, "bytes_kept": self.bytes_kept,
                "bytes_full_cache": full_bytes, "saving": 1 - self.bytes_kept / full_bytes,
                "max_abs_logits_by_position": self.by_position, "max_abs_logits": max(self.by_position),
                "argmax_changed_positions": self.argmax_changed, "first_position_next_token_changes": self.first_change}


@dataclass(frozen=True)
class Threshold:
    """Budgets tried from length − 1 downwards: every budget ≥ `stable_from` changes no next token; at
    `stable_from` − 1 the next token first changes at `position` (None: no budget ≥ 1 changes one)."""

    policy: str
    stable_from: int
    position: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "no_next_token_changes_from_budget": self.stable_from,
                "budget_below_changes_position": self.position}


@dataclass
class EvictResult:
    config: ModelConfig
    length: int
    sinks: int
    sink_share: float  # attention the last query gives positions < sinks (mean over layers and query heads)
    runs: list[EvictRun]
    thresholds: list[Threshold]

    @property
    def bytes_per_position(self) -> float:
        c = self.config
        return 2 * c.layers * c.kv_heads * c.head_dim * STORAGE_BITS / 8

    @property
    def full_bytes(self) -> float:
        return self.length * self.bytes_per_position

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": "evict", "config": self.config.to_dict(), "length": self.length, "sinks": self.sinks,
                "bytes_per_position_16bit": self.bytes_per_position,
                "full_cache_sink_attention_share": self.sink_share,
                "uniform_sink_attention_share": min(self.sinks, self.length) / self.length,
                "runs": [r.to_dict(self.full_bytes) for r in self.runs],
                "thresholds": [t.to_dict() for t in self.thresholds]}


def default_budgets(length: int) -> tuple[int, ...]:
    return tuple(sorted({max(1, length * k // 4) for k in (1, 2, 3)}))


def run_evict(config: ModelConfig, length: int, budgets: tuple[int, ...] | None = None,
              sinks: int = 4, policies: tuple[str, ...] = POLICIES) -> EvictResult:
    """Stream `length` tokens through the full cache and through each policy at each budget."""
    if length < 2:
        raise AnalyzerError(f"--length must be at least 2 for the evict experiment (got {length})")
    if sinks < 0:
        raise AnalyzerError("--sinks must be 0 or more positions")
    if config.window:
        raise AnalyzerError("the evict experiment runs the full-attention model (window 0)")
    budgets = budgets or default_budgets(length)
    if min(budgets) < 1:
        raise AnalyzerError("--budget must be at least 1 position")
    model = AttentionModel(config)
    tokens = sample_tokens(config, length)
    reference_cache = EvictingKVCache(config)
    reference = decode_each(model, tokens, reference_cache)
    s = min(sinks, length)
    share = float(np.mean([row[:s].sum() for row in reference_cache.last_row]))
    result = EvictResult(config=config, length=length, sinks=sinks, sink_share=share, runs=[], thresholds=[])
    for name in policies:
        policy = policy_named(name, sinks)
        result.thresholds.append(_threshold(model, tokens, reference, name, policy))
        for budget in budgets:
            cache = EvictingKVCache(config, policy, budget)
            logits = decode_each(model, tokens, cache)
            kept = [len(p) for p in cache.positions]
            result.runs.append(EvictRun(
                policy=name, budget=budget, kept_per_layer=kept,
                kept_positions=[[int(x) for x in p] for p in cache.positions],
                bytes_kept=max(kept) * result.bytes_per_position,
                by_position=[float(x) for x in np.abs(logits - reference).max(axis=1)],
                argmax_changed=[int(x) for x in np.flatnonzero(logits.argmax(axis=1) != reference.argmax(axis=1))]))
    return result



def _threshold(model: AttentionModel, tokens: np.ndarray, reference: np.ndarray, name: str,
               policy: Policy) -> Threshold:
    """Walk the budget down from length − 1 until a greedy next token changes."""
    for budget in range(len(tokens) - 1, 0, -1):
        logits = decode_each(model, tokens, EvictingKVCache(model.config, policy, budget))
        changed = np.flatnonzero(logits.argmax(axis=1) != reference.argmax(axis=1))
        if changed.size:
            return Threshold(name, budget + 1, int(changed[0]))
    return Threshold(name, 1, None)
