"""`analyze attention`: tables, --json, --record (8 fields), --plot PNGs, and one-line errors. The experiments'
numbers are checked through the library in tests/test_attention_api.py; here, that the command renders them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.api.attention import AttentionOptions, attention
from analyzer.attention.config import ModelConfig
from analyzer.cli import main
from analyzer.cli.commands import attention as attention_cmd
from analyzer.cli.commands import kv_size as kv_size_cmd

LABELS = ("Question (问题)", "Sources and versions (来源与版本)", "Inputs and config (输入与配置)",
          "The one thing changed (本次只改变)", "Direct observations (直接观察)", "Interpretation (我的解释)",
          "Not yet ruled out (尚未排除)", "Next check (下一次只验证)")
PNG = b"\x89PNG\r\n\x1a\n"


def test_command_metadata() -> None:
    assert attention_cmd.NAME == "attention" and attention_cmd.ORDER == 60
    assert kv_size_cmd.NAME == "kv-size" and kv_size_cmd.ORDER == 61


def test_all_with_record_to_stdout(capsys) -> None:
    assert main(["attention", "all", "--record", "--verify-max", "300"]) == 0
    out = capsys.readouterr().out
    assert "output consistency" in out and "K/V positions that differ" in out and "request pairs" in out
    assert out.count("**Question (问题):**") == 7  # append, edit, prefix, window, quantize, evict, offload
    for label in LABELS:
        assert f"**{label}:**" in out
    assert "N+1 = 33 / (N+1)(N+2)/2 = 561" in out
    assert "layer 1: 16; layer 2: 16–31" in out
    assert "\x1b[" not in out


def test_record_file_plot_and_json(tmp_path: Path, capsys) -> None:
    record, plots = tmp_path / "notes" / "round1.md", tmp_path / "plots"
    assert main(["attention", "all", "--json", "--length", "12", "--verify-max", "200", "--record", str(record),
                 "--plot", str(plots)]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = attention(ModelConfig(), AttentionOptions(length=12, verify_max=200, qk_curve=True)).to_dict()
    assert {k: v for k, v in data.items() if k not in ("plots", "record_file")} == expected
    assert data["record_file"] == str(record) and len(data["append"]["qk_curve"]) == 13
    text = record.read_text(encoding="utf-8")
    assert text.startswith("# Round 1 research records") and text.count("\n## ") == 7
    for label in LABELS:
        assert label in text
    written = sorted(p.name for p in plots.iterdir())
    assert written == ["edit_kv_changes.png", "qk_vs_length.png"]
    assert data["plots"] == [str(plots / "qk_vs_length.png"), str(plots / "edit_kv_changes.png")]
    for name in written:
        blob = (plots / name).read_bytes()
        assert blob.startswith(PNG) and len(blob) > 2000


def test_single_experiments_and_float32(capsys) -> None:
    assert main(["attention", "append", "--dtype", "float32", "--kv-heads", "1", "--length", "5"]) == 0
    out = capsys.readouterr().out
    assert "tolerance" in out and "1e-05" in out and "MQA" in out and "K/V positions" not in out
    assert main(["attention", "prefix", "--block-size", "8", "--verify-max", "100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == attention(ModelConfig(), AttentionOptions(("prefix",), block_sizes=(8,), verify_max=100)).to_dict()


def test_plot_of_prefix_only_is_an_error(tmp_path: Path, capsys) -> None:
    assert main(["attention", "prefix", "--verify-max", "0", "--plot", str(tmp_path)]) == 3
    assert "append or edit" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--kv-heads", "3"], ["--head-dim", "5"], ["--length", "0"],
                                  ["edit", "--edit-pos", "99"], ["prefix", "--block-size", "0"]])
def test_bad_input_is_one_error_line(argv: list[str], capsys) -> None:
    assert main(["attention", *argv]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_unwritable_record_path_is_an_error_not_a_traceback(tmp_path: Path, capsys) -> None:
    target = tmp_path / "a-dir"
    target.mkdir()
    assert main(["attention", "append", "--length", "3", "--record", str(target)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write") and "Traceback" not in err


def test_json_all_is_the_librarys_document_for_the_options_given(capsys) -> None:
    assert main(["--json", "attention", "all", "--length", "16", "--verify-max", "100", "--window", "4",
                 "--budget", "8", "--generate", "3", "--sinks", "2", "--offload-context", "500"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data) == ["config", "append", "edit", "prefix", "window", "quantize", "evict", "offload"]
    options = AttentionOptions(length=16, verify_max=100, window=4, budgets=(8,), generate=3, sinks=2,
                               offload_context=500)
    assert data == attention(ModelConfig(), options).to_dict()
    assert data["evict"]["sinks"] == 2 and data["offload"]["plans"][1]["context_tokens"] == 500


def test_capacity_experiments_alone_print_their_tables_and_chinese_records(capsys) -> None:
    assert main(["attention", "window", "--length", "12", "--window", "4", "--record", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "rolling cache vs windowed recompute" in out and "restart at P − L(W−1)" in out
    assert "滑动窗口：4 个位置的滚动 K/V cache" in out and "**尚未排除:**" in out and "随机权重" in out
    assert main(["attention", "quantize", "--length", "8", "--generate", "2"]) == 0
    out = capsys.readouterr().out
    assert "2·2·2 vectors × (8·4/8 + 2) B = 48 B" in out and "first generated step differing" in out
    assert main(["attention", "evict", "--length", "12", "--budget", "6", "--sinks", "2"]) == 0
    assert "0–1, 8–11" in capsys.readouterr().out  # sinks 0-1 and the 4 most recent
    assert main(["attention", "offload", "--layers", "4", "--length", "10", "--offload-model", "deepseek-v2",
                 "--offload-context", "1000"]) == 0
    out = capsys.readouterr().out
    assert "COMPUTED, NOT MEASURED" in out and "DeepSeek-V2" in out and "2 of 60" in out


@pytest.mark.parametrize("argv,needle", [(["window", "--window", "0"], "--window"),
                                         (["evict", "--budget", "0"], "--budget"),
                                         (["quantize", "--generate", "0"], "--generate"),
                                         (["offload", "--offload-model", "gpt-9"], "choose one of"),
                                         (["offload", "--offload-context", "0"], "--offload-context"),
                                         (["window", "--plot", "/tmp/never-written"], "append or edit")])
def test_capacity_bad_input_is_one_error_line(argv: list[str], needle: str, capsys) -> None:
    assert main(["attention", *argv]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err and err.count("\n") == 1


def test_export_params_writes_the_librarys_export(tmp_path: Path, capsys) -> None:
    import numpy as np

    from analyzer.attention.params import export_params, init_params

    written, expected = tmp_path / "cli.npz", tmp_path / "lib.npz"
    assert main(["attention", "append", "--d-model", "8", "--heads", "2", "--kv-heads", "1", "--head-dim", "4",
                 "--d-ff", "8", "--vocab", "10", "--seed", "5", "--length", "2", "--export-params", str(written)]) == 0
    assert f"wrote {written}" in capsys.readouterr().out
    config = ModelConfig(d_model=8, heads=2, kv_heads=1, head_dim=4, d_ff=8, vocab=10, seed=5)
    export_params(config, init_params(config), expected)
    with np.load(written) as got, np.load(expected) as want:
        assert sorted(got.files) == sorted(want.files) and "__config__" in got.files
        assert all(np.array_equal(got[k], want[k]) for k in want.files)
