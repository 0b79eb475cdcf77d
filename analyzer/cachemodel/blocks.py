"""vLLM's automatic prefix caching: full KV blocks keyed by a hash chain, free blocks evicted LRU.

Source: https://docs.vllm.ai/en/latest/design/prefix_caching/ (checked 2026-12-07). A block is identified
by its parent block's hash and its own tokens, so a block hits only when every block before it hits too;
only full blocks are cached; when every token of a prompt hits, the last one is computed again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from analyzer.cachemodel.model import Arrival, Held, Match
from analyzer.cachemodel.rules import Rule


def block_hashes(tokens: tuple[int, ...], block_size: int) -> list[int]:
    """hash(parent hash, block tokens) of every full block, in order."""
    out, parent = [], 0
    for i in range(0, len(tokens) - block_size + 1, block_size):
        parent = hash((parent, tokens[i:i + block_size]))
        out.append(parent)
    return out


@dataclass
class BlockCache:
    rule: Rule
    capacity: int = 0                                   # blocks; 0: unbounded (not known from the log)
    blocks: OrderedDict[int, int] = field(default_factory=OrderedDict)   # hash → row that wrote it, LRU order
    fate: dict[int, tuple[str, str]] = field(default_factory=dict)

    def step(self, a: Arrival) -> tuple[Match, tuple[Held, ...]]:
        bs = self.rule.granularity
        always = int(self.rule.params.get("always_evaluated", 1))
        hashes = block_hashes(a.tokens, bs)
        usable = max(0, len(a.tokens) - always) // bs       # the last token is computed again
        hit, entry = 0, None
        for h in hashes[:usable]:
            if h not in self.blocks:
                break
            hit += 1
            entry = self.blocks[h]
        writers: dict[int, int] = {}
        for h in hashes:
            if h in self.blocks:
                writers[self.blocks[h]] = writers.get(self.blocks[h], 0) + 1
        held = tuple(Held(k, n * bs, "blocks", 0) for k, n in writers.items())
        for h in hashes:                                      # touched or written: most recently used
            if h in self.blocks:
                self.blocks.move_to_end(h)
            else:
                self.blocks[h] = a.key
        if self.capacity > 0:
            while len(self.blocks) > self.capacity:
                _h, row = self.blocks.popitem(last=False)
                self.fate.setdefault(row, ("eviction", f"its blocks were evicted (LRU, {self.capacity:,} blocks) "
                                                     f"by row {a.key}"))
        cached = hit * bs
        basis = (f"{hit} full {bs}-token block(s) of the hash chain cached, the first by row {entry}" if hit else
                 f"no full {bs}-token block of this prompt's hash chain was cached")
        return Match(key=a.key, rule=self.rule.name, cached=cached, entry=entry, shared=cached, basis=basis,
                     held=held), held
