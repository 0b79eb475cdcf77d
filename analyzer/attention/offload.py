"""Experiment "offload": where the K/V bytes live when the cache is offloaded layer by layer — computed, not measured.

Offloading changes *where* the cache is kept, not its values: Hugging Face's OffloadedCache keeps the layer being
computed on the device, prefetches the next layer from host memory and sends the previous one back, so its
outputs equal the default cache's. Per decode step every layer's K/V crosses to the device once and back once.
No device and no link are involved here: every figure is the formula below applied to a model's shape, and
the time a transfer takes depends on a link this tool does not know.

    per-layer bytes per token   b = bytes_per_token / layers
    on the device               2 layers (the current one and the prefetched next): 2 · b · n
    in host memory              the other layers: (layers − 2) · b · n
    one decode step at n cached host → device b · n per layer, layers · b · n in all; device → host the same
                                layers with the new token: layers · b · (n + 1)
    with 2 layers or fewer      everything stays on the device and nothing moves (Transformers' OffloadedCache
                                sends a layer back only when there are more than two)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.attention.kvsize import KvLayout

DEVICE_LAYERS = 2  # the current layer and the prefetched next one (a third is briefly in flight back to the host)


@dataclass(frozen=True)
class OffloadPlan:
    layout: KvLayout
    context: int
    bits: float = 16.0

    @property
    def layer_bytes_per_token(self) -> float:
        return self.layout.bytes_per_token(self.bits) / self.layout.layers

    @property
    def total_bytes(self) -> float:
        return self.layout.bytes_per_token(self.bits) * self.context

    @property
    def device_layers(self) -> int:
        return min(DEVICE_LAYERS, self.layout.layers)

    @property
    def device_bytes(self) -> float:
        return self.device_layers * self.layer_bytes_per_token * self.context

    @property
    def host_bytes(self) -> float:
        return self.total_bytes - self.device_bytes

    @property
    def offloaded(self) -> bool:
        """Transformers' OffloadedCache sends a layer back only when there are more than two layers."""
        return self.layout.layers > DEVICE_LAYERS

    @property
    def step_to_device(self) -> float:
        return self.total_bytes if self.offloaded else 0.0

    @property
    def step_to_host(self) -> float:
        return self.layout.bytes_per_token(self.bits) * (self.context + 1) if self.offloaded else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.layout.name, "kind": self.layout.kind, "layers": self.layout.layers,
                "context_tokens": self.context, "bits_per_element": self.bits,
                "bytes_per_token": self.layout.bytes_per_token(self.bits),
                "layer_bytes_per_token": self.layer_bytes_per_token, "total_bytes": self.total_bytes,
                "offloaded": self.offloaded, "device_layers": self.device_layers, "device_bytes": self.device_bytes,
                "host_bytes": self.host_bytes,
                "decode_step_host_to_device_bytes": self.step_to_device,
                "decode_step_device_to_host_bytes": self.step_to_host,
                "device_bytes_without_offload": self.total_bytes, "basis": "computed from the formula; not measured"}


@dataclass(frozen=True)
class OffloadResult:
    plans: list[OffloadPlan]

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": "offload", "computed_not_measured": True,
                "pattern": "Hugging Face OffloadedCache: current layer on the device, next prefetched, previous "
                           "sent back to the host",
                "plans": [p.to_dict() for p in self.plans]}


def toy_layout(layers: int, kv_heads: int, head_dim: int) -> KvLayout:
    return KvLayout("toy decoder", "MHA/GQA", layers=layers, kv_heads=kv_heads, head_dim=head_dim,
                    source="the `analyze attention` model")


def run_offload(toy: KvLayout, toy_context: int, model: KvLayout, context: int) -> OffloadResult:
    return OffloadResult([OffloadPlan(toy, toy_context), OffloadPlan(model, context)])
