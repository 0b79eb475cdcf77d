"""Block-granular prefix identity, following vLLM's automatic prefix caching design.

A full block's identity is hash(parent block's hash, the block's tokens), so it names the whole prefix up to
the block's end: the same tokens after a different prefix get a different hash and cannot hit. Only full
blocks are cached; a lookup hits the longest run of cached blocks from position 0. As in vLLM, when every
block hits, the last token is still computed (the request needs its logits), so at most len - 1 tokens hit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ROOT_HASH = hashlib.sha256(b"analyzer prefix cache root").digest()


def block_hash(parent: bytes, tokens: Sequence[int] | np.ndarray) -> bytes:
    """sha256(parent hash ‖ tokens as little-endian int64): deterministic across runs, unlike Python's hash()."""
    return hashlib.sha256(parent + np.asarray(tokens, dtype="<i8").tobytes()).digest()


def block_hashes(tokens: Sequence[int] | np.ndarray, block_size: int) -> list[bytes]:
    """Chained hashes of every *full* block; a trailing partial block has no identity yet."""
    if block_size < 1:
        raise ValueError("block size must be positive")
    arr = np.asarray(tokens)
    out: list[bytes] = []
    parent = ROOT_HASH
    for start in range(0, len(arr) - block_size + 1, block_size):
        parent = block_hash(parent, arr[start:start + block_size])
        out.append(parent)
    return out


@dataclass
class PrefixCache:
    """Maps block hash -> payload (the block's K/V, or None when only identities are tracked)."""

    block_size: int
    blocks: dict[bytes, Any] = field(default_factory=dict)

    def insert(self, tokens: Sequence[int] | np.ndarray, payloads: Sequence[Any] | None = None) -> int:
        """Remember every full block of `tokens`; returns how many blocks were new."""
        hashes = block_hashes(tokens, self.block_size)
        new = 0
        for i, h in enumerate(hashes):
            if h not in self.blocks:
                new += 1
                self.blocks[h] = payloads[i] if payloads is not None else None
        return new

    def hit_blocks(self, tokens: Sequence[int] | np.ndarray) -> list[bytes]:
        """Hashes of the longest run of cached blocks from the start, leaving at least the last token to compute."""
        usable = max(len(tokens) - 1, 0) // self.block_size
        hits: list[bytes] = []
        for h in block_hashes(tokens, self.block_size)[:usable]:
            if h not in self.blocks:
                break
            hits.append(h)
        return hits

    def hit_tokens(self, tokens: Sequence[int] | np.ndarray) -> int:
        return len(self.hit_blocks(tokens)) * self.block_size


def same_tokens_blocks(a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray, block_size: int) -> int:
    """Full blocks whose tokens are equal at the same index in both requests, whatever came before them."""
    xa, xb = np.asarray(a), np.asarray(b)
    n = min(len(xa), len(xb)) // block_size
    return sum(bool(np.array_equal(xa[i * block_size:(i + 1) * block_size], xb[i * block_size:(i + 1) * block_size]))
               for i in range(n))
