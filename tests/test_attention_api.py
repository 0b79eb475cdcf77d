"""The attention experiments through `analyzer.api.attention`: exact counts on the typed results, each run only
when asked, and bad sizes refused with one `AnalyzerError` (the command line's rendering is in
tests/test_attention_cli.py)."""

from __future__ import annotations

import pytest

from analyzer.api.attention import AttentionOptions, attention
from analyzer.attention.config import ModelConfig
from analyzer.errors import AnalyzerError


def test_append_and_edit_counts_and_the_qk_curve() -> None:
    result = attention(ModelConfig(), AttentionOptions(("append", "edit"), length=12, qk_curve=True))
    assert result.ran == ["append", "edit"] and result.prefix is None and len(result.records) == 2
    appended = result.append
    assert appended is not None and appended.within_tolerance
    assert appended.cached.qk_dots == [13 * 4, 13 * 4]
    assert appended.recomputed.kv_computed == [13 * 2, 13 * 2]
    assert len(appended.qk_curve) == 13 and appended.qk_curve[-1] == (13, 13 * 8, 13 * 14 // 2 * 8)
    assert result.edit is not None
    two_layers, one_layer = result.edit  # the configured model, then its 1-layer twin
    assert [two_layers.changed_positions(i) for i in range(2)] == [[6], list(range(6, 12))]
    assert one_layer.config.layers == 1 and one_layer.changed_positions(0) == [6]


def test_the_curve_is_measured_only_when_asked() -> None:
    result = attention(ModelConfig(), AttentionOptions(("append",), length=5))
    assert result.append is not None and result.append.qk_curve == []


def test_float32_mqa_append_uses_the_float32_tolerance() -> None:
    result = attention(ModelConfig(kv_heads=1, dtype="float32"), AttentionOptions(("append",), length=5))
    assert result.config.attention_kind == "MQA" and result.config.tolerance == 1e-5
    assert result.append is not None and result.append.within_tolerance and result.edit is None


def test_prefix_runs_alone_with_the_block_size_asked() -> None:
    result = attention(ModelConfig(), AttentionOptions(("prefix",), block_sizes=(8,), verify_max=100))
    assert result.ran == ["prefix"] and result.prefix
    assert {p.block_size for p in result.prefix} == {8}
    payload = result.to_dict()
    assert list(payload) == ["config", "prefix"] and {p["block_size"] for p in payload["prefix"]} == {8}


def test_capacity_experiments_give_exact_counts() -> None:
    result = attention(ModelConfig(), AttentionOptions(length=16, verify_max=100, window=4, budgets=(8,),
                                                       generate=3))
    assert result.ran == ["append", "edit", "prefix", "window", "quantize", "evict", "offload"]
    window = result.window
    assert window is not None and window.within_tolerance and window.config.tolerance == 1e-12
    assert window.kept_per_layer == [4, 4] and window.held_positions == [12, 13, 14, 15]
    assert window.rolling.qk_dots == [4 * (1 + 2 + 3 + 4 * 13)] * 2
    assert window.first_position_differing == 4
    assert result.quantize is not None
    quant = {run.bits: run for run in result.quantize.runs}
    assert quant[8].bytes_per_token == 80 and quant[4].bytes_per_token == 48
    assert len(quant[4].generated) == 3 and all(len(run.layer_max_abs) == 2 for run in quant.values())
    assert result.to_dict()["quantize"]["runs"][0]["bytes_per_token_16bit"] == 128
    assert result.evict is not None
    assert {run.policy for run in result.evict.runs} == {"recent", "sinks + recent", "heavy hitters + recent"}
    assert all(run.bytes_kept == 8 * 128 for run in result.evict.runs)
    assert all(max(run.by_position) > 0 for run in result.evict.runs)
    assert result.offload is not None
    plan = result.offload.plans[1]
    assert plan.layout.name == "Llama-3-8B" and plan.total_bytes == 4 * 2**30


def test_offload_to_a_named_preset_and_the_records_language() -> None:
    result = attention(ModelConfig(layers=4), AttentionOptions(("offload",), length=10, offload_model="deepseek-v2",
                                                               offload_context=1000, lang="zh"))
    assert result.offload is not None and result.offload.plans[1].layout.name == "DeepSeek-V2"
    assert "尚未排除" in result.markdown()


@pytest.mark.parametrize("config,options,needle", [
    ({}, AttentionOptions(("prefix",), verify_max=-1), "--verify-max"),
    ({}, AttentionOptions(("offload",), offload_context=0), "--offload-context"),
    ({}, AttentionOptions(("offload",), offload_model="gpt-9"), "choose one of"),
    ({}, AttentionOptions(("bogus",)), "unknown experiment"),
    ({"kv_heads": 3}, AttentionOptions(("append",)), "multiple of KV heads"),
    ({"head_dim": 5}, AttentionOptions(("append",)), "even"),
])
def test_bad_sizes_raise_one_analyzer_error(config: dict, options: AttentionOptions, needle: str) -> None:
    with pytest.raises(AnalyzerError, match=needle):
        attention(ModelConfig(**config), options)
