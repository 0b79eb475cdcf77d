"""KV capacity formulas, presets from public configs, and the DeepSeek-V2 93.3% claim: through
`analyzer.api.kv_size`; the `analyze kv-size` tests check its text, JSON and one-line errors."""

from __future__ import annotations

import json
import re

import pytest

from analyzer.api.kv_size import CustomModel, KvSizeOptions, kv_size
from analyzer.attention.kvsize import PRESETS, KvLayout, find_preset, v2_reduction_check
from analyzer.cli import main
from analyzer.errors import AnalyzerError


def test_preset_elements_per_token() -> None:
    assert PRESETS["DeepSeek-V2"].elements_per_token == 34_560  # (512 + 64) · 60
    assert PRESETS["DeepSeek-V3"].elements_per_token == (512 + 64) * 61
    assert PRESETS["DeepSeek 67B"].elements_per_token == 2 * 95 * 8 * 128
    assert PRESETS["Llama-3-8B"].elements_per_token == 2 * 32 * 8 * 128
    assert PRESETS["Llama-3-8B"].bytes_per_token(16) == 131_072


def test_formulas_for_mha_gqa_mqa_mla() -> None:
    assert KvLayout("m", "MHA", layers=2, kv_heads=4, head_dim=8).elements_per_token == 2 * 2 * 4 * 8
    assert KvLayout("q", "MQA", layers=3, kv_heads=1, head_dim=8).elements_per_token == 2 * 3 * 8
    assert KvLayout("l", "MLA", layers=3, latent_dim=10, rope_dim=2).bytes_per_token(8) == 36
    with pytest.raises(AnalyzerError):
        KvLayout("x", "MLA", layers=3)
    with pytest.raises(AnalyzerError):
        KvLayout("x", "ABC", layers=3, kv_heads=1, head_dim=1)


def test_v2_claim_rests_on_about_six_bits() -> None:
    check = v2_reduction_check()
    assert round(check.saving_same_precision * 100, 1) == 82.2
    assert check.saving_same_precision == pytest.approx(1 - 34_560 / 194_560)
    assert check.implied_v2_bits == pytest.approx(0.067 * 194_560 * 16 / 34_560)
    assert 6.0 < check.implied_v2_bits < 6.1
    assert round(check.saving_at(6) * 100, 1) == 93.3


def test_find_preset_is_forgiving_about_spaces_and_case() -> None:
    assert find_preset("deepseek-67b").layers == 95
    with pytest.raises(AnalyzerError, match="choose one of"):
        find_preset("gpt-9")


def test_cli_default_shows_presets_claim_and_sources(capsys) -> None:
    assert main(["kv-size"]) == 0
    out = capsys.readouterr().out
    for text in ("34,560 = (512 + 64) · 60", "194,560 = 2 · 95 · 8 · 128", "65,536", "35,136", "82.2%", "6.03 bits",
                 "93.3%", "arXiv:2405.04434", "kv_lora_rank=512", "meta-llama/Meta-Llama-3-8B config.json"):
        assert text in out, text
    assert "\x1b[" not in out  # plain text in a pipe


def test_context_and_bits_scale_the_bytes_and_the_claim_is_kept() -> None:
    result = kv_size(KvSizeOptions(context=1000, bits=8))
    assert [lay.name for lay in result.layouts] == list(PRESETS)
    v2 = next(lay for lay in result.layouts if lay.name == "DeepSeek-V2")
    assert v2.bytes_per_token(8) == 34_560 and v2.to_dict(8, 1000)["bytes_for_context"] == 34_560_000
    assert result.check is not None and result.check.saving_same_precision == pytest.approx(0.8224, abs=1e-4)
    assert result.to_dict()["models"][list(PRESETS).index("DeepSeek-V2")]["bytes_for_context"] == 34_560_000


def test_a_custom_model_replaces_the_presets() -> None:
    result = kv_size(KvSizeOptions(custom=CustomModel(layers=4, heads=8, kv_heads=2, head_dim=16)))
    (custom,) = result.layouts
    assert custom.name == "custom" and custom.kind == "GQA" and custom.elements_per_token == 2 * 4 * 2 * 16
    assert result.check is None and "deepseek_v2_claim" not in result.to_dict()
    (mla,) = kv_size(KvSizeOptions(custom=CustomModel(layers=2, latent_dim=8, rope_dim=4))).layouts
    assert mla.kind == "MLA" and mla.elements_per_token == 24
    named = kv_size(KvSizeOptions(presets=["Llama-3-8B"], custom=CustomModel(layers=1, kv_heads=1, head_dim=8,
                                                                             name="mine")))
    assert [(lay.name, lay.kind) for lay in named.layouts] == [("Llama-3-8B", "GQA"), ("mine", "MQA")]


def test_custom_kv_heads_without_heads_is_not_called_mha() -> None:
    """Without `heads` the tool cannot tell MHA from GQA; it says so instead of guessing MHA."""
    (model,) = kv_size(KvSizeOptions(custom=CustomModel(layers=4, kv_heads=8, head_dim=16))).layouts
    assert model.kind == "MHA/GQA" and model.elements_per_token == 2 * 4 * 8 * 16
    (model,) = kv_size(KvSizeOptions(custom=CustomModel(layers=4, heads=8, kv_heads=8, head_dim=16))).layouts
    assert model.kind == "MHA"


@pytest.mark.parametrize("options,needle", [
    (KvSizeOptions(custom=CustomModel(kv_heads=2)), "needs --layers"),
    (KvSizeOptions(custom=CustomModel(layers=2)), "give --kv-heads and --head-dim"),
    (KvSizeOptions(presets=["nope"]), "choose one of"),
    (KvSizeOptions(bits=0), "--bits"),
    (KvSizeOptions(context=-1), "--context"),
    (KvSizeOptions(custom=CustomModel(layers=2, kv_heads=2, head_dim=8, latent_dim=8)), "describe different caches"),
    (KvSizeOptions(custom=CustomModel(layers=2, kv_heads=2, head_dim=8, rope_dim=4)), "--rope-dim belongs to MLA"),
    (KvSizeOptions(custom=CustomModel(layers=2, heads=4, kv_heads=8, head_dim=8)), "is more than --heads 4"),
    (KvSizeOptions(custom=CustomModel(layers=2, heads=6, kv_heads=4, head_dim=8)), "not a multiple"),
    (KvSizeOptions(custom=CustomModel(layers=0, kv_heads=2, head_dim=8)), "--layers must be 1 or more"),
    (KvSizeOptions(window=0), "--window"),
    (KvSizeOptions(full_layers=2), "--window W"),
    (KvSizeOptions(window=8, full_layers=40), "Llama-3-8B's 32 layers"),
    (KvSizeOptions(window=8, full_layers=-1), "--full-layers"),
])
def test_bad_numbers_are_refused_rather_than_one_silently_winning(options: KvSizeOptions, needle: str) -> None:
    with pytest.raises(AnalyzerError, match=re.escape(needle)):
        kv_size(options)


@pytest.mark.parametrize("argv", [["--kv-heads", "2"], ["--preset", "nope"], ["--context", "-1"],
                                  ["--layers", "2", "--heads", "6", "--kv-heads", "4", "--head-dim", "8"]])
def test_cli_bad_input_is_one_error_line(argv: list[str], capsys) -> None:
    assert main(["kv-size", *argv]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_window_and_quantized_bytes_per_layout() -> None:
    llama = PRESETS["Llama-3-8B"]
    assert llama.vectors_per_token == 2 * 32 * 8
    assert llama.quantized_bytes_per_token(4) == 32 * (2 * 8 * 128 * 4 / 8 + 2 * 8 * 2)  # scales: 2 B per vector
    assert llama.quantized_bytes_per_token(8) == 32 * (2048 + 32)
    assert llama.windowed_bytes(16, 32_768, 4096) == 32 * 4096 * 2048 * 2
    assert llama.windowed_bytes(16, 32_768, 4096, full_layers=16) == (16 * 32_768 + 16 * 4096) * 2048 * 2
    assert llama.windowed_bytes(16, 1000, 4096) == llama.bytes_per_token(16) * 1000  # window longer than context
    v2 = PRESETS["DeepSeek-V2"]
    assert v2.vectors_per_token == 2 * 60  # latent c^KV and the RoPE key, each with its own scale
    assert v2.quantized_bytes_per_token(4) == 60 * (576 / 2 + 2 * 2)
    assert KvLayout("l", "MLA", layers=3, latent_dim=10).vectors_per_token == 3  # no RoPE key, no second scale


def test_window_capacity_figures() -> None:
    result = kv_size(KvSizeOptions(presets=["Llama-3-8B"], context=32_768, window=4096))
    cap = result.capacity(result.layouts[0])
    assert cap is not None and cap["full_bytes"] == 4 * 2**30
    assert cap["windowed_bytes"] == 512 * 2**20 and cap["windowed_layers"] == 32 and cap["full_layers"] == 0
    assert cap["int8_bytes"] == 32 * 32_768 * (2048 + 32) == 2_181_038_080
    assert cap["int4_bytes"] == 32 * 32_768 * (1024 + 32) == 1_107_296_256  # 1 GiB + 32 MiB of scales
    assert cap["scale_bits"] == 16 and cap["scaled_vectors_per_token_per_layer"] == 16
    result = kv_size(KvSizeOptions(presets=["Llama-3-8B"], context=32_768, window=4096, full_layers=8))
    cap = result.capacity(result.layouts[0])
    assert cap is not None and cap["windowed_bytes"] == (8 * 32_768 + 24 * 4096) * 2048 * 2
    assert kv_size(KvSizeOptions(presets=["Llama-3-8B"])).capacity(PRESETS["Llama-3-8B"]) is None


def test_cli_json_is_the_librarys_document(capsys) -> None:
    assert main(["kv-size", "--json", "--window", "4096", "--full-layers", "8", "--context", "32768",
                 "--preset", "Llama-3-8B", "--preset", "DeepSeek-V2", "--bits", "8"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = kv_size(KvSizeOptions(["Llama-3-8B", "DeepSeek-V2"], 32_768, 8, 4096, 8)).to_dict()
    assert data == expected and data["models"][0]["capacity"]["full_layers"] == 8
    assert main(["kv-size", "--json", "--layers", "4", "--kv-heads", "8", "--head-dim", "16", "--name", "mine"]) == 0
    assert json.loads(capsys.readouterr().out) == kv_size(KvSizeOptions(
        custom=CustomModel(layers=4, kv_heads=8, head_dim=16, name="mine"))).to_dict()


def _evaluate(expression: str) -> float:
    """`(0 · 32,768 + 32 · 4,096) · 2,048 · 2` → its value, the way a reader would check it by hand."""
    return float(eval(expression.replace(",", "").replace("·", "*"), {"__builtins__": {}}))  # noqa: S307


def test_cli_window_text_formulas_check_by_hand(capsys) -> None:
    assert main(["kv-size", "--window", "4096", "--full-layers", "2", "--context", "32768"]) == 0
    out = capsys.readouterr().out
    assert "windowed (W = 4,096)" in out and "assumptions:" in out and "16-bit scale per cached vector" in out
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith(("full ", "windowed ", "8-bit ",
                                                                                  "4-bit "))]
    assert len(lines) == 4 * len(PRESETS)
    for line in lines:
        *_, numbers, total = line.split(" = ")
        assert _evaluate(numbers) == float(total.removesuffix(" B").replace(",", "")), line
    assert "4-bit    = layers · n · (E · 4/8 + V · 2) = 32 · 32,768 · (2,048 · 0.5 + 16 · 2) = 1,107,296,256 B" in out


@pytest.mark.parametrize("argv,needle", [(["--window", "0"], "--window"), (["--full-layers", "2"], "--window W"),
                                         (["--window", "8", "--full-layers", "40"], "Llama-3-8B's 32 layers"),
                                         (["--window", "8", "--full-layers", "-1"], "--full-layers")])
def test_cli_window_bad_input(argv: list[str], needle: str, capsys) -> None:
    assert main(["kv-size", *argv]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err and err.count("\n") == 1
