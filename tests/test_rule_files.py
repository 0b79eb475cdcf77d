"""One reader for shipped and extra rule files (dispatch and hazard rules alike)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.errors import AnalyzerError
from analyzer.resolve.rules import load_rules
from analyzer.rules.files import read_rule_files


def test_shipped_files_then_extra_in_order_with_a_digest_of_their_text(tmp_path: Path) -> None:
    extra = tmp_path / "mine.toml"
    extra.write_text('[[service]]\nname = "mine"\n', encoding="utf-8")
    shipped, digest = read_rule_files("analyzer.rules")
    both, digest_both = read_rule_files("analyzer.rules", [extra])
    assert [f.name for f in shipped] == sorted(f.name for f in shipped)
    assert all(f.name.startswith("analyzer/rules/") for f in shipped)
    assert [f.name for f in both] == [f.name for f in shipped] + [str(extra)]
    assert both[-1].data == {"service": [{"name": "mine"}]}
    assert len(digest) == 16 and digest != digest_both


def test_a_malformed_dispatch_rule_file_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("[[service]\nname = ", encoding="utf-8")
    with pytest.raises(AnalyzerError, match=r"bad\.toml: malformed rule file .*fix the TOML syntax"):
        load_rules([tmp_path])
