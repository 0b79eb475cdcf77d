"""Research records (the route's 8-field template) for each experiment, in English or Chinese.

Every number in a record comes from the result objects, so a record cannot claim more than the run showed.
The wording lives in `analyzer/records/sentences/attention.<lang>.toml`; this module only picks the values.
"""

from __future__ import annotations

import datetime as _dt
import platform

import numpy as np

from analyzer import __version__
from analyzer.attention.append import AppendResult
from analyzer.attention.config import ModelConfig
from analyzer.attention.edit import EditResult
from analyzer.attention.prefix import PrefixResult
from analyzer.records import Record, render_markdown, sentences
from analyzer.records.provenance import analyzer_git

FEATURE = "attention"


def local_sources(command: str, lang: str = "en") -> str:
    s = sentences(FEATURE, lang)
    today = _dt.datetime.now(_dt.UTC).date().isoformat()
    return s.format("sources.local", command=command, version=__version__, git=analyzer_git(lang),
                    numpy=np.__version__, python=platform.python_version(), today=today)


def describe(config: ModelConfig, lang: str = "en") -> str:
    """The model config in the record's language (the same numbers as `ModelConfig.describe`)."""
    c = config
    return sentences(FEATURE, lang).format(
        "model.describe", layers=c.layers, d_model=c.d_model, heads=c.heads, kv_heads=c.kv_heads,
        kind=c.attention_kind, head_dim=c.head_dim, d_ff=c.d_ff, vocab=c.vocab, seed=c.seed, dtype=c.dtype)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def append_record(r: AppendResult, lang: str = "en") -> Record:
    s = sentences(FEATURE, lang)
    c, n = r.config, r.prefill
    ok = s["append.within" if r.within_tolerance else "append.outside"]
    return Record(
        title=s["append.title"],
        question=s["append.question"],
        sources=local_sources("append", lang),
        inputs=s.format("append.inputs", model=describe(c, lang), n=n),
        changed=s.format("append.changed", next=n + 1, n=n),
        observations=[
            s.format("append.obs.consistency", logits=_fmt(r.max_abs_logits), hidden=_fmt(r.max_abs_hidden),
                     kv=_fmt(r.max_abs_kv), ok=ok, dtype=c.dtype, tolerance=f"{c.tolerance:g}"),
            s.format("append.obs.kv", cached_per_head=r.cached.kv_computed[0] // c.kv_heads,
                     cached_total=r.cached.kv_computed_total, reused_total=r.cached.kv_reused_total,
                     full_per_head=r.recomputed.kv_computed[0] // c.kv_heads,
                     full_total=r.recomputed.kv_computed_total),
            s.format("append.obs.qk", cached=r.cached.qk_dots[0] // c.heads, full=r.recomputed.qk_dots[0] // c.heads,
                     cached_total=r.cached.qk_total, full_total=r.recomputed.qk_total),
            s.format("append.obs.macs", cached=r.cached.macs, full=r.recomputed.macs,
                     ratio=r.recomputed.macs / r.cached.macs),
        ],
        interpretation=s["append.interpretation"],
        not_ruled_out=s["append.not_ruled_out"],
        next_check=s["append.next_check"],
    )


def format_ranges(positions: list[int], lang: str = "en") -> str:
    if not positions:
        return sentences(FEATURE, lang)["ranges.none"]
    parts, start, prev = [], positions[0], positions[0]
    for p in positions[1:] + [None]:  # type: ignore[list-item]
        if p is not None and p == prev + 1:
            prev = p
            continue
        parts.append(str(start) if start == prev else f"{start}–{prev}")
        if p is not None:
            start = prev = p
    return ", ".join(parts)


def edit_record(results: list[EditResult], lang: str = "en") -> Record:
    s = sentences(FEATURE, lang)
    main = results[0]
    c, m = main.config, main.position
    obs = []
    for r in results:
        per_layer = s["edit.layer_sep"].join(
            s.format("edit.layer", layer=i + 1, positions=format_ranges(r.changed_positions(i), lang))
            for i in range(r.config.layers))
        logits = format_ranges([int(p) for p in np.flatnonzero(r.changed_logits)], lang)
        obs.append(s.format("edit.obs.changed", layers=r.config.layers, per_layer=per_layer, logits=logits))
        obs.append(s.format("edit.obs.counts", layers=r.config.layers, unchanged=r.unchanged_kv, m=m,
                            reusable=r.prefix_reusable_kv, recompute=r.must_recompute_kv,
                            reused_kv=r.reused.kv_computed_total, reused_qk=r.reused.qk_total,
                            full_kv=r.recomputed.kv_computed_total, full_qk=r.recomputed.qk_total,
                            logits=_fmt(r.max_abs_logits), kv=_fmt(r.max_abs_kv)))
    return Record(
        title=s.format("edit.title", m=m, length=main.length),
        question=s["edit.question"],
        sources=local_sources("edit", lang),
        inputs=s.format("edit.inputs", model=describe(c, lang), length=main.length),
        changed=s.format("edit.changed", m=m, old=main.old_token, new=main.new_token),
        observations=obs,
        interpretation=s.format("edit.interpretation", m=m),
        not_ruled_out=s["edit.not_ruled_out"],
        next_check=s["edit.next_check"],
    )


def prefix_record(config: ModelConfig, results: list[PrefixResult], verify_max: int, lang: str = "en") -> Record:
    s = sentences(FEATURE, lang)
    sizes = sorted({r.block_size for r in results})
    obs = []
    for r in results:
        check = (s.format("prefix.check.ran", logits=_fmt(r.max_abs_logits))
                 if r.ran_model and r.max_abs_logits is not None
                 else s.format("prefix.check.counted", verify_max=verify_max))
        obs.append(s.format("prefix.obs.pair", pair=r.pair, block=r.block_size, hit=r.hit_tokens, total=r.second_len,
                            blocks=r.hit_tokens // r.block_size, same=r.same_token_blocks, kv=r.kv_saved,
                            qk=r.qk_saved, fraction=r.qk_saved_fraction, check=check))
    return Record(
        title=s["prefix.title"],
        question=s["prefix.question"],
        sources=f"{local_sources('prefix', lang)}; {s['sources.vllm']}; {s['sources.deepseek']}",
        inputs=s.format("prefix.inputs", model=describe(config, lang), sizes=", ".join(map(str, sizes)),
                        verify_max=verify_max),
        changed=s["prefix.changed"],
        observations=obs,
        interpretation=s["prefix.interpretation"],
        not_ruled_out=s["prefix.not_ruled_out"],
        next_check=s["prefix.next_check"],
    )


def render_records(records: list[Record], lang: str = "en") -> str:
    return render_markdown(records, lang, sentences(FEATURE, lang)["doc.title"])
