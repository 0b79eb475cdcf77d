"""KV cache capacity per token from public model configs, and what the DeepSeek-V2 "93.3%" claim rests on.

Standard attention stores a K and a V vector per layer per KV head: 2 · layers · kv_heads · head_dim elements
per token (MHA: kv_heads = heads; GQA: fewer; MQA: 1). DeepSeek-V2's MLA caches one compressed latent c^KV
(d_c) plus one decoupled RoPE key (d_h^R) per layer, shared by all heads: (d_c + d_h^R) · layers elements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.errors import AnalyzerError

V2_PAPER = "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model (arXiv:2405.04434)"
V2_CLAIMED_REDUCTION = 0.933
SCALE_BITS = 16  # a quantized cache stores one 16-bit scale per cached vector (per token, per KV head, K and V)


def quantized_bytes(elements: int, vectors: int, bits: float, scale_bits: float = SCALE_BITS) -> float:
    """Bytes of `elements` values at `bits` each plus one `scale_bits` scale for each of `vectors` vectors.

    Symmetric per-token quantization: each cached vector (one head's K or V at one position; for MLA the latent and
    the RoPE key) is divided by its own scale max|x| / (2^(bits−1) − 1), so the scales are per token and grow with
    the context like the values do. Leaving them out understates a 4-bit cache by 2 bytes per vector.
    """
    return elements * bits / 8 + vectors * scale_bits / 8


@dataclass(frozen=True)
class KvLayout:
    """One model's cached-state shape. kind is MHA, GQA, MQA or MLA, or "MHA/GQA" when the query heads are not
    known (the cache is the same size either way; only the label needs them)."""

    name: str
    kind: str
    layers: int
    kv_heads: int = 0
    head_dim: int = 0
    latent_dim: int = 0  # MLA d_c
    rope_dim: int = 0  # MLA d_h^R
    source: str = ""

    def __post_init__(self) -> None:
        if self.layers < 1:
            raise AnalyzerError(f"{self.name}: layers must be positive")
        if self.kind == "MLA":
            if self.latent_dim < 1 or self.rope_dim < 0:
                raise AnalyzerError(f"{self.name}: MLA needs --latent-dim (d_c) ≥ 1 and --rope-dim (d_h^R) ≥ 0")
        elif self.kind in ("MHA", "GQA", "MQA", "MHA/GQA"):
            if self.kv_heads < 1 or self.head_dim < 1:
                raise AnalyzerError(f"{self.name}: {self.kind} needs --kv-heads and --head-dim ≥ 1")
        else:
            raise AnalyzerError(f"{self.name}: unknown attention kind {self.kind!r} (MHA, GQA, MQA or MLA)")

    @property
    def formula(self) -> str:
        if self.kind == "MLA":
            return f"({self.latent_dim} + {self.rope_dim}) · {self.layers}"
        return f"2 · {self.layers} · {self.kv_heads} · {self.head_dim}"

    @property
    def elements_per_token(self) -> int:
        if self.kind == "MLA":
            return (self.latent_dim + self.rope_dim) * self.layers
        return 2 * self.layers * self.kv_heads * self.head_dim

    def bytes_per_token(self, bits: float) -> float:
        return self.elements_per_token * bits / 8

    @property
    def vectors_per_token(self) -> int:
        """Cached vectors per token, each with its own scale when quantized: K and V per KV head per layer; MLA's
        latent c^KV and (when d_h^R > 0) its RoPE key per layer."""
        if self.kind == "MLA":
            return (2 if self.rope_dim else 1) * self.layers
        return 2 * self.layers * self.kv_heads

    def quantized_bytes_per_token(self, bits: float) -> float:
        return quantized_bytes(self.elements_per_token, self.vectors_per_token, bits)

    def windowed_bytes(self, bits: float, context: int, window: int, full_layers: int = 0) -> float:
        """Bytes for `context` tokens when every layer but `full_layers` keeps only its last `window` positions."""
        per_layer_token = self.bytes_per_token(bits) / self.layers
        return per_layer_token * (full_layers * context + (self.layers - full_layers) * min(context, window))

    def to_dict(self, bits: float, context: int) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "layers": self.layers, "kv_heads": self.kv_heads,
                "head_dim": self.head_dim, "latent_dim": self.latent_dim, "rope_dim": self.rope_dim,
                "formula": self.formula, "elements_per_token": self.elements_per_token, "bits_per_element": bits,
                "bytes_per_token": self.bytes_per_token(bits), "context_tokens": context,
                "bytes_for_context": self.bytes_per_token(bits) * context, "source": self.source}


PRESETS: dict[str, KvLayout] = {p.name: p for p in (
    KvLayout("DeepSeek-V2", "MLA", layers=60, latent_dim=512, rope_dim=64,
             source=f"{V2_PAPER}; deepseek-ai/DeepSeek-V2 config.json: num_hidden_layers=60, kv_lora_rank=512, "
                    "qk_rope_head_dim=64"),
    KvLayout("DeepSeek-V3", "MLA", layers=61, latent_dim=512, rope_dim=64,
             source="DeepSeek-V3 Technical Report (arXiv:2412.19437); deepseek-ai/DeepSeek-V3 config.json: "
                    "num_hidden_layers=61, kv_lora_rank=512, qk_rope_head_dim=64"),
    KvLayout("DeepSeek 67B", "GQA", layers=95, kv_heads=8, head_dim=128,
             source="DeepSeek LLM: Scaling Open-Source Language Models with Longtermism (arXiv:2401.02954); "
                    "deepseek-ai/deepseek-llm-67b-base config.json: num_hidden_layers=95, num_key_value_heads=8, "
                    "hidden_size 8192 / 64 heads = head dim 128"),
    KvLayout("Llama-3-8B", "GQA", layers=32, kv_heads=8, head_dim=128,
             source="meta-llama/Meta-Llama-3-8B config.json: num_hidden_layers=32, num_key_value_heads=8, "
                    "hidden_size 4096 / 32 heads = head dim 128"),
)}


def find_preset(name: str) -> KvLayout:
    for key, layout in PRESETS.items():
        if key.lower().replace(" ", "-") == name.lower().replace(" ", "-"):
            return layout
    raise AnalyzerError(f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}")


@dataclass(frozen=True)
class ReductionCheck:
    """V2 vs 67B: the saving at equal precision, and the V2 bit-width that makes the paper's figure come out."""

    v2: KvLayout
    base: KvLayout
    base_bits: float = 16.0

    @property
    def saving_same_precision(self) -> float:
        return 1 - self.v2.elements_per_token / self.base.elements_per_token

    @property
    def implied_v2_bits(self) -> float:
        """Bits per V2 element so that V2 bytes = (1 − 0.933) · 67B bytes at `base_bits`."""
        return (1 - V2_CLAIMED_REDUCTION) * self.base.elements_per_token * self.base_bits / self.v2.elements_per_token

    def saving_at(self, v2_bits: float) -> float:
        return 1 - self.v2.bytes_per_token(v2_bits) / self.base.bytes_per_token(self.base_bits)

    def to_dict(self) -> dict[str, Any]:
        return {"claim": "93.3% KV cache reduction vs DeepSeek 67B", "source": V2_PAPER,
                "v2_elements_per_token": self.v2.elements_per_token,
                "base_elements_per_token": self.base.elements_per_token, "base_bits": self.base_bits,
                "saving_bf16_both": self.saving_same_precision, "implied_v2_bits": self.implied_v2_bits,
                "saving_at_6_bits": self.saving_at(6.0)}


def v2_reduction_check() -> ReductionCheck:
    return ReductionCheck(PRESETS["DeepSeek-V2"], PRESETS["DeepSeek 67B"])


def human_bytes(n: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:,.2f} {unit}"
    return f"{n:,.0f} B"
