"""`analyze prefix` on requests really sent through the proxy to the local engine (llama-server, one slot).

Hand-built pairs change one thing each — the system prompt, the tool order, an earlier message, one more
turn — and the report must name that part, the first differing token as the server tokenizes it, and a
predicted cached count equal to the one the engine reported (one slot, requests in sequence).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from analyzer.cli import main
from analyzer.observe.jsonl import read_rows
from analyzer.prefix import analyse, report_lines
from analyzer.prefix.tokens import LlamaServerRenderer
from analyzer.proxy import start_proxy

pytestmark = pytest.mark.engine

TOOLS = [{"type": "function", "function": {"name": name, "description": f"{name} for the harbour clerk",
                                           "parameters": {"type": "object", "properties": {}}}}
         for name in ("tide_table", "berth_list", "crane_status")]


def _system(marker: str, cwd: str = "/srv/harbour") -> str:
    # a marker unique to the test up front: no earlier prompt in the shared engine can share this prefix
    return (f"Session {marker}. You are the harbour clerk.\n" + "Berths close at dusk. " * 30 +
            f"\nCurrent working directory: {cwd}\n")


def _body(system: str, tools: list[dict[str, Any]], messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "local", "stream": True, "stream_options": {"include_usage": True}, "max_tokens": 4,
            "temperature": 0, "messages": [{"role": "system", "content": system}, *messages], "tools": tools}


def _send(local_engine: Any, tmp_path: Path, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    with start_proxy(local_engine.base_url, tmp_path) as proxy:
        for b in bodies:
            with httpx.stream("POST", proxy.base_url + "/chat/completions", json=b, timeout=120) as r:
                assert r.status_code == 200
                r.read()
    rows = read_rows(proxy.log_path)
    assert [r["outcome"] for r in rows] == ["ok"] * len(bodies)
    return rows


def _engine_settings(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The slot count the engine was started with, when the rows do not record it (read from the command line
    `analyze engine` builds, not assumed)."""
    from analyzer.engine.process import server_command

    server = rows[0].get("server") or {}
    recorded = {**server, **(server.get("settings") or {})}
    if any(recorded.get(k) is not None for k in ("slots", "parallel", "n_parallel", "total_slots")):
        return {}
    cmd = server_command(Path("llama-server"), Path("model.gguf"), 1, threads=1)
    return {"slots": int(cmd[cmd.index("--parallel") + 1])} if "--parallel" in cmd else {}


def _second(local_engine: Any, tmp_path: Path, first: dict[str, Any], second: dict[str, Any]) -> Any:
    rows = _send(local_engine, tmp_path, [first, second])
    report = analyse(rows, engine_url=local_engine.base_url, settings=_engine_settings(rows))
    assert report.exact and report.rule == "llama.cpp"
    r = report.requests[1]
    # the server tokenized what it computed: our count is its count
    assert r.prompt_tokens == rows[1]["usage"]["prompt_tokens"]
    assert r.prediction is not None and r.reported == r.prediction.cached, report_lines(report)
    return r


def test_a_system_change_is_named_by_part_offset_and_token(local_engine, tmp_path: Path) -> None:
    m = uuid.uuid4().hex[:8]
    user = [{"role": "user", "content": "Which berth is free?"}]
    r = _second(local_engine, tmp_path, _body(_system(m), TOOLS, user),
                _body(_system(m, "/srv/other-dir"), TOOLS, user))
    s = r.structure
    assert (s.kind, s.part, s.path) == ("changed", "system", "messages[0]")
    assert s.offset == _system(m).index("harbour\n") and s.new.startswith("other-dir")
    assert r.token_index is not None and 0 < r.token_index < r.prompt_tokens
    assert "other" in "".join(r.token_context["new"]) and "harbour" in "".join(r.token_context["old"])
    assert r.lost == r.prompt_tokens - r.token_index


def test_tool_order_diverges_after_the_system_prompt(local_engine, tmp_path: Path) -> None:
    m = uuid.uuid4().hex[:8]
    user = [{"role": "user", "content": "Tide at noon?"}]
    r = _second(local_engine, tmp_path, _body(_system(m), TOOLS, user), _body(_system(m), TOOLS[::-1], user))
    s = r.structure
    assert (s.part, s.path, s.old, s.new) == ("tools", "tools[0].function.name", "tide_table", "crane_status")
    renderer = LlamaServerRenderer(local_engine.base_url)
    system_tokens = len(renderer.render(_body(_system(m), [], [])).tokens)
    renderer.close()
    assert r.token_index is not None and r.token_index >= system_tokens - 2  # the system prompt stays shared
    assert r.prompt_offset is not None and r.prompt_offset > len(_system(m))


def test_a_rewritten_earlier_message_is_named_with_its_role(local_engine, tmp_path: Path) -> None:
    m = uuid.uuid4().hex[:8]
    history = [{"role": "user", "content": "List the berths."}, {"role": "assistant", "content": "One, two, four."},
               {"role": "user", "content": "Is four free?"}]
    rewritten = [{"role": "user", "content": "Summary: the clerk listed berths."}, *history[2:]]
    r = _second(local_engine, tmp_path, _body(_system(m), TOOLS, history), _body(_system(m), TOOLS, rewritten))
    s = r.structure
    assert (s.part, s.path, s.role, s.offset) == ("messages", "messages[1]", "user", 0)
    assert "Summary" in "".join(r.token_context["new"]) or "Sum" in "".join(r.token_context["new"])


def test_an_appended_turn_keeps_the_whole_previous_prompt(local_engine, tmp_path: Path) -> None:
    m = uuid.uuid4().hex[:8]
    turn1 = [{"role": "user", "content": "Crane three status?"}]
    turn2 = [*turn1, {"role": "assistant", "content": "Idle since noon."}, {"role": "user", "content": "And two?"}]
    r = _second(local_engine, tmp_path, _body(_system(m), TOOLS, turn1), _body(_system(m), TOOLS, turn2))
    assert (r.structure.kind, r.structure.path) == ("appended", "messages[2]")
    assert r.reported is not None and r.reported >= r.prompt_tokens - r.lost - 2  # nearly all of request 1


def test_prefix_cli_on_a_proxy_log_prints_the_sentence_and_json(local_engine, tmp_path: Path, capsys) -> None:
    m = uuid.uuid4().hex[:8]
    user = [{"role": "user", "content": "Which berth is free?"}]
    _send(local_engine, tmp_path, [_body(_system(m), TOOLS, user), _body(_system(m, "/srv/elsewhere"), TOOLS, user)])
    (log,) = tmp_path.glob("*.jsonl")
    assert main(["prefix", str(log), "--engine-url", local_engine.base_url, "--no-source"]) == 0
    out = capsys.readouterr().out
    assert "request 2 lost " in out and "tokens at messages[0] char " in out
    assert "the server's own chat template and tokenizer" in out
    assert main(["--json", "prefix", str(log), "--engine-url", local_engine.base_url, "--no-source"]) == 0
    data = json.loads(capsys.readouterr().out)
    second = data["requests"][1]
    assert second["structure"]["part"] == "system" and second["difference"] == 0


def test_two_interleaved_conversations_are_predicted_within_tolerance(local_engine, tmp_path: Path) -> None:
    """A main conversation and a side call with its own system prompt, interleaved, as an agent sends them: the
    cache model over the whole log predicts what the server reports, request by request."""
    m = uuid.uuid4().hex[:8]
    side = (f"Session {m}-side. Write a short title for the request below. " + "Plain words only. " * 12)
    turns = [{"role": "user", "content": "Which berth is free?"}]
    bodies = [_body(_system(m), TOOLS, turns),
              {**_body(side, [], [{"role": "user", "content": "Which berth is free?"}])}]
    turns2 = [*turns, {"role": "assistant", "content": "Berth four."}, {"role": "user", "content": "And crane two?"}]
    bodies += [_body(_system(m), TOOLS, turns2), _body(side, [], [{"role": "user", "content": "And crane two?"}])]
    turns3 = [*turns2, {"role": "assistant", "content": "Idle."}, {"role": "user", "content": "Tide at noon?"}]
    bodies.append(_body(_system(m), TOOLS, turns3))
    rows = _send(local_engine, tmp_path, bodies)
    report = analyse(rows, engine_url=local_engine.base_url, settings=_engine_settings(rows))
    assert report.exact and [r.conversation for r in report.requests] == [1, 2, 1, 2, 1], report_lines(report)
    assert [r.baseline_row for r in report.requests][2:] == [1, 2, 3]
    for r in report.requests:
        assert r.reported is not None and r.predicted is not None
        assert abs(r.reported - r.predicted) <= max(8, 0.02 * r.reported), report_lines(report)
    # the main conversation's later turns reuse its earlier prompt although a side call came in between
    assert report.requests[2].reported is not None and report.requests[2].reported > report.requests[1].prompt_tokens


def _anthropic(system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> dict:
    body: dict[str, Any] = {"model": "local", "max_tokens": 4, "stream": True, "messages": messages,
                            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]}
    if tools:
        body["tools"] = tools
    return body


def _responses(system: str, items: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> dict:
    body: dict[str, Any] = {"model": "local", "max_output_tokens": 16, "stream": True, "instructions": system,
                            "input": items}
    if tools:
        body["tools"] = [{"type": "function", "name": t["name"], "description": t["description"],
                          "parameters": t["input_schema"]} for t in tools]
    return body


def test_anthropic_and_responses_logs_render_through_the_engine_and_are_predicted(local_engine,
                                                                                   tmp_path: Path) -> None:
    """Both other shapes, a main conversation and a side call interleaved, and a request the server rejects:
    tokens from the engine's own conversion and template, predictions within max(8 tokens, 2%)."""
    m = uuid.uuid4().hex[:8]
    side = f"Session {m}-side. Write a short title. " + "Plain words only. " * 12
    tools = [{"name": n, "description": f"{n} for the clerk", "input_schema": {"type": "object", "properties": {}}}
             for n in ("tide_table", "berth_list")]
    ask = [{"role": "user", "content": "Which berth is free?"}]
    more = [*ask, {"role": "assistant", "content": [{"type": "text", "text": "Berth four."}]},
            {"role": "user", "content": [{"type": "text", "text": "And crane two?",
                                          "cache_control": {"type": "ephemeral"}}]}]
    reply = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Berth four."}]}
    sends = [("/v1/messages", _anthropic(_system(m), ask, tools)), ("/v1/messages", _anthropic(side, ask)),
             ("/v1/responses", {"model": "local", "input": [{"role": "assistant", "content": "x"}]}),   # rejected
             ("/v1/messages", _anthropic(_system(m), more, tools)),
             ("/v1/responses", _responses(_system(m), [*ask, reply, {"role": "user", "content": "And crane two?"}],
                                          tools)),
             ("/v1/responses", _responses(side, ask))]
    with start_proxy(local_engine.base_url, tmp_path) as proxy:
        root = proxy.base_url.removesuffix("/v1")
        for path, body in sends:
            with httpx.stream("POST", root + path, json=body, timeout=300) as r:
                r.read()
    rows = read_rows(proxy.log_path)
    assert [r["status"] for r in rows] == [200, 200, 400, 200, 200, 200]
    report = analyse(rows, engine_url=local_engine.base_url, settings=_engine_settings(rows))
    assert report.exact and not report.render_errors, report_lines(report)
    assert [r.row for r in report.requests] == [1, 2, 4, 5, 6]
    assert len(report.skipped) == 1 and report.skipped[0].startswith("row 3: HTTP 400")
    assert [r.shape for r in report.requests] == ["anthropic", "anthropic", "anthropic", "responses", "responses"]
    assert [r.conversation for r in report.requests] == [1, 2, 1, 1, 2]
    for r in report.requests:
        assert r.prompt_tokens == r.usage_prompt_tokens, report_lines(report)
        assert r.reported is not None and r.predicted is not None
        assert abs(r.reported - r.predicted) <= max(8, 0.02 * r.reported), report_lines(report)
    # the same side call sent as Responses after Anthropic: the request model makes them one request
    last = report.requests[4]
    assert last.baseline_row == 2 and last.structure is not None and last.structure.kind == "identical"


@pytest.mark.parametrize("options", [{"parallel": 2, "cache_ram_mib": 0}, {"parallel": 2, "kv_unified": True}],
                         ids=["two-slots-no-prompt-cache", "two-slots-unified"])
def test_a_two_slot_server_is_modelled_from_the_settings_its_rows_record(tmp_path: Path, options) -> None:
    """The engine started with --parallel 2 (its own server, these options): the rows carry the settings, the
    cache model keeps one conversation per slot (or parks idle slots in the prompt cache), and predicts what the
    server reports."""
    from enginefixtures import require_engine

    from analyzer.engine import start_engine
    from analyzer.engine.options import EngineOptions

    handle = start_engine(require_engine(), options=EngineOptions(**options))
    try:
        m = uuid.uuid4().hex[:8]
        # the side call shares no leading text with the main one (a shared "Session …" start would make the
        # server pick the main call's slot by similarity)
        side = f"Write a short title for the request below (session {m}). " + "Plain words only. " * 12
        ask = [{"role": "user", "content": "Which berth is free?"}]
        more = [*ask, {"role": "assistant", "content": "Berth four."}, {"role": "user", "content": "And two?"}]
        bodies = [_body(_system(m), TOOLS, ask), _body(side, [], ask), _body(_system(m), TOOLS, more),
                  _body(side, [], [{"role": "user", "content": "And two?"}])]
        rows = _send(handle, tmp_path, bodies)
        settings = rows[0]["server"].get("settings") or {}
        assert settings.get("slots") == 2
        report = analyse(rows, engine_url=handle.base_url)
        assert report.settings is not None and report.settings.startswith("2 slot(s)")
        for r in report.requests:
            assert r.reported is not None and r.predicted is not None
            assert abs(r.reported - r.predicted) <= max(8, 0.02 * r.reported), report_lines(report)
        assert report.requests[2].predicted == report.requests[0].prompt_tokens   # the main call kept its state
    finally:
        handle.stop()


def test_a_side_call_that_starts_like_the_main_call_takes_its_slot_by_similarity(tmp_path: Path) -> None:
    """Two slots, no prompt cache: a side call whose prompt starts with the main call's first tokens is more than
    --slot-prompt-similarity alike, so the server gives it the main call's slot and the main call's next turn
    starts over — the model says so, and names the entry that was dropped."""
    from enginefixtures import require_engine

    from analyzer.engine import start_engine
    from analyzer.engine.options import EngineOptions

    handle = start_engine(require_engine(), options=EngineOptions(parallel=2, cache_ram_mib=0))
    try:
        m = uuid.uuid4().hex[:8]
        side = f"Session {m}-side. Write a short title. " + "Plain words only. " * 6
        ask = [{"role": "user", "content": "Which berth is free?"}]
        more = [*ask, {"role": "assistant", "content": "Berth four."}, {"role": "user", "content": "And two?"}]
        rows = _send(handle, tmp_path, [_body(_system(m), TOOLS, ask), _body(side, [], ask),
                                        _body(_system(m), TOOLS, more)])
        report = analyse(rows, engine_url=handle.base_url)
        first, title, main = report.requests
        assert title.match is not None and title.match.slot == first.match.slot   # chosen by similarity
        assert main.reported is not None and main.predicted is not None
        assert abs(main.reported - main.predicted) <= max(8, 0.02 * main.reported), report_lines(report)
        assert main.predicted < first.prompt_tokens // 2
        assert main.match is not None and [x.key for x in main.match.lost] == [1], report_lines(report)
    finally:
        handle.stop()


def test_concurrent_agents_on_two_slots_without_prompt_cache_are_predicted(tmp_path: Path) -> None:
    """Two agents send their first request at once to a two-slot server without a prompt cache, a third agent
    then takes the first agent's slot, and the three second turns follow one after another; the log lists the
    concurrent pair as it finished. The first turns name their slots (`id_slot` 0, 1, 0): two requests that
    reach the server in the same instant take free slots in an order no log's clock shows, and a request
    waiting for a slot this tiny engine frees within milliseconds cannot be ordered by a clock either. The
    model orders the pair by arrival, follows LRU for the second turns, and predicts what each reported."""
    import threading

    from enginefixtures import require_engine

    from analyzer.engine import start_engine
    from analyzer.engine.options import EngineOptions

    handle = start_engine(require_engine(), options=EngineOptions(parallel=2, cache_ram_mib=0))
    try:
        m = uuid.uuid4().hex[:6]
        systems = [f"Agent {k} of run {m}. " + f"Rule {k}: keep answers short. " * 40
                   for k in ("alpha", "beta", "gamma")]
        ask = [{"role": "user", "content": "Start."}]
        more = [*ask, {"role": "assistant", "content": "Ok."}, {"role": "user", "content": "Go on."}]
        with start_proxy(handle.base_url, tmp_path) as proxy:
            def send(body: dict[str, Any]) -> None:
                with httpx.stream("POST", proxy.base_url + "/chat/completions", json=body, timeout=300) as r:
                    r.read()

            threads = [threading.Thread(target=send, args=({**_body(s, [], ask), "id_slot": slot},))
                       for s, slot in zip(systems[:2], (0, 1), strict=True)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            send({**_body(systems[2], [], ask), "id_slot": 0})
            for s in systems:
                send(_body(s, [], more))
        rows = read_rows(proxy.log_path)
        report = analyse(rows, engine_url=handle.base_url)
        for r in report.requests:
            assert r.reported is not None and r.predicted is not None
            assert abs(r.reported - r.predicted) <= max(8, 0.02 * r.reported), report_lines(report)
        # three agents, two slots: at least one second turn finds its slot given to another agent; it is
        # compared with its own first turn, and the model names that state as dropped for another row
        later = [r for r in report.requests if r.row > 3]
        lost = [r for r in later if r.predicted is not None and r.predicted < 16]
        assert lost, report_lines(report)
        for r in lost:
            assert r.structure is not None and r.structure.kind == "appended", report_lines(report)
            assert r.match is not None and [x.key for x in r.match.lost] == [r.baseline_row], report_lines(report)
    finally:
        handle.stop()
