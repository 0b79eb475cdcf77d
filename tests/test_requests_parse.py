"""The request model's parsers on small hand-built bodies of each shape: rendering order, what is cache control
rather than prompt, what renders the same compares equal, and shape detection."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from analyzer.errors import AnalyzerError
from analyzer.requests import detect_shape, parse_request, request_parts
from analyzer.requests.rules import parse_rules, render_rules

SCHEMA = {"type": "object", "properties": {"p": {"type": "string"}}}
TOOL_CHAT = {"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": SCHEMA}}
TOOL_ANTHROPIC = {"name": "read", "description": "Read a file",
                  "input_schema": {"type": "object", "properties": {"p": {"type": "string"}}}}


def chat_body() -> dict[str, Any]:
    return {"model": "m", "stream": True, "max_tokens": 64, "prompt_cache_key": "conv-7",
            "messages": [{"role": "system", "content": "You are terse."},
                         {"role": "developer", "content": [{"type": "text", "text": "Work in /tmp/a."}]},
                         {"role": "user", "content": "hi"},
                         {"role": "assistant", "content": None, "reasoning_content": "think",
                          "tool_calls": [{"id": "c1", "type": "function",
                                          "function": {"name": "read", "arguments": "{\"p\":\"x\"}"}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "file text"},
                         {"role": "system", "content": "a late system message is a message"}],
            "tools": [copy.deepcopy(TOOL_CHAT)]}


def anthropic_body() -> dict[str, Any]:
    return {"model": "claude-x", "max_tokens": 64, "cache_control": {"type": "ephemeral", "ttl": "1h"},
            "metadata": {"user_id": "u-1"},
            "system": [{"type": "text", "text": "You are terse."},
                       {"type": "text", "text": "Work in /tmp/a.", "cache_control": {"type": "ephemeral"}}],
            "tools": [{**copy.deepcopy(TOOL_ANTHROPIC), "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
            "messages": [{"role": "user", "content": "hi"},
                         {"role": "assistant", "content": [
                             {"type": "thinking", "thinking": "think", "signature": "sig"},
                             {"type": "tool_use", "id": "t1", "name": "read", "input": {"p": "x"}}]},
                         {"role": "user", "content": [
                             {"type": "tool_result", "tool_use_id": "t1", "content": "file text"},
                             {"type": "text", "text": "go on", "cache_control": {"type": "ephemeral"}}]}]}


def responses_body() -> dict[str, Any]:
    return {"model": "gpt-x", "instructions": "You are terse.", "previous_response_id": "resp_1",
            "prompt_cache_key": "conv-7", "prompt_cache_retention": "24h", "max_output_tokens": 64,
            "tools": [{"type": "function", "name": "read", "parameters": {"type": "object"}}],
            "input": [{"role": "developer", "content": "Work in /tmp/a."},
                      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                      {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text",
                                                                                     "text": "think"}]},
                      {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "read",
                       "arguments": "{\"p\":\"x\"}", "status": "completed"},
                      {"type": "function_call_output", "call_id": "c1", "output": "file text"},
                      {"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": "done"}]}]}


def test_chat_segments_follow_the_rules_order_and_leading_system_messages_are_the_system_prompt() -> None:
    req = parse_request(chat_body(), path="/v1/chat/completions")
    assert req is not None and req.shape == "chat" and req.endpoint == "/v1/chat/completions"
    assert [s.kind for s in req.segments] == ["system", "system", "tool", "message", "message", "message",
                                              "message"]
    assert [s.role for s in req.of_kind("system")] == ["system", "developer"]
    assert req.system_text == "You are terse.\nWork in /tmp/a."
    assert req.tool_names == ("read",)
    assistant = req.of_kind("message")[1]
    assert [b.type for b in assistant.blocks] == ["reasoning", "tool_call"]
    assert req.of_kind("message")[2].name == "c1" and req.of_kind("message")[2].text() == "file text"
    assert req.of_kind("message")[3].role == "system"  # not leading: part of the conversation
    assert req.control.prompt_cache_key == "conv-7"
    assert req.params == {"stream": True, "max_tokens": 64}


def test_anthropic_renders_tools_then_system_then_messages_with_breakpoints_on_the_final_indices() -> None:
    req = parse_request(anthropic_body(), path="/v1/messages")
    assert req is not None and req.shape == "anthropic"
    assert [s.kind for s in req.segments] == ["tool", "system", "system", "message", "message", "message"]
    assert req.tool_names == ("read",)
    assert req.system_text == "You are terse.\nWork in /tmp/a."
    bps = [(b.segment, b.block, b.ttl) for b in req.control.breakpoints]
    assert bps == [(0, None, "1h"), (2, 0, None), (5, 1, None)]
    assert req.control.automatic and req.control.automatic_ttl == "1h" and req.control.user == "u-1"
    # a marker is not prompt: no block text carries it
    assert all("cache_control" not in b.text for s in req.segments for b in s.blocks)
    last = req.segments[5]
    assert [b.type for b in last.blocks] == ["tool_result", "text"] and last.blocks[1].text == "go on"


def test_responses_instructions_and_leading_developer_item_are_system_and_items_become_messages() -> None:
    req = parse_request(responses_body(), path="/v1/responses")
    assert req is not None and req.shape == "responses"
    assert [(s.kind, s.path) for s in req.segments] == [
        ("system", "instructions"), ("system", "input[0]"), ("tool", "tools[0]"), ("message", "input[1]"),
        ("message", "input[2]"), ("message", "input[3]"), ("message", "input[4]"), ("message", "input[5]")]
    messages = req.of_kind("message")
    assert messages[0].role == "user" and messages[0].text() == "hi"
    assert messages[1].role == "assistant" and messages[1].blocks[0].type == "reasoning"
    call = messages[2]
    assert call.role == "assistant" and call.name == "c1" and call.blocks[0].type == "function_call"
    assert "fc_1" not in call.text() and "completed" not in call.text()  # ids and status do not render
    assert messages[3].role == "tool" and messages[3].text() == "file text"
    assert messages[4].text() == "done"
    c = req.control
    assert (c.previous_response_id, c.prompt_cache_key, c.prompt_cache_retention) == ("resp_1", "conv-7", "24h")
    assert req.params["max_output_tokens"] == 64
    ref = parse_request({"input": [{"type": "item_reference", "id": "msg_9"}]})
    assert ref is not None and "msg_9" in ref.segments[0].text()  # a reference's id is what it says
    string_input = parse_request({"input": "hello", "instructions": "be brief"})
    assert string_input is not None and [(s.kind, s.role, s.text()) for s in string_input.segments] == [
        ("system", "system", "be brief"), ("message", "user", "hello")]


def test_a_string_and_one_text_block_render_the_same_and_compare_equal() -> None:
    a = anthropic_body()
    b = copy.deepcopy(a)
    a["system"] = "You are terse."
    b["system"] = [{"type": "text", "text": "You are terse."}]
    a["messages"][0]["content"] = "hi"
    b["messages"][0]["content"] = [{"type": "text", "text": "hi"}]
    ra, rb = parse_request(a), parse_request(b)
    assert ra is not None and rb is not None
    assert [s.blocks for s in ra.segments] == [s.blocks for s in rb.segments]
    assert request_parts(ra) == request_parts(rb)
    c1, c2 = chat_body(), chat_body()
    c2["messages"][2]["content"] = [{"type": "text", "text": "hi"}]
    p1, p2 = parse_request(c1), parse_request(c2)
    assert p1 is not None and p2 is not None and request_parts(p1) == request_parts(p2)


def test_moving_a_cache_control_marker_is_not_a_prompt_change_but_a_text_change_is() -> None:
    a, b = anthropic_body(), anthropic_body()
    del b["system"][1]["cache_control"]
    b["messages"][0]["content"] = [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]
    ra, rb = parse_request(a), parse_request(b)
    assert ra is not None and rb is not None
    assert request_parts(ra) == request_parts(rb)
    assert ra.control.breakpoints != rb.control.breakpoints
    c = anthropic_body()
    c["system"][1]["text"] = "Work in /tmp/b."
    rc = parse_request(c)
    assert rc is not None
    pa, pc = request_parts(ra), request_parts(rc)
    assert pa["system"]["sha256"] != pc["system"]["sha256"]
    assert pa["tools"] == pc["tools"] and pa["messages"] == pc["messages"]


def test_key_order_inside_a_json_block_is_prompt_as_the_rules_say() -> None:
    # llama.cpp keeps object keys in the order they were added (common/json.h), so a reordered tool renders
    # differently; the rule is data and the parser follows it
    assert render_rules().of("chat").sort_keys is False
    a, b = chat_body(), chat_body()
    fn = b["tools"][0]["function"]
    b["tools"][0]["function"] = {"parameters": fn["parameters"], "description": fn["description"],
                                 "name": fn["name"]}
    ra, rb = parse_request(a), parse_request(b)
    assert ra is not None and rb is not None
    assert request_parts(ra)["tools"]["sha256"] != request_parts(rb)["tools"]["sha256"]
    assert request_parts(ra)["tools"]["names"] == request_parts(rb)["tools"]["names"] == ["read"]


def test_parts_digest_names_the_part_that_changed_for_every_shape() -> None:
    for body, edit in ((chat_body(), lambda d: d["messages"][2].update(content="bye")),
                       (responses_body(), lambda d: d["input"][1]["content"][0].update(text="bye")),
                       (anthropic_body(), lambda d: d["messages"].__setitem__(0, {"role": "user",
                                                                                 "content": "bye"}))):
        changed = copy.deepcopy(body)
        edit(changed)
        ra, rb = parse_request(body), parse_request(changed)
        assert ra is not None and rb is not None
        pa, pb = request_parts(ra), request_parts(rb)
        assert [p for p in ("system", "tools", "messages") if pa[p] != pb[p]] == ["messages"], ra.shape
        assert pa["system"]["bytes"] == len("You are terse.Work in /tmp/a.")


def test_session_affinity_headers_are_kept_and_credentials_never() -> None:
    headers = {"Authorization": "Bearer sk-secret-123456", "x-api-key": "sk-ant-secret", "api-key": "k",
               "X-Session-Affinity": "s-1", "session_id": "abc", "Content-Type": "application/json"}
    req = parse_request(chat_body(), path="/v1/chat/completions", headers=headers)
    assert req is not None
    assert req.control.affinity == (("x-session-affinity", "s-1"), ("session_id", "abc"))
    assert "secret" not in repr(req)
    with pytest.raises(AnalyzerError, match="credential"):
        parse_rules({"affinity_headers": ["x-api-key"], "never": ["x-api-key"], "shapes": {}})


@pytest.mark.parametrize(("body", "path", "shape"), [
    (chat_body(), "/v1/chat/completions", "chat"),
    (chat_body(), None, "chat"),
    (anthropic_body(), "/v1/messages", "anthropic"),
    (anthropic_body(), None, "anthropic"),
    ({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                                  "content": "x"}]}]}, None, "anthropic"),
    ({"messages": [{"role": "user", "content": "x"}], "tools": [TOOL_ANTHROPIC]}, None, "anthropic"),
    (responses_body(), "/v1/responses", "responses"),
    ({"input": "x"}, None, "responses"),
    ({"input": "x"}, "/v1/embeddings", None),
    ({"messages": "not a list"}, "/v1/chat/completions", None),
    ([1, 2], "/v1/chat/completions", None),
    ({"prompt": "x"}, None, None),
])
def test_detect_shape(body: Any, path: str | None, shape: str | None) -> None:
    assert detect_shape(body, path) == shape
    parsed = parse_request(body, path=path)
    assert (parsed.shape if parsed else None) == shape


def test_every_shape_has_rules_with_sources_and_a_checked_date() -> None:
    rules = render_rules()
    assert rules.checked == "2026-12-07"
    for shape in ("chat", "responses", "anthropic"):
        r = rules.of(shape)  # type: ignore[arg-type]
        assert r.sources and all(("http" in s or "llama" in s) for s in r.sources)
    assert rules.of("anthropic").order == ("tool", "system", "message")


@pytest.mark.parametrize("body", [
    {"messages": [{"role": "assistant", "content": 5, "tool_calls": 7}, "text", None], "tools": 3},
    {"messages": [{"role": "user", "content": {"type": "text", "text": "x"}}], "tools": {"a": 1}},
    {"system": 5, "messages": [{"role": "user", "content": [None, 3, {"type": "text"}]}], "tools": [None]},
    {"input": [None, 5, {"type": "function_call_output", "output": [1]}], "tools": 9, "instructions": [7]},
    {"input": {"odd": True}, "instructions": None},
])
def test_a_malformed_body_is_read_as_far_as_it_goes_and_never_raises(body: dict[str, Any]) -> None:
    req = parse_request(body)
    assert req is not None and req.shape == detect_shape(body)
    request_parts(req)  # the digest of whatever was read
