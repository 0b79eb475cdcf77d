"""NumPy attention experiments: a small decoder with an exactly-counted KV cache, and KV capacity formulas.

Public API (what other modules and tests should call):

- `ModelConfig`, `AttentionModel` (`forward(tokens, cache, counters)`, `recompute(tokens, counters)`),
  `KVCache`, `Counters`, `closed_form_counters`
- `init_params`, `param_spec`, `export_params`, `load_params` (documented names and shapes; see `params`)
- experiments: `run_append`, `run_edit`, `run_edit_contrast`, `run_prefix`; prefix identity: `block_hashes`,
  `PrefixCache`
- capacity: `PRESETS`, `KvLayout`, `v2_reduction_check`
"""

from analyzer.attention.append import AppendResult, run_append
from analyzer.attention.blocks import PrefixCache, block_hash, block_hashes
from analyzer.attention.config import ModelConfig
from analyzer.attention.edit import EditResult, run_edit, run_edit_contrast
from analyzer.attention.kvcache import Counters, KVCache, closed_form_counters
from analyzer.attention.kvsize import PRESETS, KvLayout, v2_reduction_check
from analyzer.attention.model import AttentionModel, ForwardResult
from analyzer.attention.params import export_params, init_params, load_params, param_spec
from analyzer.attention.prefix import PrefixResult, run_prefix

__all__ = [
    "AppendResult", "AttentionModel", "Counters", "EditResult", "ForwardResult", "KVCache", "KvLayout",
    "ModelConfig", "PRESETS", "PrefixCache", "PrefixResult", "block_hash", "block_hashes", "closed_form_counters",
    "export_params", "init_params", "load_params", "param_spec", "run_append", "run_edit", "run_edit_contrast",
    "run_prefix", "v2_reduction_check",
]
