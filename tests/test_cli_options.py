"""Options every command shares: defaults shown in --help, --max-depth below 1 and a malformed --at refused
as usage errors (exit 2, like argparse's own)."""

from __future__ import annotations

import argparse

import pytest
from recheck_fixtures import make_upstreams, write_lock

from analyzer.cli import build_parser, main


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser, _ = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_option_help_shows_its_default() -> None:
    missing = []
    for name, p in _subparsers().items():
        formatter = p._get_formatter()
        for action in p._actions:
            default = action.default
            if not action.option_strings or default in (None, False, True, [], argparse.SUPPRESS):
                continue
            text = formatter._expand_help(action) if action.help else ""
            if str(default) not in text and "default" not in text:
                missing.append(f"{name} {action.option_strings[0]}")
    assert missing == []
    assert "(default: 40)" in _subparsers()["trace"].format_help()


@pytest.mark.parametrize("command", [name for name, p in _subparsers().items() if "--max-depth" in p.format_help()])
def test_max_depth_below_one_is_a_usage_error(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [command, *(["lib", "v1"] if command == "bump" else []), "--max-depth", "0"]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "--max-depth: 0 is below 1" in capsys.readouterr().err


def test_malformed_at_is_a_usage_error(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    up = make_upstreams(tmp_path / "up")
    lock = write_lock(tmp_path / "repos.lock", up, up.l1)
    for bad, says in (("lib=abc", "full 40-hex sha"), ("nope=" + "a" * 40, "expected NAME=SHA")):
        assert main(["--lock", str(lock), "trace", "--at", bad]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"error: --at '{bad}'") and says in line


def test_a_cold_build_without_a_terminal_prints_a_line_per_stage(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    import re

    up = make_upstreams(tmp_path / "up")
    lock = write_lock(tmp_path / "repos.lock", up, up.l1)
    cache = tmp_path / "cache"
    assert main(["--lock", str(lock), "--cache-dir", str(cache), "trace"]) == 0
    err = capsys.readouterr().err.splitlines()
    stages = [line for line in err if re.fullmatch(r"(indexing \w+|resolving calls): [\d,]+ (files|edges) in [\d.]+ s",
                                                   line)]
    assert [s.split(":")[0] for s in stages] == ["indexing app", "indexing lib", "resolving calls"]
    assert main(["--lock", str(lock), "--cache-dir", str(cache), "trace"]) == 0
    assert "indexing" not in capsys.readouterr().err  # warm: the stored graph, nothing to report


RECORDERS = [name for name, p in _subparsers().items() if "--record" in p.format_help()]


def test_record_option_is_the_same_everywhere() -> None:
    assert {"observe", "reconcile", "attention"} <= set(RECORDERS)
    for name in RECORDERS:
        p = _subparsers()[name]
        action = next(a for a in p._actions if "--record" in a.option_strings)
        assert (action.nargs, action.const, action.default, action.metavar) == ("?", "-", None, "FILE"), name
        assert "'-' or no FILE: stdout" in (action.help or ""), name


def test_the_exit_code_table_lists_every_command() -> None:
    from pathlib import Path

    table = (Path(__file__).resolve().parents[1] / "docs" / "exit-codes.md").read_text()
    listed = {name.strip("` ") for row in table.splitlines() if row.startswith("| `")
              for name in row.split("|")[1].split(",")}
    assert listed == set(_subparsers())
