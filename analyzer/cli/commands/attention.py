"""`analyze attention append|edit|prefix|window|quantize|evict|offload|all`: NumPy experiments on what a KV cache
saves and what it does not, and on what capacity strategies keep and change."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from analyzer.cli.context import CliContext
from analyzer.cli.options import add_record_option
from analyzer.errors import AnalyzerError
from analyzer.records.i18n import DEFAULT_LANG, LANGS

if TYPE_CHECKING:
    from analyzer.api.attention import AttentionResult
    from analyzer.attention.config import ModelConfig

NAME = "attention"
HELP = ("NumPy attention experiments: what a KV cache saves on append, edit and shared prefixes; what a window, "
        "quantization, eviction and offloading keep and change")
ORDER = 60
DESCRIPTION = (
    "Runs a small seeded decoder (RoPE, causal mask, MHA/GQA/MQA) with and without a KV cache and prints exact "
    "counts. append: one more token, cached vs recomputed. edit: change token m and see which K/V go stale per "
    "layer. prefix: block-hashed prefix cache across request pairs (vLLM-style). window: a rolling cache of W "
    "positions vs the windowed recompute and vs full attention. quantize: K/V in 8 and 4 bits with per-token scales. "
    "evict: sinks + recent, heavy hitters + recent and recent-only budgets. offload: device vs host bytes and the "
    "transfer per step (computed). all: every experiment in order."
)
EXPERIMENTS = ("append", "edit", "prefix", "window", "quantize", "evict", "offload", "all")
CAPACITY_DEFAULT_MODEL = "Llama-3-8B"
DTYPE_NAMES = ("float64", "float32")  # = analyzer.attention.config.DTYPES (a test keeps them equal; no NumPy here)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment", nargs="?", choices=EXPERIMENTS, default="all", help="which experiment (all)")
    model = parser.add_argument_group("model")
    model.add_argument("--layers", type=int, default=2, help="decoder layers (2)")
    model.add_argument("--d-model", type=int, default=32, help="residual width (32)")
    model.add_argument("--heads", type=int, default=4, help="query heads (4)")
    model.add_argument("--kv-heads", type=int, default=2, help="KV heads: = heads MHA, fewer GQA, 1 MQA (2)")
    model.add_argument("--head-dim", type=int, default=8, help="head dimension, even (8)")
    model.add_argument("--d-ff", type=int, default=64, help="MLP hidden width (64)")
    model.add_argument("--vocab", type=int, default=64, help="vocabulary size (64)")
    model.add_argument("--seed", type=int, default=0, help="seed for weights and token ids (0)")
    model.add_argument("--dtype", choices=DTYPE_NAMES, default="float64", help="float64 (default) or float32")
    exp = parser.add_argument_group("experiments")
    exp.add_argument("--length", type=int, default=32, metavar="N", help="cached tokens for append and edit (32)")
    exp.add_argument("--edit-pos", type=int, default=None, metavar="M", help="position to edit, 0-based (N // 2)")
    exp.add_argument("--block-size", type=int, action="append", default=None, metavar="TOKENS",
                     help="prefix block size, repeatable (16 and 64)")
    exp.add_argument("--verify-max", type=int, default=2048, metavar="TOKENS",
                     help="run prefix pairs up to this length through the model; longer ones are counted (2048)")
    cap = parser.add_argument_group("capacity experiments (window, quantize, evict, offload)")
    cap.add_argument("--window", type=int, default=8, metavar="W", help="sliding window in positions (8)")
    cap.add_argument("--generate", type=int, default=8, metavar="STEPS",
                     help="greedy tokens generated after the prompt in quantize (8)")
    cap.add_argument("--budget", type=int, action="append", default=None, metavar="POSITIONS",
                     help="evict: positions kept per layer, repeatable (N/4, N/2, 3N/4)")
    cap.add_argument("--sinks", type=int, default=4, metavar="POSITIONS", help="evict: first positions kept (4)")
    cap.add_argument("--offload-model", default=CAPACITY_DEFAULT_MODEL, metavar="PRESET",
                     help=f"offload: a kv-size preset to compute for ({CAPACITY_DEFAULT_MODEL})")
    cap.add_argument("--offload-context", type=int, default=32_768, metavar="TOKENS",
                     help="offload: context for that preset (32768)")
    out = parser.add_argument_group("output")
    add_record_option(out, "the research records")
    out.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG,
                     help="language of the record's headings and sentences; numbers and names stay as they are (en)")
    out.add_argument("--plot", default=None, metavar="DIR", help="write PNG figures into DIR")
    out.add_argument("--export-params", default=None, metavar="FILE.npz",
                     help="write the model's parameters and config (documented names and shapes) to FILE.npz")


def _config(args: argparse.Namespace) -> ModelConfig:
    from analyzer.attention.config import ModelConfig

    return ModelConfig(layers=args.layers, d_model=args.d_model, heads=args.heads, kv_heads=args.kv_heads,
                       head_dim=args.head_dim, d_ff=args.d_ff, vocab=args.vocab, seed=args.seed, dtype=args.dtype)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.api.attention import AttentionOptions, attention
    from analyzer.attention.render import print_append, print_edit, print_prefix
    from analyzer.attention.render_capacity import print_evict, print_offload, print_quantize, print_window

    config = _config(args)
    which = EXPERIMENTS[:-1] if args.experiment == "all" else (args.experiment,)
    if args.plot and not {"append", "edit"} & set(which):
        raise AnalyzerError("--plot needs the append or edit experiment (or all)")
    result = attention(config, AttentionOptions(
        which, args.length, args.edit_pos, tuple(args.block_size) if args.block_size else None, args.verify_max,
        args.window, args.generate, tuple(args.budget) if args.budget else None, args.sinks, args.offload_model,
        args.offload_context, args.lang, qk_curve=bool(args.plot)))
    payload = result.to_dict()
    if not ctx.json:
        printers: dict[str, Any] = {"append": print_append, "edit": print_edit, "prefix": print_prefix,
                                    "window": print_window, "quantize": print_quantize, "evict": print_evict,
                                    "offload": print_offload}
        for name in which:
            printers[name](ctx.out, result.result(name))
    try:
        written = _write_outputs(args, config, result, payload)
    except OSError as exc:
        raise AnalyzerError(f"cannot write {exc.filename or 'output'}: {exc.strerror or exc}; "
                            "choose a writable path") from exc
    if ctx.json:
        ctx.emit_json(payload)
        return 0
    for path in written:
        ctx.out.print(f"wrote {path}", markup=False)
    if args.export_params:
        ctx.out.print(f"wrote {args.export_params}", markup=False)
    if args.record == "-":
        ctx.out.print()
        ctx.out.print(payload["record"], markup=False, highlight=False)
    elif args.record:
        ctx.out.print(f"wrote {args.record}", markup=False)
    return 0


def _write_outputs(args: argparse.Namespace, config: ModelConfig, result: AttentionResult,
                   payload: dict[str, Any]) -> list[Any]:
    """Plots, exported parameters and the record file; fills `payload` with what was written."""
    from analyzer.atomic import write_text_atomic
    from analyzer.attention.params import export_params, init_params

    written = []
    if args.plot:
        from analyzer.attention.plots import write_plots

        curve = result.append.qk_curve if result.append else None
        title = (f"QK products per new token ({config.attention_kind}, {config.layers} layers, "
                 f"{config.heads} query heads)")
        written = write_plots(args.plot, curve, result.edit, title=title)
        payload["plots"] = [str(p) for p in written]
    if args.export_params:
        export_params(config, init_params(config), args.export_params)
        payload["params_file"] = args.export_params
    markdown = result.markdown()
    if args.record and args.record != "-":
        write_text_atomic(args.record, markdown)
        payload["record_file"] = args.record
    elif args.record == "-":
        payload["record"] = markdown
    return written
