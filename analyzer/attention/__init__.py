"""NumPy attention experiments: a small decoder with an exactly-counted KV cache, and KV capacity formulas.

Public API (what other modules and tests should call):

- `ModelConfig`, `AttentionModel` (`forward(tokens, cache, counters)`, `recompute(tokens, counters)`),
  `KVCache`, `Counters`, `closed_form_counters`
- `init_params`, `param_spec`, `export_params`, `load_params` (documented names and shapes; see `params`)
- experiments: `run_append`, `run_edit`, `run_edit_contrast`, `run_prefix`; prefix identity: `block_hashes`,
  `PrefixCache`
- capacity formulas: `PRESETS`, `KvLayout` (full, windowed and quantized bytes), `v2_reduction_check`
- capacity experiments: `run_window` (`RollingKVCache`), `run_quantize` (`QuantizedKVCache`), `run_evict`
  (`EvictingKVCache`), `run_offload` (`OffloadPlan`, computed)

The names are imported on first use (PEP 562), so importing one light submodule — `kvsize` for the CLI's
preset list — does not pull in NumPy.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "append": ("AppendResult", "run_append"),
    "blocks": ("PrefixCache", "block_hash", "block_hashes"),
    "config": ("ModelConfig",),
    "edit": ("EditResult", "run_edit", "run_edit_contrast"),
    "evict": ("EvictResult", "EvictingKVCache", "run_evict"),
    "kvcache": ("Counters", "KVCache", "closed_form_counters"),
    "kvsize": ("PRESETS", "KvLayout", "v2_reduction_check"),
    "decoder": ("AttentionModel", "ForwardResult"),
    "offload": ("OffloadPlan", "OffloadResult", "run_offload"),
    "params": ("export_params", "init_params", "load_params", "param_spec"),
    "prefix": ("PrefixResult", "run_prefix"),
    "quantize": ("QuantizeResult", "QuantizedKVCache", "run_quantize"),
    "window": ("RollingKVCache", "WindowResult", "run_window"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
