"""Experiment "window": sliding-window attention kept in a rolling K/V cache of W positions.

A window changes *what is kept*. The query at t reads only positions t−W+1..t (W keys, itself included, the
mask Hugging Face Transformers uses for Mistral-style models), so a cache never needs more than the last W
positions: position t goes into slot t mod W and overwrites t−W, which no later query reads. The experiment
checks that this rolling cache gives the windowed model's outputs, counts what it keeps, measures what the
window loses against full attention, and shows which cached state a second request can still start from.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from analyzer.attention.append import sample_tokens
from analyzer.attention.config import ModelConfig
from analyzer.attention.decoder import AttentionModel
from analyzer.attention.kvcache import Counters, KVCache
from analyzer.errors import AnalyzerError

EXTRA_TOKENS = 4  # tokens each second request adds after the part it shares with the first


class RollingKVCache(KVCache):
    """W slots per layer; position t lives in slot t mod W (the rolling buffer of Mistral 7B). It takes one token
    per forward call, as in decoding: a longer call would overwrite keys its own earlier queries still read."""

    def __init__(self, config: ModelConfig, start: int = 0) -> None:
        if config.window < 1:
            raise AnalyzerError("a rolling cache needs a windowed model (window ≥ 1)")
        super().__init__(config)
        w = config.window
        self.k = [np.zeros((config.kv_heads, w, config.head_dim), dtype=config.np_dtype) for _ in range(config.layers)]
        self.v = [np.zeros_like(k) for k in self.k]
        self.slot_position = [np.full(w, -1, dtype=np.int64) for _ in range(config.layers)]
        self._seen = start  # a cache may start later in a sequence: positions before `start` were never seen

    @property
    def length(self) -> int:
        """Positions held (per layer, per KV head): never more than W."""
        return int(np.count_nonzero(self.slot_position[0] >= 0))

    @property
    def seen(self) -> int:
        return self._seen

    def held(self, layer: int = 0) -> list[int]:
        return sorted(int(p) for p in self.slot_position[layer] if p >= 0)

    def extend(self, layer: int, k_new: np.ndarray, v_new: np.ndarray) -> None:
        if k_new.shape[1] != 1:
            raise AnalyzerError("a rolling cache takes one token per forward call")
        slot = self._seen % self.config.window
        self.k[layer][:, slot] = k_new[:, 0]
        self.v[layer][:, slot] = v_new[:, 0]
        self.slot_position[layer][slot] = self._seen

    def view(self, layer: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        positions = self.slot_position[layer]
        order = np.argsort(positions)[np.count_nonzero(positions < 0):]
        return self.k[layer][:, order], self.v[layer][:, order], positions[order]

    def step_done(self) -> None:
        self._seen += 1

    def needed_to_resume(self, position: int) -> tuple[int, int]:
        """Positions [first, last] the next token at `position` reads from the cache (last < first when none)."""
        return max(0, position - self.config.window + 1), position - 1

    def can_resume_at(self, position: int) -> bool:
        """Whether a request that shares exactly tokens 0..position−1 can continue from this cache."""
        if not 0 <= position <= self._seen:
            return False
        first, last = self.needed_to_resume(position)
        held = set(self.held())
        return all(p in held for p in range(first, last + 1))

    def resumed_at(self, position: int) -> RollingKVCache:
        """A copy that continues at `position`, forgetting what this request wrote from there on."""
        if not self.can_resume_at(position):
            raise AnalyzerError(f"the rolling cache no longer holds the positions needed to continue at {position}")
        out = copy.deepcopy(self)
        for slots in out.slot_position:
            slots[slots >= position] = -1
        out._seen = position
        return out


def decode_each(model: AttentionModel, tokens: np.ndarray, cache: KVCache,
                counters: Counters | None = None) -> np.ndarray:
    """Feed tokens one forward call at a time (the decode loop); returns the logits of every position fed."""
    rows: list[np.ndarray] = []
    for token in tokens:
        rows.append(model.forward([int(token)], cache, counters).logits[0])
    return np.array(rows).reshape(len(tokens), model.config.vocab)


@dataclass
class ReuseCase:
    """A second request sharing the first `shared` tokens of the first one, then adding its own."""

    shared: int
    needed: tuple[int, int]  # positions of the first request the next token must read
    held: tuple[int, int]  # positions the rolling cache holds after the first request
    resumable: bool
    resume_delta: float | None  # max |Δ logits| of the new tokens: resumed rolling cache vs windowed recompute
    restart_from: int  # first token a fresh cache must see: shared − layers·(W − 1), at least 0
    restart_delta: float  # restarting there vs windowed recompute (new tokens' logits)
    restart_later_delta: float | None  # restarting one token later (None when restart_from is already shared)

    def to_dict(self) -> dict[str, Any]:
        return {"shared_tokens": self.shared, "needed_positions": list(self.needed),
                "held_positions": list(self.held), "rolling_cache_can_resume": self.resumable,
                "resume_max_abs_logits": self.resume_delta, "restart_from_token": self.restart_from,
                "restart_max_abs_logits": self.restart_delta,
                "restart_one_later_max_abs_logits": self.restart_later_delta}


@dataclass
class WindowResult:
    config: ModelConfig  # the windowed model (config.window = W)
    length: int
    max_abs_logits: float  # rolling cache vs windowed recompute, every position
    max_abs_hidden: float
    max_abs_kv: float  # the positions the rolling cache holds vs the same positions of the recompute
    kept_per_layer: list[int]  # positions held per layer (per KV head) after `length` tokens
    held_positions: list[int]
    rolling: Counters  # decoding all `length` tokens one by one through the rolling cache
    windowed_recompute: Counters
    full_recompute: Counters  # the same tokens through the same weights with full attention
    vs_full_by_position: list[float]  # max |Δ logits| windowed vs full attention, per position
    argmax_changed: list[int]  # positions whose greedy next token differs from full attention's
    reuse: list[ReuseCase] = field(default_factory=list)

    @property
    def window(self) -> int:
        return self.config.window

    @property
    def within_tolerance(self) -> bool:
        return max(self.max_abs_logits, self.max_abs_hidden, self.max_abs_kv) <= self.config.tolerance

    @property
    def first_position_differing(self) -> int | None:
        """First position whose logits differ from full attention beyond the tolerance."""
        for position, delta in enumerate(self.vs_full_by_position):
            if delta > self.config.tolerance:
                return position
        return None

    def qk_per_head_closed_form(self) -> int:
        """Σ_t min(t+1, W): the keys each query head reads per layer while decoding `length` tokens."""
        w, n = self.window, self.length
        return sum(min(t + 1, w) for t in range(n))

    def to_dict(self) -> dict[str, Any]:
        tol = self.config.tolerance
        return {"experiment": "window", "config": self.config.to_dict(), "window": self.window,
                "length": self.length,
                "rolling_vs_windowed_recompute_max_abs_delta": {"logits": self.max_abs_logits,
                                                               "hidden": self.max_abs_hidden, "kv": self.max_abs_kv},
                "tolerance": tol, "within_tolerance": self.within_tolerance,
                "kv_kept_per_layer_per_kv_head": self.kept_per_layer, "held_positions": self.held_positions,
                "kv_kept_full_cache_per_layer_per_kv_head": self.length,
                "qk_per_head_per_layer_closed_form": self.qk_per_head_closed_form(),
                "rolling": self.rolling.to_dict(), "windowed_recompute": self.windowed_recompute.to_dict(),
                "full_attention_recompute": self.full_recompute.to_dict(),
                "vs_full_attention_max_abs_logits_by_position": self.vs_full_by_position,
                "first_position_differing_from_full": self.first_position_differing,
                "argmax_changed_positions": self.argmax_changed,
                "reuse": [r.to_dict() for r in self.reuse]}


def _max_delta(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max()) if a.size else 0.0


def run_window(config: ModelConfig, length: int, window: int) -> WindowResult:
    """Decode `length` tokens through a rolling cache of `window` positions and compare with recomputation."""
    if window < 1:
        raise AnalyzerError(f"--window must be at least 1 position (got {window})")
    if length < 2:
        raise AnalyzerError(f"--length must be at least 2 for the window experiment (got {length})")
    windowed = AttentionModel(replace(config, window=window))
    full = AttentionModel(replace(config, window=0), windowed.params)
    tokens = sample_tokens(config, length)
    rolling_counters = windowed.new_counters()
    ring = RollingKVCache(windowed.config)
    steps = [windowed.forward([int(t)], ring, rolling_counters) for t in tokens]
    recompute_counters = windowed.new_counters()
    recomputed = windowed.recompute(tokens, recompute_counters)
    full_counters = full.new_counters()
    reference = full.recompute(tokens, full_counters)
    logits = np.concatenate([s.logits for s in steps])
    hidden = np.concatenate([s.hidden for s in steps], axis=1)
    kv = 0.0
    for i in range(config.layers):
        keys, values, positions = ring.view(i)
        assert positions is not None
        kv = max(kv, _max_delta(keys, recomputed.cache.k[i][:, positions]),
                 _max_delta(values, recomputed.cache.v[i][:, positions]))
    per_position = np.abs(recomputed.logits - reference.logits).max(axis=1)
    changed = np.flatnonzero(recomputed.logits.argmax(axis=1) != reference.logits.argmax(axis=1))
    return WindowResult(
        config=windowed.config, length=length, max_abs_logits=_max_delta(logits, recomputed.logits),
        max_abs_hidden=_max_delta(hidden, recomputed.hidden), max_abs_kv=kv,
        kept_per_layer=[int(np.count_nonzero(s >= 0)) for s in ring.slot_position], held_positions=ring.held(),
        rolling=rolling_counters, windowed_recompute=recompute_counters, full_recompute=full_counters,
        vs_full_by_position=[float(x) for x in per_position], argmax_changed=[int(p) for p in changed],
        reuse=[_reuse_case(windowed, tokens, ring, shared) for shared in reuse_points(length, window)],
    )


def reuse_points(length: int, window: int) -> list[int]:
    """Shared-prefix lengths that bracket what the rolling cache can serve: all, all but one, and further back."""
    points = {length, length - 1, length - window, length // 2}
    return sorted((p for p in points if p >= 1), reverse=True)


def _reuse_case(model: AttentionModel, first: np.ndarray, ring: RollingKVCache, shared: int) -> ReuseCase:
    c = model.config
    extra = sample_tokens(c, EXTRA_TOKENS, stream=8 + shared)
    second = np.concatenate([first[:shared], extra])
    reference = model.recompute(second).logits[shared:]
    resume_delta = None
    if ring.can_resume_at(shared):
        resume_delta = _max_delta(decode_each(model, extra, ring.resumed_at(shared)), reference)
    restart_from = max(0, shared - c.layers * (c.window - 1))
    restart_delta = _max_delta(_restart(model, second, restart_from, shared), reference)
    later = None
    if restart_from + 1 <= shared:
        later = _max_delta(_restart(model, second, restart_from + 1, shared), reference)
    first_held = max(0, ring.seen - c.window)
    return ReuseCase(shared=shared, needed=ring.needed_to_resume(shared), held=(first_held, ring.seen - 1),
                     resumable=ring.can_resume_at(shared), resume_delta=resume_delta, restart_from=restart_from,
                     restart_delta=restart_delta, restart_later_delta=later)


def _restart(model: AttentionModel, tokens: np.ndarray, start: int, shared: int) -> np.ndarray:
    """A fresh rolling cache that first sees token `start` (at its true position); logits from `shared` on."""
    logits = decode_each(model, tokens[start:], RollingKVCache(model.config, start=start))
    return logits[shared - start:]

