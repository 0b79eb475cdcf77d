"""`analyze attention append|edit|prefix|all`: NumPy experiments on what a KV cache saves and what it does not."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from analyzer.cli.context import CliContext
from analyzer.cli.options import add_record_option
from analyzer.errors import AnalyzerError
from analyzer.records.i18n import DEFAULT_LANG, LANGS

if TYPE_CHECKING:
    from analyzer.attention.config import ModelConfig

NAME = "attention"
HELP = "NumPy attention experiments: what a KV cache saves on append, edit and shared prefixes"
ORDER = 60
DESCRIPTION = (
    "Runs a small seeded decoder (RoPE, causal mask, MHA/GQA/MQA) with and without a KV cache and prints exact "
    "counts. append: one more token, cached vs recomputed. edit: change token m and see which K/V go stale per "
    "layer. prefix: block-hashed prefix cache across request pairs (vLLM-style). all: the three in order."
)
EXPERIMENTS = ("append", "edit", "prefix", "all")
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
    from analyzer.attention.append import run_append
    from analyzer.attention.edit import run_edit_contrast
    from analyzer.attention.prefix import DEFAULT_BLOCK_SIZES, run_prefix
    from analyzer.attention.record import append_record, edit_record, prefix_record
    from analyzer.attention.render import print_append, print_edit, print_prefix

    config = _config(args)
    which = EXPERIMENTS[:3] if args.experiment == "all" else (args.experiment,)
    length = args.length
    position = args.edit_pos if args.edit_pos is not None else length // 2
    if args.plot and args.experiment == "prefix":
        raise AnalyzerError("--plot needs the append or edit experiment (or all)")
    if args.verify_max < 0:
        raise AnalyzerError("--verify-max must be 0 or more tokens")
    payload: dict[str, Any] = {"config": config.to_dict()}
    records = []
    appended = edits = prefixes = None
    if "append" in which:
        appended = run_append(config, length, curve_max=min(length + 1, 64) if args.plot else 0)
        payload["append"] = appended.to_dict()
        records.append(append_record(appended, args.lang))
    if "edit" in which:
        edits = run_edit_contrast(config, length, position)
        payload["edit"] = [e.to_dict() for e in edits]
        records.append(edit_record(edits, args.lang))
    if "prefix" in which:
        sizes = tuple(args.block_size) if args.block_size else DEFAULT_BLOCK_SIZES
        prefixes = run_prefix(config, sizes, verify_max=args.verify_max)
        payload["prefix"] = [p.to_dict() for p in prefixes]
        records.append(prefix_record(config, prefixes, args.verify_max, args.lang))
    if not ctx.json:
        if appended:
            print_append(ctx.out, appended)
        if edits:
            print_edit(ctx.out, edits)
        if prefixes is not None:
            print_prefix(ctx.out, prefixes)
    try:
        written = _write_outputs(args, config, appended, edits, records, payload)
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


def _write_outputs(args: argparse.Namespace, config: ModelConfig, appended: Any, edits: Any,
                   records: list[Any], payload: dict[str, Any]) -> list[Any]:
    """Plots, exported parameters and the record file; fills `payload` with what was written."""
    from analyzer.atomic import write_text_atomic
    from analyzer.attention.params import export_params, init_params
    from analyzer.attention.record import render_records

    written = []
    if args.plot:
        from analyzer.attention.plots import write_plots

        curve = appended.qk_curve if appended else None
        written = write_plots(args.plot, curve, edits, title=f"QK products per new token ({config.attention_kind}, "
                                                              f"{config.layers} layers, {config.heads} query heads)")
        payload["plots"] = [str(p) for p in written]
    if args.export_params:
        export_params(config, init_params(config), args.export_params)
        payload["params_file"] = args.export_params
    markdown = render_records(records, args.lang)
    if args.record and args.record != "-":
        write_text_atomic(args.record, markdown)
        payload["record_file"] = args.record
    elif args.record == "-":
        payload["record"] = markdown
    return written
