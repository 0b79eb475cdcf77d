"""dsh built from its rc.2 snapshot, headless, against the real local engine through the recording proxy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from appfixtures import dsh_app  # noqa: F401 (fixture)

from analyzer.observe.appdriver import AppRunner
from analyzer.observe.experiment import parse_experiment
from analyzer.observe.jsonl import log_path
from analyzer.observe.runner import APP_ROW_KEY
from analyzer.requests.usage import read_usage

pytestmark = [pytest.mark.engine, pytest.mark.upstream]


def _run(app: Any, upstream: str, tmp_path: Path, vary: dict[str, Any]) -> Any:
    data = {"name": "t", "question": "q", "app": {"profile": "dsh", "turns": ["Say hello."]}, "vary": vary}
    exp = parse_experiment(data, tmp_path / "t.toml")
    runner = AppRunner(app, upstream, engine_url=upstream.removesuffix("/v1"), say=lambda _line: None)
    return runner.run(exp, log_path(tmp_path / "obs", exp.name))


def _main(rows: list[dict[str, Any]], series: str) -> dict[str, Any]:
    """The series' largest request: dsh's main agent call (smaller side calls, e.g. a title, may come first)."""
    mine = [r for r in rows if r["series"] == series and r["outcome"] == "ok"]
    return max(mine, key=lambda r: read_usage(r["usage"], r.get("timings")).prompt or 0)


def test_the_build_is_cached_by_commit(dsh_app) -> None:  # noqa: F811
    assert dsh_app.entry.is_file() and dsh_app.version == "0.1.1-rc.2"
    info = json.loads((dsh_app.root / ".analyzer-build.json").read_text())
    assert info["commit"] == dsh_app.commit and info["tool"] == "pnpm@11.7.0"
    assert not [p for p in dsh_app.root.parent.iterdir() if p.name.startswith(".build-")]


def test_a_fresh_session_in_the_same_directory_reuses_the_main_prompt(dsh_app, local_engine, tmp_path: Path) -> None:  # noqa: F811
    result = _run(dsh_app, local_engine.base_url, tmp_path, {"factor": "none"})
    assert {r["series"] for r in result.rows} == {"control", "treatment"}
    control, treatment = _main(result.rows, "control"), _main(result.rows, "treatment")
    assert json.loads(control["request_body"])["messages"][0]["role"] == "system"
    t = read_usage(treatment["usage"], treatment.get("timings"))
    assert treatment["parts"]["system"]["sha256"] == control["parts"]["system"]["sha256"]
    assert t.prompt and t.cached is not None and t.cached > t.prompt // 2
    reported = [r for r in result.rows if APP_ROW_KEY in r]
    for row in reported:  # dsh's own TokenUsage beside the raw usage
        c = read_usage(row["usage"], row.get("timings"))
        assert row[APP_ROW_KEY]["prompt"] == c.prompt


def test_another_directory_changes_the_system_prompt(dsh_app, local_engine, tmp_path: Path) -> None:  # noqa: F811
    result = _run(dsh_app, local_engine.base_url, tmp_path, {"factor": "cwd", "values": ["work", "elsewhere/p"]})
    control, treatment = _main(result.rows, "control"), _main(result.rows, "treatment")
    assert treatment["parts"]["system"]["sha256"] != control["parts"]["system"]["sha256"]
    assert "elsewhere/p" in treatment["request_body"]
