"""Experiment files: shipped examples load, one factor only, bad input is one line with exit 3 and nothing sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from observe_fixtures import experiment, write
from observe_server import fake_engine

from analyzer.cli import main
from analyzer.errors import AnalyzerError
from analyzer.observe.experiment import (
    REQUEST_FACTORS,
    load_experiment,
    parse_experiment,
    read_experiment,
    shipped_names,
)
from analyzer.observe.plan import plan


def test_shipped_examples_load_and_cover_the_required_factors() -> None:
    names = [n for n in shipped_names() if "app" not in read_experiment(n)[0]]  # app ones: tests/test_app_*.py
    factors = {load_experiment(n).vary.factor for n in names}
    assert len(names) >= 4
    assert {"none", "system-prefix", "system-suffix", "tools-order"} <= factors
    for name in names:
        exp = load_experiment(name)
        assert exp.request.system and len(exp.request.system) > 4000  # long enough (~1-2k tokens) for clear effects
        assert plan(exp)


def test_the_issue_shape_loads_from_a_path(tmp_path: Path) -> None:
    text = '''
name = "system-prefix-timestamp"
question = "Does a timestamp at the start of the system prompt stop prefix reuse?"
[endpoint]
base_url = "http://127.0.0.1:8080/v1"
model = "local"
api_key_env = "DEEPSEEK_API_KEY"
[run]
requests = 3
interval_s = 1.0
max_tokens = 16
[base]
system = "You are helpful."
messages = [ { role = "user", content = "hi" } ]
[vary]
factor = "system-prefix"
values = ["Current time 10:00:01.", "Current time 10:00:02.", "Current time 10:00:03."]
'''
    p = tmp_path / "e.toml"
    p.write_text(text)
    exp = load_experiment(str(p))
    assert exp.endpoint.url == "http://127.0.0.1:8080/v1/chat/completions"
    assert exp.endpoint.api_key_env == "DEEPSEEK_API_KEY" and exp.run.stream is True
    assert exp.vary.values[2] == "Current time 10:00:03."


def test_system_and_tools_files_are_read_beside_the_experiment(tmp_path: Path) -> None:
    (tmp_path / "sys.txt").write_text("Long system prompt.")
    (tmp_path / "tools.json").write_text('[{"type": "function", "function": {"name": "a"}}, '
                                         '{"type": "function", "function": {"name": "b"}}]')
    data = experiment("tools-order", vary={"values": [["a", "b"], ["b", "a"]]})
    data["request"] = {"system_file": "sys.txt", "tools_file": "tools.json", "messages": data["request"]["messages"]}
    exp = load_experiment(str(write(tmp_path / "e.toml", data)))
    assert exp.request.system == "Long system prompt."
    assert [t["function"]["name"] for t in exp.request.tools] == ["a", "b"]


@pytest.mark.parametrize("change, both", [
    ({"vary": {"factor": ["system-prefix", "tools-order"]}}, ["'system-prefix'", "'tools-order'"]),
    ({"vary": {"model": "other-model"}}, ["'system-prefix'", "the model"]),
    ({"treatment": {"base_url": "http://127.0.0.1:1/v1"}}, ["'system-prefix'", "the endpoint"]),
    ({"series": {"treatment": {"model": "other"}}}, ["'system-prefix'", "the model"]),
    ({"vary": {"tools": []}}, ["'system-prefix'", "the tools"]),
])
def test_a_file_that_changes_two_things_is_refused_naming_both(tmp_path: Path, change: dict, both: list[str]) -> None:
    data = experiment("system-prefix")
    for key, value in change.items():
        data.setdefault(key, {}).update(value)
    with pytest.raises(AnalyzerError) as info:
        parse_experiment(data, tmp_path / "two.toml")
    message = str(info.value)
    assert "changes two things" in message and "\n" not in message
    for name in both:
        assert name in message


def test_tools_and_system_together_are_refused(tmp_path: Path) -> None:
    data = experiment("tools-order")
    data["vary"]["system"] = "another system prompt"
    with pytest.raises(AnalyzerError, match=r"'tools-order' and the system prompt"):
        parse_experiment(data, tmp_path / "two.toml")


@pytest.mark.parametrize("mutate, fragment", [
    (lambda d: d["vary"].update(factor="temperature"), "unknown factor 'temperature'"),
    (lambda d: d.pop("question"), "question is missing"),
    (lambda d: d["endpoint"].pop("model"), "endpoint.model is missing"),
    (lambda d: d["vary"].pop("values"), "needs vary.values"),
    (lambda d: d["run"].update(requests=0), "run.requests must be between 1 and 1000"),
    (lambda d: d["run"].update(max_tokens="many"), "run.max_tokens must be a integer"),
    (lambda d: d["endpoint"].update(api_key_env="sk-live-1234"), "NAME of an environment variable"),
    (lambda d: d["endpoint"].update(base_url="127.0.0.1:8080"), "must start with http://"),
    (lambda d: d.update(colour="blue"), "unknown key colour"),
])
def test_bad_files_fail_with_one_line(tmp_path: Path, mutate, fragment: str) -> None:
    data = experiment("system-prefix")
    mutate(data)
    with pytest.raises(AnalyzerError) as info:
        parse_experiment(data, tmp_path / "bad.toml")
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_every_factor_name_is_accepted(tmp_path: Path) -> None:
    for factor in REQUEST_FACTORS:
        exp = parse_experiment(experiment(factor), tmp_path / f"{factor}.toml")
        assert exp.vary.factor == factor


@pytest.mark.parametrize("content", [
    "name = \n",                                                                           # bad TOML
    None,                                                                                  # unknown factor
    "DOUBLE",                                                                              # two factors
])
def test_cli_bad_input_exits_3_with_one_error_line_and_sends_nothing(tmp_path: Path, capsys, content) -> None:
    with fake_engine() as engine:
        data = experiment("system-prefix", endpoint={"base_url": engine.base_url})
        p = tmp_path / "e.toml"
        if content is None:
            data["vary"]["factor"] = "colour"
            write(p, data)
        elif content == "DOUBLE":
            data["vary"]["factor"] = ["system-prefix", "tools-order"]
            write(p, data)
        else:
            p.write_text(content)
        out_dir = tmp_path / "obs"
        code = main(["observe", str(p), "--out", str(out_dir)])
        err = capsys.readouterr().err
        assert code == 3
        assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
        assert engine.received == [] and not out_dir.exists()


def test_missing_key_variable_is_an_error_before_anything_is_sent(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OBSERVE_TEST_KEY", raising=False)
    with fake_engine() as engine:
        data = experiment("none", endpoint={"base_url": engine.base_url, "api_key_env": "OBSERVE_TEST_KEY"})
        code = main(["observe", str(write(tmp_path / "e.toml", data)), "--out", str(tmp_path / "obs")])
        assert code == 3 and "$OBSERVE_TEST_KEY, which is not set" in capsys.readouterr().err
        assert engine.received == []


def test_list_and_dry_run(tmp_path: Path, capsys) -> None:
    assert main(["observe", "--list"]) == 0
    listed = capsys.readouterr().out.split()
    assert "system-prefix-timestamp" in listed and "natural-hits" in listed
    assert main(["--json", "observe", "tools-order", "--dry-run", "--base-url", "http://127.0.0.1:1/v1"]) == 0
    import json
    payload = json.loads(capsys.readouterr().out)
    assert payload["url"] == "http://127.0.0.1:1/v1/chat/completions" and len(payload["requests"]) == 6


def test_the_old_name_of_the_request_table_still_loads(tmp_path: Path) -> None:
    data = experiment("tools-order")
    data["base"] = data.pop("request")
    exp = parse_experiment(data, tmp_path / "old.toml")
    assert exp.mode == "request" and [t["function"]["name"] for t in exp.request.tools] == ["alpha", "beta", "gamma"]
    data["request"] = dict(data["base"])
    with pytest.raises(AnalyzerError, match=r"\[request\] and \[base\] both given"):
        parse_experiment(data, tmp_path / "both.toml")


def test_a_request_experiment_refuses_app_keys_and_an_app_experiment_request_keys(tmp_path: Path) -> None:
    data = experiment("system-prefix")
    data["vary"]["link_to"] = "{app_dir}"
    with pytest.raises(AnalyzerError, match="unknown key vary.link_to"):
        parse_experiment(data, tmp_path / "e.toml")
    app = {"name": "x", "question": "q", "app": {"profile": "pi", "turns": ["t"]}, "vary": {"factor": "none"},
           "run": {"requests": 5}}
    with pytest.raises(AnalyzerError, match="unknown key run.requests"):
        parse_experiment(app, tmp_path / "a.toml")


def test_an_app_experiment_without_a_session_is_one_clear_error(tmp_path: Path) -> None:
    from analyzer.api import ObserveOptions, observe

    app = {"name": "x", "question": "q", "app": {"profile": "pi", "turns": ["t"]}, "vary": {"factor": "none"}}
    exp = parse_experiment(app, tmp_path / "a.toml")
    with pytest.raises(AnalyzerError, match="pass a session"):
        observe(exp, ObserveOptions(out_dir=tmp_path / "obs"))
    assert not (tmp_path / "obs").exists()
