"""`analyze kv-size`: KV cache bytes per token and per context from public configs, plus custom shapes."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from analyzer.attention.kvsize import PRESETS  # plain data (the package imports NumPy only on demand)
from analyzer.cli.context import CliContext
from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.attention.kvsize import KvLayout

NAME = "kv-size"
HELP = "KV cache bytes per token and per context (MHA/GQA/MQA/MLA presets or your own numbers)"
ORDER = 61
DESCRIPTION = (
    "MHA/GQA/MQA: 2 · layers · kv_heads · head_dim elements per token; MLA: (d_c + d_h^R) · layers. Presets come "
    "from public model configs; --layers with --kv-heads/--head-dim or --latent-dim/--rope-dim adds a custom model. "
    "Also shows what DeepSeek-V2's '93.3% KV cache reduction' vs DeepSeek 67B rests on."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", action="append", default=None, metavar="NAME",
                        help=f"show only these presets, repeatable ({', '.join(PRESETS)})")
    parser.add_argument("--context", type=int, default=10_000, metavar="TOKENS", help="context length (10000)")
    parser.add_argument("--bits", type=float, default=16.0, help="bits per cached element, 16 = BF16/FP16")
    parser.add_argument("--window", type=int, default=None, metavar="W",
                        help="also show full / windowed (last W positions) / 8-bit / 4-bit bytes, with formulas")
    parser.add_argument("--full-layers", type=int, default=0, metavar="N",
                        help="with --window: layers that keep full attention (0 = every layer windowed)")
    custom = parser.add_argument_group("custom model (shown instead of the presets unless --preset is given)")
    custom.add_argument("--name", default="custom", help="label for the custom model")
    custom.add_argument("--layers", type=int, default=None, help="layers")
    custom.add_argument("--heads", type=int, default=None, help="query heads (only to label MHA vs GQA)")
    custom.add_argument("--kv-heads", type=int, default=None, help="KV heads (1 = MQA)")
    custom.add_argument("--head-dim", type=int, default=None, help="head dimension")
    custom.add_argument("--latent-dim", type=int, default=None, metavar="D_C", help="MLA compressed KV dim d_c")
    custom.add_argument("--rope-dim", type=int, default=None, metavar="D_H_R", help="MLA decoupled RoPE key dim")


def _custom(args: argparse.Namespace) -> KvLayout | None:
    from analyzer.attention.kvsize import KvLayout

    given = [args.kv_heads, args.head_dim, args.latent_dim, args.rope_dim]
    _refuse_contradictions(args)
    if args.layers is None:
        if any(v is not None for v in given):
            raise AnalyzerError("a custom model needs --layers as well (e.g. --layers 32 --kv-heads 8 --head-dim 128)")
        return None
    if args.latent_dim is not None:
        return KvLayout(args.name, "MLA", layers=args.layers, latent_dim=args.latent_dim, rope_dim=args.rope_dim or 0,
                        source="command-line numbers")
    if args.kv_heads is None or args.head_dim is None:
        raise AnalyzerError("give --kv-heads and --head-dim (MHA/GQA/MQA) or --latent-dim and --rope-dim (MLA)")
    if args.kv_heads == 1:
        kind = "MQA"
    elif args.heads is None:  # the bytes do not depend on it; the label does
        kind = "MHA/GQA"
    else:
        kind = "GQA" if args.heads > args.kv_heads else "MHA"
    return KvLayout(args.name, kind, layers=args.layers, kv_heads=args.kv_heads, head_dim=args.head_dim,
                    source="command-line numbers")


def _refuse_contradictions(args: argparse.Namespace) -> None:
    """One shape per custom model: options that describe two different caches, or impossible head counts,
    are refused rather than one silently winning."""
    for option in ("layers", "heads", "kv_heads", "head_dim", "latent_dim", "rope_dim"):
        value = getattr(args, option)
        if value is not None and value < (0 if option == "rope_dim" else 1):
            raise AnalyzerError(f"--{option.replace('_', '-')} must be {'0' if option == 'rope_dim' else '1'} or more")
    head_options = [f"--{o.replace('_', '-')}" for o in ("heads", "kv_heads", "head_dim")
                    if getattr(args, o) is not None]
    if args.latent_dim is not None and head_options:
        raise AnalyzerError(f"--latent-dim (MLA) and {', '.join(head_options)} (MHA/GQA/MQA) describe different "
                            "caches; give one set")
    if args.rope_dim is not None and args.latent_dim is None:
        raise AnalyzerError("--rope-dim belongs to MLA: give --latent-dim as well, or drop --rope-dim")
    if args.heads is not None and args.kv_heads is not None:
        if args.kv_heads > args.heads:
            raise AnalyzerError(f"--kv-heads {args.kv_heads} is more than --heads {args.heads}; each KV head serves "
                                "one or more query heads")
        if args.heads % args.kv_heads:
            raise AnalyzerError(f"--heads {args.heads} is not a multiple of --kv-heads {args.kv_heads} (GQA groups "
                                "the query heads evenly)")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.attention.kvsize import find_preset, v2_reduction_check
    from analyzer.attention.render import print_kv_size

    if args.context < 0:
        raise AnalyzerError("--context must be 0 or more tokens")
    if not 0 < args.bits <= 64:
        raise AnalyzerError("--bits must be in (0, 64], e.g. 16 for BF16 or 8 for FP8")
    custom = _custom(args)
    layouts = [find_preset(n) for n in args.preset] if args.preset else ([] if custom else list(PRESETS.values()))
    if custom:
        layouts.append(custom)
    _check_window(args, layouts)
    names = {lay.name for lay in layouts}
    check = v2_reduction_check() if {"DeepSeek-V2", "DeepSeek 67B"} <= names else None
    if ctx.json:
        models = [lay.to_dict(args.bits, args.context) for lay in layouts]
        if args.window is not None:
            for model, lay in zip(models, layouts, strict=True):
                model["capacity"] = capacity_dict(lay, args.bits, args.context, args.window, args.full_layers)
        payload: dict[str, object] = {"models": models}
        if check:
            payload["deepseek_v2_claim"] = check.to_dict()
        ctx.emit_json(payload)
        return 0
    print_kv_size(ctx.out, layouts, args.bits, args.context, check)
    if args.window is not None:
        from analyzer.attention.render_capacity import print_kv_capacity

        print_kv_capacity(ctx.out, layouts, args.bits, args.context, args.window, args.full_layers)
    return 0


def _check_window(args: argparse.Namespace, layouts: list[KvLayout]) -> None:
    if args.window is None:
        if args.full_layers:
            raise AnalyzerError("--full-layers belongs to --window: give --window W as well")
        return
    if args.window < 1:
        raise AnalyzerError("--window must be at least 1 position, e.g. --window 4096")
    if args.full_layers < 0:
        raise AnalyzerError("--full-layers must be 0 or more")
    for lay in layouts:
        if args.full_layers > lay.layers:
            raise AnalyzerError(f"--full-layers {args.full_layers} is more than {lay.name}'s {lay.layers} layers")


def capacity_dict(lay: KvLayout, bits: float, context: int, window: int, full_layers: int) -> dict[str, object]:
    """The four figures `kv-size --window` prints, with the inputs that check them by hand."""
    from analyzer.attention.kvsize import SCALE_BITS

    return {"window": window, "full_layers": full_layers, "windowed_layers": lay.layers - full_layers,
            "elements_per_token_per_layer": lay.elements_per_token // lay.layers,
            "scaled_vectors_per_token_per_layer": lay.vectors_per_token // lay.layers, "scale_bits": SCALE_BITS,
            "full_bytes": lay.bytes_per_token(bits) * context,
            "windowed_bytes": lay.windowed_bytes(bits, context, window, full_layers),
            "int8_bytes": lay.quantized_bytes_per_token(8) * context,
            "int4_bytes": lay.quantized_bytes_per_token(4) * context}
