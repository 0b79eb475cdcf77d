"""Tables for the capacity experiments (window, quantize, evict, offload) and `kv-size --window`."""

from __future__ import annotations

from rich.console import Console

from analyzer.attention.evict import EvictResult
from analyzer.attention.kvsize import SCALE_BITS, KvLayout, human_bytes
from analyzer.attention.offload import OffloadResult
from analyzer.attention.quantize import QuantizeResult
from analyzer.attention.record import format_ranges
from analyzer.attention.render import make_table, short_number, show_table
from analyzer.attention.window import WindowResult


def _ok(value: float, tolerance: float) -> str:
    return "yes" if value <= tolerance else "NO"


def print_window(console: Console, r: WindowResult) -> None:
    c, w, n = r.config, r.window, r.length
    console.print(f"window: {n} tokens decoded through a rolling cache of W = {w} positions "
                  f"(query t reads t−{w - 1}..t); {c.describe()}")
    t = make_table("output consistency (rolling cache vs windowed recompute)", "compared", "max |Δ|", "tolerance", "ok")
    for name, value in (("logits, every position", r.max_abs_logits), ("hidden states, every layer", r.max_abs_hidden),
                        ("K/V the rolling cache holds", r.max_abs_kv)):
        t.add_row(name, short_number(value), f"{c.tolerance:g}", _ok(value, c.tolerance))
    show_table(console, t)
    full_qk = r.full_recompute.qk_dots[0] // c.heads
    t = make_table(f"what is kept and read for {n} tokens", "counter", f"rolling (W = {w})", "full attention",
                   "closed form (rolling / full)")
    t.add_row("K/V held per layer per KV head", " / ".join(map(str, r.kept_per_layer)), str(n),
              f"min(N, W) = {min(n, w)} / N = {n}")
    t.add_row("positions held", format_ranges(r.held_positions), f"0–{n - 1}", "")
    t.add_row("QK products per query head per layer", f"{r.rolling.qk_dots[0] // c.heads:,}", f"{full_qk:,}",
              f"Σ min(t+1, W) = {r.qk_per_head_closed_form():,} / N(N+1)/2 = {n * (n + 1) // 2:,}")
    t.add_row("K/V read from the cache (total)", f"{r.rolling.kv_reused_total:,}", "", "")
    show_table(console, t)
    first = r.first_position_differing
    t = make_table("windowed vs full attention (same weights and tokens)", "positions", "max |Δ logits|",
                   "greedy next token differs at")
    for start in range(0, n, w):
        stop = min(start + w, n)
        changed = [p for p in r.argmax_changed if start <= p < stop]
        t.add_row(f"{start}–{stop - 1}", short_number(max(r.vs_full_by_position[start:stop])), format_ranges(changed))
    show_table(console, t)
    console.print(f"first position differing from full attention: {first if first is not None else 'none'}")
    t = make_table("a second request sharing the first P tokens, then adding its own", "shared P",
                   "next token reads", "rolling cache holds", "resume from it", "Δ resumed", "restart at P − L(W−1)",
                   "Δ restart", "Δ one token later")
    for case in r.reuse:
        t.add_row(str(case.shared), f"{case.needed[0]}–{case.needed[1]}", f"{case.held[0]}–{case.held[1]}",
                  "yes" if case.resumable else "no", short_number(case.resume_delta), str(case.restart_from),
                  short_number(case.restart_delta), short_number(case.restart_later_delta))
    show_table(console, t)


def print_quantize(console: Console, r: QuantizeResult) -> None:
    c = r.config
    console.print(f"quantize: {r.prompt} prompt tokens + {r.steps} greedy tokens; symmetric per-token scales, one "
                  f"{SCALE_BITS}-bit scale per cached vector ({c.head_dim} elements); {c.describe()}")
    base = r.baseline_bytes_per_token
    t = make_table(f"bytes per token (16-bit: {r.elements_per_token} elements × 2 B = {base:g} B)", "bits",
                   "bytes/token (formula)", "saving vs 16-bit", "without scales", f"counted for {r.prompt} tokens")
    for run in r.runs:
        t.add_row(str(run.bits), r.formula(run.bits), f"{1 - run.bytes_per_token / base:.1%}",
                  f"{1 - run.bits / 16:.1%}", f"{run.counted_bytes:,.0f} B")
    show_table(console, t)
    t = make_table("error against the full-precision cache", "bits", "attention out max |Δ| by layer",
                   "relative by layer", "prompt logits max |Δ|", "next token differs at",
                   "first generated step differing")
    for run in r.runs:
        first = "none" if run.first_divergence is None else str(run.first_divergence)
        t.add_row(str(run.bits), " / ".join(short_number(x) for x in run.layer_max_abs),
                  " / ".join(short_number(x) for x in run.layer_rel), short_number(run.max_abs_logits),
                  format_ranges(run.argmax_changed), first)
    show_table(console, t)
    console.print(f"greedy tokens — full precision: {r.reference_generated}")
    for run in r.runs:
        console.print(f"greedy tokens — {run.bits}-bit: {run.generated}")


def print_evict(console: Console, r: EvictResult) -> None:
    c = r.config
    console.print(f"evict: {r.length} tokens streamed one at a time; budget = positions kept per layer; "
                  f"{r.sinks} sinks; 16-bit bytes ({r.bytes_per_position:g} B per position); {c.describe()}")
    t = make_table("each policy against the full cache (same tokens)", "policy", "budget", "bytes kept / full",
                   "max |Δ logits|", "next token first changes at", "positions changed", "layer 1 keeps")
    for run in r.runs:
        t.add_row(run.policy, str(run.budget), f"{run.bytes_kept:,.0f} / {r.full_bytes:,.0f} B",
                  short_number(max(run.by_position)), "none" if run.first_change is None else str(run.first_change),
                  f"{len(run.argmax_changed)} of {r.length}", format_ranges(run.kept_positions[0]))
    show_table(console, t)
    for th in r.thresholds:
        where = "no budget ≥ 1 changes one" if th.position is None else \
            f"at {th.stable_from - 1} the first change is at position {th.position}"
        console.print(f"{th.policy}: no next token changes for any budget ≥ {th.stable_from}; {where}")
    sinks = min(r.sinks, r.length)
    if sinks:
        console.print(f"attention the last query gives positions 0–{sinks - 1} (full cache): {r.sink_share:.1%}; "
                      f"uniform would be {sinks / r.length:.1%}")


def print_offload(console: Console, r: OffloadResult) -> None:
    console.print("offload (COMPUTED, NOT MEASURED): Hugging Face OffloadedCache pattern — the current layer on the "
                  "device, the next prefetched, the previous sent back to host memory")
    t = make_table("where the K/V bytes live and what one decode step moves", "model", "context", "cache",
                   "device (layers)", "host", "step host → device", "step device → host")
    for p in r.plans:
        t.add_row(p.layout.name, f"{p.context:,}", human_bytes(p.total_bytes),
                  f"{human_bytes(p.device_bytes)} ({p.device_layers} of {p.layout.layers})", human_bytes(p.host_bytes),
                  human_bytes(p.step_to_device), human_bytes(p.step_to_host))
    show_table(console, t)
    console.print("formula: b = bytes per token per layer; device = 2 · b · n; host = (layers − 2) · b · n; "
                  "per step host → device = layers · b · n, device → host = layers · b · (n + 1)")
    for p in r.plans:
        b = p.layer_bytes_per_token
        if not p.offloaded:
            console.print(f"  {p.layout.name}: {p.layout.layers} layers — all stay on the device and nothing moves "
                          "(a layer is sent back only when there are more than 2)")
            continue
        console.print(f"  {p.layout.name}: b = {p.layout.bytes_per_token(p.bits):,.0f} / {p.layout.layers} = {b:,.0f} B"
                      f"; device = 2 · {b:,.0f} · {p.context:,} = {p.device_bytes:,.0f} B; step host → device = "
                      f"{p.layout.layers} · {b:,.0f} · {p.context:,} = {p.step_to_device:,.0f} B")


def print_kv_capacity(console: Console, layouts: list[KvLayout], bits: float, context: int, window: int,
                      full_layers: int) -> None:
    """Full / windowed / 8-bit / 4-bit bytes at `context`, each with the formula that produced it."""
    t = make_table(f"KV cache for {context:,} tokens: full and windowed at {bits:g} bits, quantized at 8 and 4 bits",
                   "model", "full", "windowed (W = " + f"{window:,})", "8-bit", "4-bit")
    for lay in layouts:
        t.add_row(lay.name, human_bytes(lay.bytes_per_token(bits) * context),
                  human_bytes(lay.windowed_bytes(bits, context, window, min(full_layers, lay.layers))),
                  human_bytes(lay.quantized_bytes_per_token(8) * context),
                  human_bytes(lay.quantized_bytes_per_token(4) * context))
    show_table(console, t)
    console.print("formulas (E = elements per token per layer, V = scaled vectors per token per layer, n = context):")
    for lay in layouts:
        for line in capacity_formulas(lay, bits, context, window, full_layers):
            console.print(f"  {line}", markup=False)
    console.print(f"assumptions: every layer windowed except --full-layers {full_layers} (a model that mixes layer "
                  "types lists them in its config.json, e.g. Gemma 3's `layer_types`: give the number of "
                  "full_attention layers); a window keeps min(n, W) positions per windowed "
                  f"layer; quantized = symmetric per-token, one {SCALE_BITS}-bit scale per cached vector (K and V per "
                  "KV head; MLA: the latent and the RoPE key), every token quantized (Transformers' QuantizedCache "
                  "also keeps its newest residual_length tokens, 128 by default, unquantized); windowed and quantized "
                  "are not combined here.", markup=False)


def capacity_formulas(lay: KvLayout, bits: float, context: int, window: int, full_layers: int) -> list[str]:
    e = lay.elements_per_token // lay.layers
    v = lay.vectors_per_token // lay.layers
    full_layers = min(full_layers, lay.layers)
    windowed = lay.layers - full_layers
    kept = min(context, window)
    windowed_total = lay.windowed_bytes(bits, context, window, full_layers)
    lines = [
        f"{lay.name}: E = {e:,}, V = {v}, layers = {lay.layers}",
        f"  full     = layers · n · E · {bits:g}/8 = {lay.layers} · {context:,} · {e:,} · {bits / 8:g} "
        f"= {lay.bytes_per_token(bits) * context:,.0f} B",
        f"  windowed = ({full_layers} · n + {windowed} · min(n, W)) · E · {bits:g}/8 = ({full_layers} · {context:,} + "
        f"{windowed} · {kept:,}) · {e:,} · {bits / 8:g} = {windowed_total:,.0f} B",
    ]
    scale = SCALE_BITS // 8
    for b in (8, 4):
        total = lay.quantized_bytes_per_token(b) * context
        lines.append(f"  {b}-bit    = layers · n · (E · {b}/8 + V · {scale}) = {lay.layers} · {context:,} · "
                     f"({e:,} · {b / 8:g} + {v} · {scale}) = {total:,.0f} B")
    return lines
