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


def test_several_logs_of_one_server_are_read_as_one(tmp_path: Path) -> None:
    m1, _t1, m2, *_ = interleaved()
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(json.dumps(row(m1, cached=0)) + "\n", encoding="utf-8")
    second.write_text(json.dumps(row(m2, at=60, cached=tokens_of(m1))) + "\n", encoding="utf-8")
    alone = api.prefix(second).requests[0]
    assert alone.predicted == 0 and alone.cause is not None and alone.cause.kind == "unseen"
    joined = api.prefix([first, second])
    assert [r.row for r in joined.requests] == [1, 2] and joined.requests[1].cause is None
    assert joined.requests[1].predicted == tokens_of(m1) and joined.log == f"{first}, {second}"
