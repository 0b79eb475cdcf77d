"""Reports and `annotate` say which notes file they read, or that none was found and where they looked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recheck_fixtures import Upstreams, make_upstreams, write_lock

from analyzer.annotations import locate_notes
from analyzer.api import ReportOptions, open_session, report
from analyzer.cli import main


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Upstreams:
    return make_upstreams(tmp_path_factory.mktemp("upstreams"))


@pytest.fixture
def lock(tmp_path: Path, up: Upstreams, cache_dir: Path) -> Path:
    path = tmp_path / "elsewhere" / "repos.lock"
    path.parent.mkdir()
    write_lock(path, up, up.l1)
    return path


def test_locate_notes_says_why_that_file(tmp_path: Path) -> None:
    lock = tmp_path / "repos.lock"
    missing = locate_notes(lock)
    assert missing.path == tmp_path / "reports" / "annotations.toml" and not missing.exists
    assert missing.describe(0) == (f"notes: no notes file found; looked for {missing.path} (beside the lock file "
                                   f"{lock.resolve()}); pass --annotations FILE to read another (the checkout "
                                   "ships reports/annotations.toml)")
    given = tmp_path / "n.toml"
    given.write_text("", encoding="utf-8")
    found = locate_notes(lock, given)
    assert found.exists and found.describe(2) == f"notes: 2 read from {given} (from --annotations)"


def test_report_outside_the_checkout_says_where_it_looked(lock: Path, up: Upstreams) -> None:
    out_dir = lock.parent / "out"
    done = report(open_session(lock, environ={}), ReportOptions(out=out_dir, hazards=False))
    looked = lock.parent / "reports" / "annotations.toml"
    assert done.notes_file.path == looked and not done.notes_file.exists and done.notes_read == 0
    assert sorted(p.name for p in done.files) == ["trace.html", "trace.json", "trace.md"]
    md = (out_dir / "trace.md").read_text(encoding="utf-8")
    html = (out_dir / "trace.html").read_text(encoding="utf-8")
    assert f"looked for {looked}" in md and f"looked for {looked}" in html
    data = json.loads((out_dir / "trace.json").read_text(encoding="utf-8"))
    assert data["notes_file"]["found"] is False and data["notes_file"]["path"] == str(looked)


def test_report_command_says_where_it_looked(lock: Path, up: Upstreams, capsys) -> None:
    assert main(["--lock", str(lock), "report", "--out", str(lock.parent / "out")]) == 0
    looked = lock.parent / "reports" / "annotations.toml"
    assert f"notes: no notes file found; looked for {looked}" in capsys.readouterr().out


def test_report_and_annotate_name_the_file_they_read(lock: Path, up: Upstreams, capsys) -> None:
    notes = lock.parent / "my-notes.toml"
    assert main(["--lock", str(lock), "annotate", "parseUsage", "counts characters", "--annotations",
                 str(notes)]) == 0
    capsys.readouterr()
    assert main(["--lock", str(lock), "annotate", "--annotations", str(notes)]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith(f"notes: 1 read from {notes} (from --annotations)")
    assert main(["--lock", str(lock), "report", "--annotations", str(notes), "--out", str(lock.parent / "o")]) == 0
    assert f"notes: 1 read from {notes}" in capsys.readouterr().out
    assert main(["--lock", str(lock), "annotate"]) == 0
    assert "no notes file found; looked for" in capsys.readouterr().out
