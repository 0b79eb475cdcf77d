"""Model configuration for the attention experiments, validated once so every path can trust it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from analyzer.errors import AnalyzerError

DTYPES: dict[str, type[np.floating[Any]]] = {"float64": np.float64, "float32": np.float32}

# Largest acceptable max |cache - recompute| for each dtype. float64 is the 1e-12 bound; float32 has
# ~7 significant digits, and with O(1) activations a few ulps of 1.2e-7 accumulate over the layers.
TOLERANCE: dict[str, float] = {"float64": 1e-12, "float32": 1e-5}

RMS_EPS = 1e-6
ROPE_BASE = 10000.0


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the toy decoder. MHA when kv_heads == heads, GQA when fewer, MQA when kv_heads == 1."""

    layers: int = 2
    d_model: int = 32
    heads: int = 4
    kv_heads: int = 2
    head_dim: int = 8
    d_ff: int = 64
    vocab: int = 64
    seed: int = 0
    dtype: str = "float64"
    window: int = 0  # sliding-window attention: each query reads its last `window` positions (itself included); 0 = all

    def __post_init__(self) -> None:
        for name in ("layers", "d_model", "heads", "kv_heads", "head_dim", "d_ff", "vocab"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise AnalyzerError(f"model {name} must be a positive integer, got {value!r}")
        if self.heads % self.kv_heads:
            raise AnalyzerError(f"query heads ({self.heads}) must be a multiple of KV heads ({self.kv_heads}); "
                                "pick e.g. --kv-heads 1 (MQA) or --kv-heads equal to --heads (MHA)")
        if self.head_dim % 2:
            raise AnalyzerError(f"head dim must be even for RoPE pairs, got {self.head_dim}")
        if self.vocab < 2:
            raise AnalyzerError("vocab must have at least 2 tokens so an edit can change one")
        if not isinstance(self.window, int) or self.window < 0:
            raise AnalyzerError(f"window must be 0 (full attention) or a positive number of positions, "
                                f"got {self.window!r}")
        if self.dtype not in DTYPES:
            raise AnalyzerError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")

    @property
    def np_dtype(self) -> type[np.floating[Any]]:
        return DTYPES[self.dtype]

    @property
    def attention_kind(self) -> str:
        if self.kv_heads == self.heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"

    @property
    def tolerance(self) -> float:
        return TOLERANCE[self.dtype]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        return (f"{self.layers} layers, d_model {self.d_model}, {self.heads} query heads / {self.kv_heads} KV heads "
                f"({self.attention_kind}), head dim {self.head_dim}, d_ff {self.d_ff}, vocab {self.vocab}, "
                f"seed {self.seed}, {self.dtype}" + (f", sliding window {self.window}" if self.window else ""))
