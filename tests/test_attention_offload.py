"""Offload: device vs host bytes and the transfer per decode step, computed from the formula (not measured)."""

from __future__ import annotations

from analyzer.attention.kvsize import find_preset
from analyzer.attention.offload import OffloadPlan, run_offload, toy_layout


def test_llama_at_32k_tokens() -> None:
    plan = OffloadPlan(find_preset("Llama-3-8B"), 32_768)
    per_token = 2 * 32 * 8 * 128 * 2
    assert plan.total_bytes == 32_768 * per_token == 4 * 2**30
    assert plan.layer_bytes_per_token == per_token / 32
    assert plan.device_layers == 2 and plan.device_bytes == 2 * 32_768 * per_token / 32 == 256 * 2**20
    assert plan.host_bytes + plan.device_bytes == plan.total_bytes
    assert plan.step_to_device == plan.total_bytes  # every layer crosses once per decode step
    assert plan.step_to_host == per_token * 32_769  # and goes back holding the new token
    assert plan.to_dict()["basis"] == "computed from the formula; not measured"


def test_two_layers_stay_on_the_device() -> None:
    plan = OffloadPlan(toy_layout(2, 2, 8), 32)
    assert not plan.offloaded and plan.host_bytes == 0 and plan.device_bytes == plan.total_bytes == 32 * 128
    assert plan.step_to_device == plan.step_to_host == 0
    three = OffloadPlan(toy_layout(3, 2, 8), 32)
    assert three.offloaded and three.host_bytes == 32 * 64 and three.step_to_device == 3 * 32 * 64


def test_result_lists_both_plans_and_says_it_is_computed() -> None:
    r = run_offload(toy_layout(4, 1, 8), 16, find_preset("DeepSeek-V2"), 1000)
    data = r.to_dict()
    assert data["computed_not_measured"] is True
    assert [p["model"] for p in data["plans"]] == ["toy decoder", "DeepSeek-V2"]
    assert data["plans"][1]["total_bytes"] == 1000 * 34_560 * 2
