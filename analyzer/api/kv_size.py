"""`kv_size`: KV cache bytes per token and per context for presets from public configs or a custom shape.

The checks that refuse a custom model describing two caches, or impossible head counts, live here so a
Python caller gets the same answers (and the same one-line errors) as `analyze kv-size`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.attention.kvsize import KvLayout, ReductionCheck


@dataclass(frozen=True)
class CustomModel:
    """A model given by its numbers (`--layers` with `--kv-heads`/`--head-dim`, or `--latent-dim`/`--rope-dim`).
    `heads` only labels MHA vs GQA; the bytes do not depend on it."""

    layers: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    latent_dim: int | None = None
    rope_dim: int | None = None
    name: str = "custom"


@dataclass(frozen=True)
class KvSizeOptions:
    """Which models (`presets` by name; default every preset, or only the custom model when one is given),
    at `bits` per cached element and `context` tokens; `window` (with `full_layers` kept full) adds the
    capacity figures."""

    presets: list[str] | None = None
    context: int = 10_000
    bits: float = 16.0
    window: int | None = None
    full_layers: int = 0
    custom: CustomModel = field(default_factory=CustomModel)


@dataclass(frozen=True)
class KvSizeResult:
    layouts: list[KvLayout]
    check: ReductionCheck | None  # DeepSeek-V2's 93.3% claim, when both of its models are shown
    options: KvSizeOptions

    def capacity(self, layout: KvLayout) -> dict[str, object] | None:
        """The four figures `--window` adds for one model (None without a window)."""
        o = self.options
        return None if o.window is None else capacity_dict(layout, o.bits, o.context, o.window, o.full_layers)

    def to_dict(self) -> dict[str, object]:
        """The `kv-size --json` document."""
        models: list[dict[str, Any]] = [lay.to_dict(self.options.bits, self.options.context) for lay in self.layouts]
        if self.options.window is not None:
            for model, lay in zip(models, self.layouts, strict=True):
                model["capacity"] = self.capacity(lay)
        payload: dict[str, object] = {"models": models}
        if self.check:
            payload["deepseek_v2_claim"] = self.check.to_dict()
        return payload


def kv_size(options: KvSizeOptions = KvSizeOptions()) -> KvSizeResult:
    """The layouts asked for, checked (bad numbers raise `AnalyzerError`), and the V2 claim when it applies."""
    from analyzer.attention.kvsize import PRESETS, find_preset, v2_reduction_check

    if options.context < 0:
        raise AnalyzerError("--context must be 0 or more tokens")
    if not 0 < options.bits <= 64:
        raise AnalyzerError("--bits must be in (0, 64], e.g. 16 for BF16 or 8 for FP8")
    custom = custom_layout(options.custom)
    layouts = ([find_preset(n) for n in options.presets] if options.presets
               else ([] if custom else list(PRESETS.values())))
    if custom:
        layouts.append(custom)
    _check_window(options, layouts)
    names = {lay.name for lay in layouts}
    check = v2_reduction_check() if {"DeepSeek-V2", "DeepSeek 67B"} <= names else None
    return KvSizeResult(layouts, check, options)


def custom_layout(model: CustomModel) -> KvLayout | None:
    """The custom model's layout, None when no numbers were given."""
    from analyzer.attention.kvsize import KvLayout

    given = [model.kv_heads, model.head_dim, model.latent_dim, model.rope_dim]
    _refuse_contradictions(model)
    if model.layers is None:
        if any(v is not None for v in given):
            raise AnalyzerError("a custom model needs --layers as well (e.g. --layers 32 --kv-heads 8 --head-dim 128)")
        return None
    if model.latent_dim is not None:
        return KvLayout(model.name, "MLA", layers=model.layers, latent_dim=model.latent_dim,
                        rope_dim=model.rope_dim or 0, source="command-line numbers")
    if model.kv_heads is None or model.head_dim is None:
        raise AnalyzerError("give --kv-heads and --head-dim (MHA/GQA/MQA) or --latent-dim and --rope-dim (MLA)")
    if model.kv_heads == 1:
        kind = "MQA"
    elif model.heads is None:  # the bytes do not depend on it; the label does
        kind = "MHA/GQA"
    else:
        kind = "GQA" if model.heads > model.kv_heads else "MHA"
    return KvLayout(model.name, kind, layers=model.layers, kv_heads=model.kv_heads, head_dim=model.head_dim,
                    source="command-line numbers")


def _refuse_contradictions(model: CustomModel) -> None:
    """One shape per custom model: options that describe two different caches, or impossible head counts,
    are refused rather than one silently winning."""
    for option in ("layers", "heads", "kv_heads", "head_dim", "latent_dim", "rope_dim"):
        value = getattr(model, option)
        if value is not None and value < (0 if option == "rope_dim" else 1):
            raise AnalyzerError(f"--{option.replace('_', '-')} must be {'0' if option == 'rope_dim' else '1'} or more")
    head_options = [f"--{o.replace('_', '-')}" for o in ("heads", "kv_heads", "head_dim")
                    if getattr(model, o) is not None]
    if model.latent_dim is not None and head_options:
        raise AnalyzerError(f"--latent-dim (MLA) and {', '.join(head_options)} (MHA/GQA/MQA) describe different "
                            "caches; give one set")
    if model.rope_dim is not None and model.latent_dim is None:
        raise AnalyzerError("--rope-dim belongs to MLA: give --latent-dim as well, or drop --rope-dim")
    if model.heads is not None and model.kv_heads is not None:
        if model.kv_heads > model.heads:
            raise AnalyzerError(f"--kv-heads {model.kv_heads} is more than --heads {model.heads}; each KV head "
                                "serves one or more query heads")
        if model.heads % model.kv_heads:
            raise AnalyzerError(f"--heads {model.heads} is not a multiple of --kv-heads {model.kv_heads} (GQA "
                                "groups the query heads evenly)")


def _check_window(options: KvSizeOptions, layouts: list[KvLayout]) -> None:
    if options.window is None:
        if options.full_layers:
            raise AnalyzerError("--full-layers belongs to --window: give --window W as well")
        return
    if options.window < 1:
        raise AnalyzerError("--window must be at least 1 position, e.g. --window 4096")
    if options.full_layers < 0:
        raise AnalyzerError("--full-layers must be 0 or more")
    for lay in layouts:
        if options.full_layers > lay.layers:
            raise AnalyzerError(f"--full-layers {options.full_layers} is more than {lay.name}'s {lay.layers} layers")


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
