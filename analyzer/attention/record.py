"""Research records (the seed's 8-field template) for each experiment, as Markdown.

Every number in a record comes from the result objects, so a record cannot claim more than the run showed.
"""

from __future__ import annotations

import datetime as _dt
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analyzer import __version__
from analyzer.attention.append import AppendResult
from analyzer.attention.config import ModelConfig
from analyzer.attention.edit import EditResult
from analyzer.attention.prefix import PrefixResult

FIELDS = (
    ("question", "Question (问题)"),
    ("sources", "Sources and versions (来源与版本)"),
    ("inputs", "Inputs and config (输入与配置)"),
    ("changed", "The one thing changed (本次只改变)"),
    ("observations", "Direct observations (直接观察)"),
    ("interpretation", "Interpretation (我的解释)"),
    ("not_ruled_out", "Not yet ruled out (尚未排除)"),
    ("next_check", "Next check (下一次只验证)"),
)

VLLM_DOC = "vLLM docs, design “Automatic Prefix Caching” (block hash = hash(parent hash, block tokens, extra keys))"
DEEPSEEK_DOC = ("DeepSeek API docs, guide “Context Caching” (api-docs.deepseek.com/guides/kv_cache; 64-token storage "
                "unit as cited in issue 7 — the page has since been revised)")


@dataclass
class Record:
    title: str
    question: str
    sources: str
    inputs: str
    changed: str
    observations: list[str]
    interpretation: str
    not_ruled_out: str
    next_check: str

    def to_markdown(self) -> str:
        lines = [f"## {self.title}", ""]
        for key, label in FIELDS:
            value = getattr(self, key)
            if isinstance(value, list):
                lines.append(f"**{label}:**")
                lines.append("")
                lines.extend(f"- {item}" for item in value)
            else:
                lines.append(f"**{label}:** {value}")
            lines.append("")
        return "\n".join(lines)


def _git_commit() -> str:
    try:
        import git

        repo = git.Repo(Path(__file__).resolve().parent, search_parent_directories=True)
        return repo.head.commit.hexsha[:12] + (" (uncommitted changes)" if repo.is_dirty() else "")
    except Exception:  # not a checkout, or git missing: the record says so instead of failing
        return "not a git checkout"


def local_sources(command: str) -> str:
    today = _dt.datetime.now(_dt.UTC).date().isoformat()
    return (f"local script `analyze attention {command}` from analyzer {__version__} (git {_git_commit()}), "
            f"NumPy {np.__version__}, Python {platform.python_version()}; run {today} (UTC); model math documented "
            "in `analyzer/attention/params.py`")


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def append_record(r: AppendResult) -> Record:
    c, n = r.config, r.prefill
    per_head_cached = r.cached.qk_dots[0] // c.heads
    per_head_full = r.recomputed.qk_dots[0] // c.heads
    ok = "within" if r.within_tolerance else "OUTSIDE"
    return Record(
        title="Append one token: KV cache vs. full recompute",
        question="When one token is appended to a cached sequence, which computation does the KV cache save, "
                 "which does it not, and are the outputs the same?",
        sources=local_sources("append"),
        inputs=f"{c.describe()}; {n} prefill tokens then 1 appended token (ids from the seed).",
        changed=f"only how token {n + 1} is processed: reading positions 1..{n} from the KV cache vs. recomputing "
                f"all {n + 1} positions; weights and tokens identical.",
        observations=[
            f"Output consistency: max |Δ| logits {_fmt(r.max_abs_logits)}, hidden states {_fmt(r.max_abs_hidden)}, "
            f"cached K/V {_fmt(r.max_abs_kv)} — {ok} the {c.dtype} tolerance {c.tolerance:g}.",
            f"K/V counts: with the cache {r.cached.kv_computed[0] // c.kv_heads} new K/V per layer per KV head "
            f"({r.cached.kv_computed_total} in total) and {r.cached.kv_reused_total} read from the cache; without "
            f"it {r.recomputed.kv_computed[0] // c.kv_heads} per layer per KV head "
            f"({r.recomputed.kv_computed_total} in total).",
            f"QK counts per query head per layer: with the cache {per_head_cached} (= N+1), without "
            f"{per_head_full} (= (N+1)(N+2)/2); totals {r.cached.qk_total:,} vs {r.recomputed.qk_total:,}.",
            f"All multiply-adds: {r.cached.macs:,} vs {r.recomputed.macs:,} "
            f"({r.recomputed.macs / r.cached.macs:.1f}× more without the cache).",
        ],
        interpretation="The cache removes the re-projection of old positions' K/V and the old queries' attention "
                       "rows. It does not remove the new query's reading of every cached key: one decode step still "
                       "costs N+1 QK products per head per layer, growing with context, and the cache itself holds "
                       "layers · KV heads · (N+1) K/V pairs.",
        not_ruled_out="This shows equality for a small seeded model in one dtype; fused GPU kernels, bf16/fp8 "
                      "caches, batching and paged layouts may not be bit-identical. Time, memory traffic and the "
                      "cost of reading the cache were not measured.",
        next_check="Change one token in the middle (`analyze attention edit`) and see which cached K/V stay valid.",
    )


def format_ranges(positions: list[int]) -> str:
    if not positions:
        return "none"
    parts, start, prev = [], positions[0], positions[0]
    for p in positions[1:] + [None]:  # type: ignore[list-item]
        if p is not None and p == prev + 1:
            prev = p
            continue
        parts.append(str(start) if start == prev else f"{start}–{prev}")
        if p is not None:
            start = prev = p
    return ", ".join(parts)


def edit_record(results: list[EditResult]) -> Record:
    main = results[0]
    c, m = main.config, main.position
    obs = []
    for r in results:
        layers = "; ".join(f"layer {i + 1}: {format_ranges(r.changed_positions(i))}" for i in range(r.config.layers))
        obs.append(f"{r.config.layers}-layer model, K/V positions changed (0-based): {layers}. Logits changed at "
                   f"{format_ranges([int(p) for p in np.flatnonzero(r.changed_logits)])}.")
        obs.append(f"{r.config.layers}-layer model: K/V pairs unchanged {r.unchanged_kv}; prefix-reusable "
                   f"(positions < {m}) {r.prefix_reusable_kv}; must recompute {r.must_recompute_kv}. Reusing "
                   f"positions < {m} then running the rest: {r.reused.kv_computed_total} K/V and "
                   f"{r.reused.qk_total:,} QK vs {r.recomputed.kv_computed_total} and {r.recomputed.qk_total:,} "
                   f"recomputing everything; max |Δ| logits {_fmt(r.max_abs_logits)}, K/V {_fmt(r.max_abs_kv)}.")
    return Record(
        title=f"Edit token {m} of {main.length}: which cached K/V go stale",
        question="If one token in the middle of a cached sequence changes, which cached K/V are still valid, "
                 "per layer, and how much can be reused?",
        sources=local_sources("edit"),
        inputs=f"{c.describe()}; {main.length} cached tokens; a 1-layer twin with the same sizes and seed.",
        changed=f"only the token at position {m} (id {main.old_token} → {main.new_token}).",
        observations=obs,
        interpretation=f"Layer 1's K/V at position t depend only on token t and t's position, so only position {m} "
                       f"changes there. From layer 2 on, K/V are projections of the previous layer's output, which "
                       f"at t ≥ {m} has attended to the edited token, so every position ≥ {m} is stale. A cache can "
                       f"keep only positions < {m}. In a 1-layer model later K/V survive, but their outputs still "
                       "change, so their attention must be recomputed anyway.",
        not_ruled_out="An exact cancellation could leave a later position unchanged in principle (not observed). "
                      "Serving caches reuse whole blocks, so the reusable part rounds down to a block boundary "
                      "(see the prefix record).",
        next_check="Share a block-granular prefix cache between two requests (`analyze attention prefix`) and count "
                   "hit tokens.",
    )


def prefix_record(config: ModelConfig, results: list[PrefixResult], verify_max: int) -> Record:
    sizes = sorted({r.block_size for r in results})
    obs = []
    for r in results:
        check = (f"model run: max |Δ| last logits {_fmt(r.max_abs_logits)}" if r.ran_model and r.max_abs_logits
                 is not None else f"counted by closed form (longer than {verify_max:,} tokens)")
        obs.append(f"{r.pair} — block {r.block_size}: hit {r.hit_tokens:,} of {r.second_len:,} tokens "
                   f"({r.hit_tokens // r.block_size} blocks; {r.same_token_blocks} blocks have equal tokens at the "
                   f"same index); saved {r.kv_saved:,} K/V and {r.qk_saved:,} QK products "
                   f"({r.qk_saved_fraction:.1%} of this prefill's QK); {check}.")
    return Record(
        title="Prefix cache across requests: block hashes and saved prefill",
        question="Across two requests, how much prefill does a block-granular prefix cache save, and when does a "
                 "block with identical tokens not hit?",
        sources=f"{local_sources('prefix')}; {VLLM_DOC}; {DEEPSEEK_DOC}",
        inputs=f"{config.describe()}; block sizes {', '.join(map(str, sizes))}; request pairs below; pairs up to "
               f"{verify_max:,} tokens run through the model, longer ones counted with the closed forms the runs "
               "confirm (`--verify-max 10050` runs the 10,000-token pairs too, about half a minute).",
        changed="in each pair, the second request differs from the first in one way (appended turn, identical, "
                "different prefix, one edited token, shorter than a block).",
        observations=obs,
        interpretation="A block's hash covers its whole prefix, so hits stop at the first differing block and an "
                       "identical block after a different prefix never hits. Block size decides how much of a "
                       "matching tail is lost (a partial block has no identity), and at least the last token is "
                       "computed so the request has logits. The QK share saved is smaller than the token share: the "
                       "cached positions are the early, cheap rows, and every recomputed row still reads all keys "
                       "before it, cached or not.",
        not_ruled_out="Eviction, capacity limits, extra hash keys (LoRA, multimodal inputs, cache salts), and "
                      "tokenisation or chat-template differences that change tokens before the model sees them; a "
                      "real service's unit rules (DeepSeek's current docs describe cache prefix units persisted at "
                      "request boundaries) were not tested here.",
        next_check="Round 2: follow one request through the application code and reconcile a 10,000-token usage "
                   "report against the hit counts expected here.",
    )


def render_records(records: list[Record]) -> str:
    head = ["# Round 1 research records: attention experiments", ""]
    return "\n".join(head + [r.to_markdown() for r in records]).rstrip() + "\n"
