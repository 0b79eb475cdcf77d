"""Experiment "prefix": a block-granular prefix cache shared across requests (vLLM-style block hashes).

For each request pair, request A fills the cache and request B looks it up. Short pairs are run through the
model (B's prefill from cached blocks vs. B recomputed); pairs longer than `verify_max` tokens are counted
with the closed forms the short runs check, so the 10,000-token case stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from analyzer.attention.append import sample_tokens
from analyzer.attention.blocks import PrefixCache, same_tokens_blocks
from analyzer.attention.config import ModelConfig
from analyzer.attention.decoder import AttentionModel
from analyzer.attention.kvcache import Counters, KVCache, closed_form_counters
from analyzer.errors import AnalyzerError

DEFAULT_BLOCK_SIZES = (16, 64)  # vLLM's default block size; the unit DeepSeek documented for its disk cache


@dataclass(frozen=True)
class RequestPair:
    name: str
    first: np.ndarray
    second: np.ndarray


@dataclass
class PrefixResult:
    pair: str
    block_size: int
    first_len: int
    second_len: int
    hit_tokens: int
    same_token_blocks: int
    cached: Counters
    recomputed: Counters
    ran_model: bool
    max_abs_logits: float | None

    @property
    def kv_saved(self) -> int:
        return self.recomputed.kv_computed_total - self.cached.kv_computed_total

    @property
    def qk_saved(self) -> int:
        return self.recomputed.qk_total - self.cached.qk_total

    @property
    def qk_saved_fraction(self) -> float:
        return self.qk_saved / self.recomputed.qk_total if self.recomputed.qk_total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"pair": self.pair, "block_size": self.block_size, "first_tokens": self.first_len,
                "second_tokens": self.second_len, "hit_tokens": self.hit_tokens,
                "hit_blocks": self.hit_tokens // self.block_size, "same_token_blocks": self.same_token_blocks,
                "prefill_tokens_computed": self.second_len - self.hit_tokens, "kv_saved": self.kv_saved,
                "qk_saved": self.qk_saved, "qk_saved_fraction": self.qk_saved_fraction,
                "with_prefix_cache": self.cached.to_dict(), "without": self.recomputed.to_dict(),
                "ran_model": self.ran_model, "max_abs_logits": self.max_abs_logits}


def default_pairs(config: ModelConfig, long: int = 10_000) -> list[RequestPair]:
    """Request pairs that each isolate one rule of block matching."""
    base = sample_tokens(config, long + 50, stream=3)
    edited = base[:long].copy()
    edited[long // 2] = (edited[long // 2] + 1) % config.vocab
    x = sample_tokens(config, 128, stream=6)
    p1, p2 = sample_tokens(config, 128, stream=4), sample_tokens(config, 128, stream=5)
    short = sample_tokens(config, 10, stream=7)
    return [
        RequestPair("next turn: 1,000 then +50", base[:1000], base[:1050]),
        RequestPair("identical 1,000 tokens", base[:1000], base[:1000].copy()),
        RequestPair("same 128 after other 128", np.concatenate([p1, x]), np.concatenate([p2, x])),
        RequestPair("10 tokens (< 1 block)", short, short.copy()),
        RequestPair(f"next turn: {long:,} then +50", base[:long], base[:long + 50]),
        RequestPair(f"{long:,}, token {long // 2:,} edited", base[:long], edited),
    ]


def _block_payloads(cache: KVCache, block_size: int) -> list[tuple[list[np.ndarray], list[np.ndarray]]]:
    blocks = []
    for start in range(0, cache.length - block_size + 1, block_size):
        blocks.append(([k[:, start:start + block_size] for k in cache.k],
                       [v[:, start:start + block_size] for v in cache.v]))
    return blocks


def run_prefix(config: ModelConfig, block_sizes: tuple[int, ...] = DEFAULT_BLOCK_SIZES,
               pairs: list[RequestPair] | None = None, verify_max: int = 2048) -> list[PrefixResult]:
    """Hit tokens and saved prefill per pair and block size; runs the model for pairs up to `verify_max` tokens."""
    if not block_sizes or min(block_sizes) < 1:
        raise AnalyzerError("--block-size must be a positive number of tokens, e.g. 16 or 64")
    model = AttentionModel(config)
    results: list[PrefixResult] = []
    for pair in pairs if pairs is not None else default_pairs(config):
        run = max(len(pair.first), len(pair.second)) <= verify_max
        first_cache = model.forward(pair.first).cache if run else None
        full = None
        for block_size in block_sizes:
            store = PrefixCache(block_size)
            store.insert(pair.first, _block_payloads(first_cache, block_size) if first_cache else None)
            hits = store.hit_blocks(pair.second)
            hit = len(hits) * block_size
            n2 = len(pair.second)
            delta: float | None = None
            if run:
                cached = model.new_counters()
                reused = KVCache.from_blocks(config, [store.blocks[h] for h in hits])
                out = model.forward(pair.second[hit:], reused, cached)
                if full is None:
                    recomputed = model.new_counters()
                    full = (model.recompute(pair.second, recomputed), recomputed)
                delta = float(np.abs(out.logits[-1] - full[0].logits[-1]).max())
                recomputed_counters = full[1]
            else:
                cached = closed_form_counters(config, hit, n2 - hit)
                recomputed_counters = closed_form_counters(config, 0, n2)
            results.append(PrefixResult(
                pair=pair.name, block_size=block_size, first_len=len(pair.first), second_len=n2, hit_tokens=hit,
                same_token_blocks=same_tokens_blocks(pair.first, pair.second, block_size), cached=cached,
                recomputed=recomputed_counters, ran_model=run, max_abs_logits=delta))
    return results
