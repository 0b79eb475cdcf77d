"""Research records for the capacity experiments (window, quantize, evict, offload), in English or Chinese.

Like `record`, every number comes from a result object; the wording lives in
`analyzer/records/sentences/attention_capacity.<lang>.toml`.
"""

from __future__ import annotations

from analyzer.attention.evict import EvictResult
from analyzer.attention.kvsize import SCALE_BITS, human_bytes
from analyzer.attention.offload import OffloadResult
from analyzer.attention.quantize import BASELINE_BITS, QuantizeResult
from analyzer.attention.record import describe, format_ranges, local_sources
from analyzer.attention.window import EXTRA_TOKENS, WindowResult
from analyzer.records import Record, sentences

FEATURE = "attention_capacity"


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g}"


def _list(values: list[float]) -> str:
    return " / ".join(_fmt(v) for v in values)


def window_record(r: WindowResult, lang: str = "en") -> Record:
    s, base = sentences(FEATURE, lang), sentences("attention", lang)
    c, w, n = r.config, r.window, r.length
    first = r.first_position_differing
    same = r.vs_full_by_position[:first] if first is not None else r.vs_full_by_position
    obs = [
        s.format("window.obs.consistency", logits=_fmt(r.max_abs_logits), hidden=_fmt(r.max_abs_hidden),
                 kv=_fmt(r.max_abs_kv), ok=base["append.within" if r.within_tolerance else "append.outside"],
                 dtype=c.dtype, tolerance=f"{c.tolerance:g}"),
        s.format("window.obs.kept", n=n, kept=" / ".join(map(str, r.kept_per_layer)),
                 held=format_ranges(r.held_positions, lang), qk=r.rolling.qk_dots[0] // c.heads, window=w,
                 full_qk=r.full_recompute.qk_dots[0] // c.heads),
        s.format("window.obs.full", last_same=len(same) - 1, same_delta=_fmt(max(same, default=0.0)),
                 first=s["none"] if first is None else first,
                 max_delta=_fmt(max(r.vs_full_by_position[first:], default=0.0) if first is not None else 0.0),
                 changed=format_ranges(r.argmax_changed, lang)),
    ]
    for case in r.reuse:
        resume = s.format("window.obs.resume", delta=_fmt(case.resume_delta)) if case.resumable else ""
        obs.append(s.format(
            "window.obs.reuse", shared=case.shared, needed=f"{case.needed[0]}–{case.needed[1]}",
            held=f"{case.held[0]}–{case.held[1]}", resumable=s["yes" if case.resumable else "no"], resume=resume,
            restart=case.restart_from, restart_delta=_fmt(case.restart_delta), later=_fmt(case.restart_later_delta)))
    return Record(
        title=s.format("window.title", window=w),
        question=s["window.question"],
        sources=f"{local_sources('window', lang)}; {s['sources.mistral']}; {s['sources.transformers']}",
        inputs=s.format("window.inputs", model=describe(c, lang), window=w, window_minus_one=w - 1, n=n,
                        extra=EXTRA_TOKENS),
        changed=s["window.changed"],
        observations=obs,
        interpretation=s["window.interpretation"],
        not_ruled_out=s["window.not_ruled_out"],
        next_check=s["window.next_check"],
    )


def quantize_record(r: QuantizeResult, lang: str = "en") -> Record:
    s = sentences(FEATURE, lang)
    c = r.config
    baseline = r.baseline_bytes_per_token
    obs = []
    for run in r.runs:
        obs.append(s.format("quantize.obs.bytes", bits=run.bits, formula=r.formula(run.bits), baseline=baseline,
                            saving=1 - run.bytes_per_token / baseline, naive=1 - run.bits / BASELINE_BITS,
                            counted=run.counted_bytes, n=r.prompt, per_token=run.bytes_per_token))
    for run in r.runs:
        obs.append(s.format("quantize.obs.error", bits=run.bits, layer_abs=_list(run.layer_max_abs),
                            layer_rel=_list(run.layer_rel), logits=_fmt(run.max_abs_logits),
                            changed=format_ranges(run.argmax_changed, lang)))
        obs.append(s.format("quantize.obs.generate", steps=r.steps, reference=r.reference_generated,
                            bits=run.bits, generated=run.generated,
                            first=s["none"] if run.first_divergence is None else run.first_divergence))
    by_bits = {run.bits: run for run in r.runs}
    ratio = (max(by_bits[4].layer_max_abs) / max(by_bits[8].layer_max_abs)
             if {4, 8} <= set(by_bits) and max(by_bits[8].layer_max_abs) > 0 else float("nan"))
    scale_bytes = SCALE_BITS / 8
    return Record(
        title=s["quantize.title"],
        question=s["quantize.question"],
        sources=f"{local_sources('quantize', lang)}; {s['sources.kivi']}; {s['sources.transformers']}",
        inputs=s.format("quantize.inputs", model=describe(c, lang), n=r.prompt, steps=r.steps,
                        scale_bits=SCALE_BITS, head_dim=c.head_dim),
        changed=s["quantize.changed"],
        observations=obs,
        interpretation=s.format("quantize.interpretation", ratio=ratio, head_dim=c.head_dim,
                                scale_share_4=scale_bytes / (c.head_dim * 4 / 8 + scale_bytes)),
        not_ruled_out=s["quantize.not_ruled_out"],
        next_check=s["quantize.next_check"],
    )


def evict_record(r: EvictResult, lang: str = "en") -> Record:
    s = sentences(FEATURE, lang)
    obs = []
    for run in r.runs:
        obs.append(s.format(
            "evict.obs.run", policy=run.policy, budget=run.budget, kept=" / ".join(map(str, run.kept_per_layer)),
            bytes=run.bytes_kept, full=r.full_bytes, saving=1 - run.bytes_kept / r.full_bytes,
            delta=_fmt(max(run.by_position)), first=s["none"] if run.first_change is None else run.first_change,
            count=len(run.argmax_changed), n=r.length, positions=format_ranges(run.kept_positions[0], lang)))
    for t in r.thresholds:
        obs.append(s.format("evict.obs.threshold", policy=t.policy, stable=t.stable_from, below=t.stable_from - 1,
                            position=s["none"] if t.position is None else t.position))
    sinks = min(r.sinks, r.length)
    if sinks:
        obs.append(s.format("evict.obs.sinks", last_sink=sinks - 1, share=r.sink_share, n=r.length,
                            uniform=sinks / r.length))
    budgets = sorted({run.budget for run in r.runs})
    return Record(
        title=s["evict.title"],
        question=s["evict.question"],
        sources=f"{local_sources('evict', lang)}; {s['sources.streamingllm']}; {s['sources.h2o']}; "
                f"{s['sources.transformers']}",
        inputs=s.format("evict.inputs", model=describe(r.config, lang), n=r.length,
                        budgets=", ".join(map(str, budgets)), sinks=r.sinks, per_position=r.bytes_per_position),
        changed=s["evict.changed"],
        observations=obs,
        interpretation=s["evict.interpretation"],
        not_ruled_out=s["evict.not_ruled_out"],
        next_check=s["evict.next_check"],
    )


def offload_record(r: OffloadResult, lang: str = "en") -> Record:
    s = sentences(FEATURE, lang)
    obs = [s.format("offload.obs.plan", model=p.layout.name, context=p.context, total=human_bytes(p.total_bytes),
                    device_layers=p.device_layers, layers=p.layout.layers, device=human_bytes(p.device_bytes),
                    host=human_bytes(p.host_bytes), to_device=human_bytes(p.step_to_device),
                    to_host=human_bytes(p.step_to_host))
           for p in r.plans]
    return Record(
        title=s["offload.title"],
        question=s["offload.question"],
        sources=f"{local_sources('offload', lang)}; {s['sources.transformers']}",
        inputs=s.format("offload.inputs", bits=r.plans[0].bits if r.plans else 16.0),
        changed=s["offload.changed"],
        observations=obs,
        interpretation=s["offload.interpretation"],
        not_ruled_out=s["offload.not_ruled_out"],
        next_check=s["offload.next_check"],
    )
