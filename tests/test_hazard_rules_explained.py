"""Every hazard rule explains itself (what / why / example / fix) and `analyze hazards --explain RULE` prints it."""

from __future__ import annotations

import contextlib
import io
import tomllib
from importlib import resources

import pytest

from analyzer.cli import main
from analyzer.hazards.rules import EXPLAINED, load_hazard_rules


def _shipped_rules() -> list[tuple[str, str, dict[str, object]]]:
    out = []
    for entry in resources.files("analyzer.rules.hazards").iterdir():
        if entry.name.endswith(".toml"):
            for table, rules in tomllib.loads(entry.read_text()).items():
                out += [(entry.name, table, r) for r in rules]
    return out


def test_every_shipped_rule_says_what_why_an_example_and_the_fix() -> None:
    rules = _shipped_rules()
    assert len(rules) > 50
    missing = [(f, t, r["name"], k) for f, t, r in rules for k in EXPLAINED if not str(r.get(k, "")).strip()]
    assert missing == []


def test_explain_prints_the_rule_from_its_file() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["hazards", "--explain", "machine-probe"])
    assert code == 0
    text = out.getvalue()
    shipped = load_hazard_rules().explanations["machine-probe"]
    assert "[[control]] in analyzer/rules/hazards/control.toml" in text
    for key in EXPLAINED:
        assert shipped[key] in text


def test_explain_of_an_unknown_rule_is_one_error_line_naming_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["hazards", "--explain", "machine-prob"])
    err = capsys.readouterr().err
    assert code == 3 and err.startswith("error: no hazard rule named 'machine-prob'; closest: machine-probe")
    assert "Traceback" not in err
