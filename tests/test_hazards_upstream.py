"""`analyze hazards` on the real snapshots: dsh rc.2 + Pi v0.82.1 (skips cleanly when they are absent)."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest
from conftest import DSH_RC2, PI_V0_82_1, snapshot

from analyzer.cli import main
from analyzer.hazards.model import validate_hazards_json
from analyzer.index.testcode import is_test_path

pytestmark = pytest.mark.upstream


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    dsh = snapshot("deepseek-ai+deepseek-harness", DSH_RC2)
    pi = snapshot("at-inc+pi", PI_V0_82_1)
    where = tmp_path_factory.mktemp("hazards-upstream")
    lock = where / "repos.lock"
    lock.write_text(f'[repos.dsh]\nurl = "{dsh}"\ncommit = "{DSH_RC2}"\n\n'
                    f'[repos.pi]\nurl = "{pi}"\ncommit = "{PI_V0_82_1}"\naliases = ["@mariozechner/pi-ai"]\n')
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["--lock", str(lock), "--cache-dir", str(where / "cache"), "--json", "hazards", "--all"])
    return code, json.loads(buf.getvalue())


def test_findings_have_traceable_chains(result: tuple[int, dict[str, Any]]) -> None:
    code, data = result
    assert validate_hazards_json(data) == []
    assert code == (1 if data["findings"] else 0)
    for f in data["findings"]:
        if f["category"] != "value":
            continue
        assert f["source"]["repo"] in ("dsh", "pi") and not is_test_path(f["source"]["path"])
        assert (f["steps"][0]["path"], f["steps"][0]["line"]) == (f["source"]["path"], f["source"]["line"])
        assert f["steps"][-1]["line"] == f["sink"]["line"]


def test_pi_package_dir_reaches_the_coding_agent_system_prompt(result: tuple[int, dict[str, Any]]) -> None:
    """Pi's buildSystemPrompt embeds the docs path, which PI_PACKAGE_DIR (or the install path) decides."""
    _, data = result
    hits = [f for f in data["findings"]
            if f["category"] == "value" and f["source"]["text"] == "process.env.PI_PACKAGE_DIR"]
    assert len(hits) == 1
    f = hits[0]
    assert f["kind"] == "environment" and f["sink"]["part"] == "system prompt"
    assert f["sink"]["function"].endswith(":buildSystemPrompt")
    assert any("returned by getReadmePath" in s["why"] for s in f["steps"])
    assert (f["granularity"], f["effect"]) == ("machine", "cross-session")
    # the documentation paths' other sources are branches of the same hazard (one template)
    group = next(h for h in data["hazards"] if f["id"] in h["branches"])
    assert len(group["branches"]) >= 4 and group["template"] is not None


def test_pi_working_directory_line_through_the_session_object(result: tuple[int, dict[str, Any]]) -> None:
    """process.cwd() in createAgentSession → new AgentSession({ cwd }) → this._cwd → buildSystemPrompt's
    `Current working directory:` line: fixed per session, a cross-session hazard."""
    _, data = result
    hits = [f for f in data["findings"] if f["category"] == "value" and f["source"]["text"] == "process.cwd()"
            and f["source"]["path"].endswith("core/sdk.ts")]
    assert len(hits) == 1
    f = hits[0]
    assert (f["granularity"], f["effect"], f["sink"]["part"]) == ("session", "cross-session", "system prompt")
    assert any("AgentSession.constructor (constructor)" in s["why"] for s in f["steps"])
    assert any("read from this._cwd" in s["why"] for s in f["steps"])


def test_dsh_checkout_path_in_an_early_prompt_section(result: tuple[int, dict[str, Any]]) -> None:
    """dsh's web bundle registers the harness checkout path (import.meta.url at module load) as a prompt
    section ordered right after the identity: install-granular, so every install has its own prefix."""
    _, data = result
    hits = [f for f in data["findings"] if f["category"] == "value" and f["source"]["repo"] == "dsh"
            and f["source"]["text"] == "import.meta.url"]
    assert len(hits) == 1
    f = hits[0]
    assert (f["granularity"], f["effect"]) == ("install", "cross-session")
    assert f["sink"]["rule"] == "prompt-section-text" and (f["sink"]["position"] or {}).get("order") == "-99"


def test_every_finding_has_granularity_and_effect_and_losses_are_counted(
        result: tuple[int, dict[str, Any]]) -> None:
    _, data = result
    assert data["findings"] and all(f["effect"] and f["granularity"] and f["effect_rule"] for f in data["findings"])
    cut = data["cut_flows"]
    assert cut["total"] == sum(cut["by_reason"].values()) > 0 and cut["places"]


def test_appended_time_context_is_not_a_prefix_hazard(result: tuple[int, dict[str, Any]]) -> None:
    """dsh's time-context plugin appends a new user message per step: its Date.now() is not reported."""
    _, data = result
    assert not [f for f in data["findings"] if f["category"] == "value"
                and f["source"]["path"].startswith("packages/context/time-context/")]


def test_pi_system_prompt_file_chosen_by_a_machine_probe(result: tuple[int, dict[str, Any]]) -> None:
    """Pi's resource loader returns the project's or the agent directory's prompt file only when it exists
    (early returns under `existsSync`): which text replaces the default prompt is a control finding of the
    machine, citing the test and every return it chooses between."""
    _, data = result
    hits = [f for f in data["findings"] if f["kind"] == "control"
            and f["source"]["function"].endswith(":DefaultResourceLoader.discoverSystemPromptFile")]
    assert len(hits) == 2, hits
    for f in hits:
        assert (f["control"]["rule"], f["granularity"], f["effect"]) == ("machine-probe", "machine", "cross-session")
        assert "existsSync(" in f["control"]["test"]["text"] and len(f["control"]["branches"]) >= 2
        assert f["sink"]["part"] == "system prompt"
    # dsh's one control finding: the catch of a failing file-id upload switches the images to base64
    assert [(f["control"]["rule"], f["source"]["path"], f["sink"]["part"]) for f in data["findings"]
            if f["kind"] == "control" and f["source"]["repo"] == "dsh"] == [
        ("network-fallback", "packages/llm/llm-deepseek/src/adapter.ts", "request body")]


def test_pi_skill_list_order_through_the_resource_loader(result: tuple[int, dict[str, Any]]) -> None:
    """The skills the resource loader's reload fills (a Map in insertion order, fed by directory listings)
    reach the `<available_skills>` block through its getter: a field written outside the constructor and
    handed out through an interface-typed field."""
    _, data = result
    hits = [f for f in data["findings"] if f["category"] == "value" and f["kind"] == "ordering"
            and f["source"]["path"].endswith("core/skills.ts")]
    assert len(hits) == 1
    f = hits[0]
    assert (f["granularity"], f["effect"], f["sink"]["part"]) == ("session", "cross-session", "system prompt")
    whys = [s["why"] for s in f["steps"]]
    assert "stored in this.skills" in whys and "read from this.skills" in whys


def test_no_finding_on_a_message_list_stored_in_a_nested_field(result: tuple[int, dict[str, Any]]) -> None:
    """`agent.state.messages = restored` keeps the restored history under state.messages: the tool list read
    as `agent.state.tools` does not carry it."""
    _, data = result
    assert not [f for f in data["findings"] if f["category"] == "value" and f["sink"]["part"] != "message history"
                and any(s["why"] == "stored in agent.state.messages" for s in f["steps"])]


def test_pi_agent_directory_reaches_the_system_prompt(result: tuple[int, dict[str, Any]]) -> None:
    """The agent directory (`PI_CODING_AGENT_DIR`, else under the home directory) names files whose absolute
    paths reach the prompt: a per-machine value. (One finding per source and part; the chain printed is the
    shortest, at these pins through the loader's resource paths.)"""
    _, data = result
    hits = [f for f in data["findings"] if f["category"] == "value" and f["source"]["path"].endswith("src/config.ts")
            and f["sink"]["part"] == "system prompt"
            and any("returned by getAgentDir" in s["why"] for s in f["steps"])]
    assert {f["source"]["text"] for f in hits} >= {"homedir()"}
    assert all((f["granularity"], f["effect"]) == ("machine", "cross-session") for f in hits)


def test_dsh_sandbox_policy_workspace_in_the_runtime_context(result: tuple[int, dict[str, Any]]) -> None:
    """The sandbox policy's text provider (a closure registered with systemPrompt.context) prints the
    workspace root: per session, in the runtime-context snapshot appended after the history."""
    _, data = result
    hits = [f for f in data["findings"] if f["category"] == "value"
            and f["source"]["path"].startswith("packages/sandbox/sandbox-policy/")]
    assert hits and all((f["sink"]["part"], f["effect"]) == ("runtime context", "tail-append") for f in hits)
    assert all((f["sink"]["position"] or {}).get("name") == "sandbox:policy" for f in hits)


def test_dsh_session_header_cwd_names_its_writers(result: tuple[int, dict[str, Any]]) -> None:
    """The `{{cwd}}` prompt variable reads the session header's cwd; the header is built in the session store's
    `prepare` from what the agent factory is handed: the finding names the headless entry's `process.cwd()`
    and the API proxy's session creation (a workspace's path or the server's default) among its writers."""
    _, data = result
    (f,) = [f for f in data["findings"] if f["source"]["repo"] == "dsh"
            and f["source"]["text"] == "context.agent?.session.header.cwd"]
    writers = {(w["path"], w["text"]) for w in f["writers"]}
    assert ("packages/bundle/headless/src/index.ts", "process.cwd()") in writers
    assert {("packages/host/apiproxy/src/api-proxy.ts", "workspace?.path"),
            ("packages/host/apiproxy/src/api-proxy.ts", "defaults.cwd")} <= writers


def test_dsh_session_id_header_is_cache_routing(result: tuple[int, dict[str, Any]]) -> None:
    """The DeepSeek adapter sends `GenerateOptions.sessionId` (a branded session id) as a session header."""
    _, data = result
    hits = [f for f in data["findings"] if f["source"]["repo"] == "dsh"
            and f["source"]["path"] == "packages/llm/llm-deepseek/src/adapter.ts" and f["sink"]["part"] == "cache key"]
    assert [(f["source"]["text"], f["sink"]["rule"], f["effect"]) for f in hits] == [
        ("options.sessionId", "affinity-headers", "cache-routing")]


def test_dsh_session_reference_local_render_is_no_system_prompt(result: tuple[int, dict[str, Any]]) -> None:
    """session-reference's own `renderPrompt` builds a user message: the system prompt's is the exported one."""
    _, data = result
    assert not [f for f in data["findings"] if f["sink"]["path"] == "packages/context/session-reference/src/index.ts"]


def test_dsh_session_log_appends_are_followed_to_derive_messages(result: tuple[int, dict[str, Any]]) -> None:
    """Values the agent loop appends to the session are replayed by Session.deriveMessages as stored."""
    _, data = result
    frozen = [m for m in data["near_misses"] if m["dismissed_by"] == "session-log-replay"]
    assert frozen and all(m["effect"] == "frozen-in-history" and "Session.deriveMessages" in m["reason"]
                          for m in frozen)
