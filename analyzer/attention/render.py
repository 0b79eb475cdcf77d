"""Rich tables for the experiments (plain text when stdout is a pipe: the console drops styling itself)."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from analyzer.attention.append import AppendResult
from analyzer.attention.edit import EditResult
from analyzer.attention.kvsize import KvLayout, ReductionCheck, human_bytes
from analyzer.attention.prefix import PrefixResult
from analyzer.attention.record import format_ranges


def make_table(title: str, *columns: str) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i == 0 else "right")
    return table


def show_table(console: Console, table: Table) -> None:
    """Tables keep their rows on one line in pipes and files (rich would otherwise wrap at 80 columns)."""
    if console.is_terminal:
        console.print(table)
    else:
        Console(file=console.file, width=max(console.width, 160), color_system=None, highlight=False,
                emoji=False).print(table)


def short_number(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g}"


def print_append(console: Console, r: AppendResult) -> None:
    c, n = r.config, r.prefill
    console.print(f"append: {n} cached tokens + 1 new; {c.describe()}")
    t = make_table("output consistency (cache vs recompute)", "compared", "max |Δ|", "tolerance", "ok")
    for name, value in (("logits of the new token", r.max_abs_logits), ("hidden states, every layer", r.max_abs_hidden),
                        ("K/V, every layer and position", r.max_abs_kv)):
        t.add_row(name, short_number(value), f"{c.tolerance:g}", "yes" if value <= c.tolerance else "NO")
    show_table(console, t)
    t = make_table("counts for the new token", "counter", "with cache", "without cache", "closed form (with / without)")
    t.add_row("K/V computed per layer per KV head", str(r.cached.kv_computed[0] // c.kv_heads),
              str(r.recomputed.kv_computed[0] // c.kv_heads), f"1 / N+1 = {n + 1}")
    t.add_row("K/V read from cache (total)", f"{r.cached.kv_reused_total:,}", f"{r.recomputed.kv_reused_total:,}",
              f"L·Hkv·N = {c.layers * c.kv_heads * n:,} / 0")
    t.add_row("QK products per query head per layer", f"{r.cached.qk_dots[0] // c.heads:,}",
              f"{r.recomputed.qk_dots[0] // c.heads:,}", f"N+1 = {n + 1} / (N+1)(N+2)/2 = {(n + 1) * (n + 2) // 2:,}")
    t.add_row("K/V computed (total)", f"{r.cached.kv_computed_total:,}", f"{r.recomputed.kv_computed_total:,}", "")
    t.add_row("QK products (total)", f"{r.cached.qk_total:,}", f"{r.recomputed.qk_total:,}", "")
    t.add_row("multiply-adds (total)", f"{r.cached.macs:,}", f"{r.recomputed.macs:,}", "")
    show_table(console, t)


def print_edit(console: Console, results: list[EditResult]) -> None:
    main = results[0]
    console.print(f"edit: token {main.position} of {main.length} changed ({main.old_token} → {main.new_token}); "
                  f"{main.config.describe()}")
    t = make_table("K/V positions that differ from the cached ones (0-based)", "model", "layer", "changed positions",
                   "max |Δ| K/V")
    for r in results:
        for i in range(r.config.layers):
            t.add_row(f"{r.config.layers}-layer", str(i + 1), format_ranges(r.changed_positions(i)),
                      short_number(float(r.delta[i].max())))
    show_table(console, t)
    t = make_table("what can be reused (K/V pairs over layers and KV heads)", "model", "unchanged", "prefix-reusable",
                   "recompute", "QK with reuse", "QK recompute all", "max |Δ| reuse vs recompute")
    for r in results:
        t.add_row(f"{r.config.layers}-layer", f"{r.unchanged_kv:,}", f"{r.prefix_reusable_kv:,}",
                  f"{r.must_recompute_kv:,}", f"{r.reused.qk_total:,}", f"{r.recomputed.qk_total:,}",
                  short_number(max(r.max_abs_logits, r.max_abs_kv)))
    show_table(console, t)


def print_prefix(console: Console, results: list[PrefixResult]) -> None:
    console.print("prefix: block hash = sha256(parent block hash, block tokens), as in vLLM's automatic prefix caching")
    t = make_table("request pairs: second request looked up after the first filled the cache", "pair", "block",
                   "tokens", "hit", "computed", "hit/equal blocks", "K/V saved", "QK saved", "checked")
    for r in results:
        check = f"run, Δ {short_number(r.max_abs_logits)}" if r.ran_model else "counted"
        t.add_row(r.pair, str(r.block_size), f"{r.second_len:,}", f"{r.hit_tokens:,}",
                  f"{r.second_len - r.hit_tokens:,}", f"{r.hit_tokens // r.block_size}/{r.same_token_blocks}",
                  f"{r.kv_saved:,}", f"{r.qk_saved_fraction:.1%}", check)
    show_table(console, t)
    console.print("hit/equal blocks = blocks that hit / blocks whose tokens match at the same index; "
                  "'counted' = closed-form counts for pairs longer than --verify-max")


def print_kv_size(console: Console, layouts: list[KvLayout], bits: float, context: int,
                  check: ReductionCheck | None) -> None:
    t = make_table(f"KV cache per token and for {context:,} tokens at {bits:g} bits per element", "model", "kind",
                   "elements/token (formula)", "bytes/token", f"{context:,} tokens")
    for lay in layouts:
        t.add_row(lay.name, lay.kind, f"{lay.elements_per_token:,} = {lay.formula}",
                  f"{lay.bytes_per_token(bits):,.0f}", human_bytes(lay.bytes_per_token(bits) * context))
    show_table(console, t)
    if check is not None:
        console.print(f"DeepSeek-V2 \"93.3% KV cache reduction\" vs DeepSeek 67B ({check.to_dict()['source']}):")
        console.print(f"  BF16 on both sides: 1 − {check.v2.elements_per_token:,} / {check.base.elements_per_token:,} "
                      f"= {check.saving_same_precision:.1%} saving")
        console.print(f"  93.3% needs V2 at {check.implied_v2_bits:.2f} bits per element on average "
                      f"(67B at {check.base_bits:g}); at 6 bits the saving is {check.saving_at(6):.1%}. The paper "
                      "says V2's deployed KV cache is quantised to about 6 bits per element on average.")
    console.print("sources:")
    for lay in layouts:
        console.print(f"  {lay.name}: {lay.source}")
