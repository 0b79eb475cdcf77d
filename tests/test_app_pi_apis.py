"""Pi over each of the wire APIs its models.json offers, against the real local engine through the proxy: the
chosen API reaches its own endpoint, and Pi is told the server's context per slot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from appfixtures import pi_app  # noqa: F401 (fixture)

from analyzer.engine.settings import server_settings
from analyzer.observe.appdriver import AppRunner
from analyzer.observe.experiment import parse_experiment
from analyzer.observe.jsonl import log_path, read_rows

pytestmark = pytest.mark.engine

ENDPOINT = {"openai-completions": "/v1/chat/completions", "openai-responses": "/v1/responses",
            "anthropic-messages": "/v1/messages"}


@pytest.mark.parametrize("api", sorted(ENDPOINT))
def test_pi_speaks_the_chosen_api_to_its_endpoint(pi_app: Any, local_engine: Any, tmp_path: Path,  # noqa: F811
                                                  api: str) -> None:
    data = {"name": f"pi-{api}", "question": "q", "app": {"profile": "pi", "turns": ["Say hello.", "Again."],
                                                           "api": api}, "vary": {"factor": "none"}}
    exp = parse_experiment(data, tmp_path / "e.toml")
    assert exp.app.api == api
    result = AppRunner(pi_app, local_engine.base_url, say=lambda _line: None).run(exp, log_path(tmp_path / "obs",
                                                                                            exp.name))
    assert result.app is not None
    assert [t.result.exit_code for t in result.app.turns] == [0, 0, 0, 0]
    # the proxy's own log: every exchange, whether or not the row model reads this shape yet
    calls = [r for r in read_rows(result.app.proxy_log) if r.get("method") == "POST"]
    assert len(calls) >= 4
    assert {r["client_path"] for r in calls} == {ENDPOINT[api]}
    assert all(r["status"] == 200 for r in calls)
    window = server_settings(local_engine.base_url)["ctx_per_slot"]  # type: ignore[index]
    models = json.loads((result.app.run_dir / "control" / "home" / "models.json").read_text())
    provider = models["providers"]["analyzer"]
    assert provider["api"] == api and provider["models"][0]["contextWindow"] == window
    for turn in result.app.turns:  # what Pi itself reported: a complete answer of the engine's 3 tokens
        assert [e["output"] for e in turn.result.reported] == [3], turn


def test_app_run_takes_the_api_and_the_servers_window(pi_app: Any, local_engine: Any, tmp_path: Path,  # noqa: F811
                                                      capsys: pytest.CaptureFixture) -> None:
    from appfixtures import PI_VERSION

    from analyzer.cli import main

    out = tmp_path / "run"
    code = main(["app", "run", "pi", "Say hello.", "--version", PI_VERSION, "--api", "anthropic-messages",
                 "--base-url", local_engine.base_url, "--out", str(out), "--max-tokens", "32000"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "output 3" in printed, "Pi asked for 32,000 output tokens and got the engine's 3"
    provider = json.loads((out / "home" / "models.json").read_text())["providers"]["analyzer"]
    assert provider["baseUrl"] == local_engine.base_url.removesuffix("/v1")
    assert provider["models"][0]["contextWindow"] == server_settings(local_engine.base_url)["ctx_per_slot"]  # type: ignore[index]
    assert provider["models"][0]["maxTokens"] == 32000
