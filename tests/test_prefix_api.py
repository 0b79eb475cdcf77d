"""`api.prefix`: the library face of `analyze prefix` reads a log path or rows and returns the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_prefix_lineage import interleaved, row, tokens_of

from analyzer import api
from analyzer.errors import AnalyzerError


def test_prefix_reads_a_log_and_takes_settings_the_rows_lack(tmp_path: Path) -> None:
    m1, t1, m2, *_ = interleaved()
    rows = [row(m1, cached=0, server={}), row(t1, at=1, server={}, cached=0),
            row(m2, at=2, server={}, cached=tokens_of(m1))]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = api.prefix(log, api.PrefixOptions(rule="llama.cpp", settings={"slots": 1, "cache_ram_mib": 0}))
    assert report.log == str(log) and report.settings is not None and report.settings.startswith("1 slot(s)")
    third = report.requests[2]
    # one slot and no prompt cache: the title call took the slot, so the main call's state is gone
    assert third.predicted is not None and third.predicted < tokens_of(m1)
    assert third.cause is not None and third.cause.kind == "other-slot"
    assert report.as_json()["schema"] == "analyzer.prefix/2"
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(AnalyzerError, match="holds no rows"):
        api.prefix(tmp_path / "empty.jsonl")
