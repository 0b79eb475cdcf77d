"""The library session: where sources come from and where warnings go, without a command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import api
from analyzer.errors import AnalyzerError

LOCK = '[repos.dsh]\nurl = "https://example.invalid/dsh"\ncommit = "{c}"\n'.format(c="a" * 40)


@pytest.fixture
def lock(tmp_path: Path) -> Path:
    path = tmp_path / "repos.lock"
    path.write_text(LOCK)
    return path


def test_given_sources_beat_the_environment_and_names_match_loosely(lock: Path, tmp_path: Path) -> None:
    env = {"ANALYZER_SOURCE_DSH": "/from/env", "ANALYZER_SOURCE_PI_MONO": "/pi/env", "OTHER": "x"}
    session = api.open_session(lock, cache_dir=tmp_path / "c", environ=env, sources={"DSH": "/given"})
    assert session.source_for("dsh", "default") == "/given"
    assert session.source_for("pi-mono", "default") == "/pi/env"
    assert session.source_for("nope", "default") == "default"
    assert session.with_sources({"nope": "/more"}).source_for("nope", "default") == "/more"
    assert session.source_for("nope", "default") == "default"  # the original is unchanged
    assert session.cache_dir == tmp_path / "c" and session.lock.path == lock


def test_warnings_and_notices_go_to_the_callbacks(lock: Path, tmp_path: Path) -> None:
    heard: list[str] = []
    session = api.open_session(lock, cache_dir=tmp_path, environ={}, warn=heard.append,
                               notify=lambda m: heard.append("notice: " + m))
    session.warn("cache file damaged")
    session.notify("waiting")
    assert heard == ["cache file damaged", "notice: waiting"]


def test_bad_pins_are_one_line_errors_before_any_work(lock: Path, tmp_path: Path) -> None:
    session = api.open_session(lock, cache_dir=tmp_path / "never", environ={})
    with pytest.raises(AnalyzerError, match="expected NAME=SHA"):
        api.open_analysis(session, at=["nosuch=" + "b" * 40])
    with pytest.raises(AnalyzerError, match="full 40-hex sha"):
        api.open_analysis(session, at=["dsh=abc"])
    with pytest.raises(AnalyzerError, match="trace needs FROM and TO"):
        api.trace(session)
    assert not (tmp_path / "never").exists()
