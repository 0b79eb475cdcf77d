"""`analyze engine start` options: how the context is split over slots, what is refused, what the server gets."""

from __future__ import annotations

import pytest

from analyzer.cli import main
from analyzer.engine.options import CTX_PER_SLOT, EngineOptions
from analyzer.errors import AnalyzerError

TRAIN = 131072


def test_default_context_gives_every_slot_32k_tokens() -> None:
    for parallel in (1, 2, 4):
        options = EngineOptions(parallel=parallel)
        assert options.total_ctx == CTX_PER_SLOT * parallel
        assert options.ctx_per_slot(TRAIN) == CTX_PER_SLOT


def test_split_context_is_padded_and_capped_like_llama_cpp() -> None:
    assert EngineOptions(parallel=3, ctx_size=30000).ctx_per_slot(TRAIN) == 10240  # 30,208 / 3 → pad 256
    assert EngineOptions(parallel=2, ctx_size=65536, kv_unified=True).ctx_per_slot(TRAIN) == 65536
    assert EngineOptions(parallel=1, ctx_size=65536).ctx_per_slot(8192) == 8192  # the training context caps


def test_server_args_carry_every_option() -> None:
    args = EngineOptions(parallel=2, ctx_size=65536, cache_ram_mib=0, cache_reuse=256, n_predict=8).server_args()
    pairs = dict(zip(args[::2], args[1::2], strict=False))
    assert pairs["--ctx-size"] == "65536" and pairs["--parallel"] == "2" and pairs["--cache-ram"] == "0"
    assert pairs["--cache-reuse"] == "256" and pairs["--n-predict"] == "8"
    assert "--no-kv-unified" in args and "--cache-idle-slots" in args
    assert "--kv-unified" in EngineOptions(kv_unified=True).server_args()
    assert "--no-cache-idle-slots" in EngineOptions(cache_idle_slots=False).server_args()
    assert EngineOptions(cache_ram_mib=0).as_dict()["cache_idle_slots"] is False, "the server turns it off then"


@pytest.mark.parametrize("options, says", [
    (EngineOptions(parallel=0), "--parallel 0"),
    (EngineOptions(parallel=2, ctx_size=300), "--ctx-size 300"),
    (EngineOptions(parallel=1, ctx_size=2 * TRAIN), "training context"),
    (EngineOptions(cache_ram_mib=-2), "--cache-ram -2"),
    (EngineOptions(cache_reuse=-1), "--cache-reuse -1"),
    (EngineOptions(n_predict=0), "--n-predict 0"),
])
def test_bad_options_are_refused_with_what_to_give(options: EngineOptions, says: str) -> None:
    with pytest.raises(AnalyzerError, match=says.replace("-", r"\-").replace("+", r"\+")):
        options.check(TRAIN)


def test_cli_refuses_bad_options_before_starting_anything(tmp_path, capsys: pytest.CaptureFixture) -> None:
    code = main(["--cache-dir", str(tmp_path), "engine", "start", "--parallel", "2", "--ctx-size", "400000"])
    captured = capsys.readouterr()
    assert code != 0
    assert captured.err.startswith("error:") and "Traceback" not in captured.err
    assert "training context" in captured.err
    assert not (tmp_path / "engine" / "state.json").exists()


def test_help_shows_the_defaults(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        main(["engine", "start", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for needle in ("--ctx-size", "32,768 × --parallel", "--parallel", "(default: 1)", "--cache-ram",
                   "(default: 8,192", "--cache-reuse", "--n-predict", "(default: 16)"):
        assert needle in text, needle


def test_status_without_an_engine_shows_the_start_defaults(tmp_path, capsys: pytest.CaptureFixture) -> None:
    import json

    from analyzer.api.engine import engine_status

    status = engine_status(tmp_path)
    assert status.running is False and status.state is None and status.report["settings"] is None
    defaults = status.report["defaults"]
    assert (defaults["parallel"], defaults["ctx_size"], defaults["cache_ram_mib"], defaults["cache_reuse"],
            defaults["n_predict"]) == (1, CTX_PER_SLOT, 8192, 0, 16)
    assert main(["--cache-dir", str(tmp_path), "engine", "status", "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == status.report
    assert main(["--cache-dir", str(tmp_path), "engine", "status"]) == 1
    assert "--ctx-size 32,768" in capsys.readouterr().out
