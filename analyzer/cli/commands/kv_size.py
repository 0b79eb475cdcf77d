"""`analyze kv-size`: KV cache bytes per token and per context from public configs, plus custom shapes."""

from __future__ import annotations

import argparse

from analyzer.attention.kvsize import PRESETS  # plain data (the package imports NumPy only on demand)
from analyzer.cli.context import CliContext

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


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.api.kv_size import CustomModel, KvSizeOptions, kv_size
    from analyzer.attention.render import print_kv_size

    custom = CustomModel(args.layers, args.heads, args.kv_heads, args.head_dim, args.latent_dim, args.rope_dim,
                         args.name)
    result = kv_size(KvSizeOptions(args.preset, args.context, args.bits, args.window, args.full_layers, custom))
    if ctx.json:
        ctx.emit_json(result.to_dict())
        return 0
    print_kv_size(ctx.out, result.layouts, args.bits, args.context, result.check)
    if args.window is not None:
        from analyzer.attention.render_capacity import print_kv_capacity

        print_kv_capacity(ctx.out, result.layouts, args.bits, args.context, args.window, args.full_layers)
    return 0
