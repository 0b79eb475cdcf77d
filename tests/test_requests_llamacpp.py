"""`to_chat_body`: the chat body llama.cpp's server converts an Anthropic Messages or Responses request into
before rendering (reproducing server_chat_convert_anthropic_to_oai / server_chat_convert_responses_to_chatcmpl of
llama-cpp-python 0.3.36). Hand-built bodies with the expected conversion read off the server source; the
`engine` test checks the exactness against the real server: its reported prompt tokens for /v1/messages and
/v1/responses equal /apply-template + /tokenize of the converted body."""

from __future__ import annotations

import copy
import json
import uuid

import httpx
import pytest

from analyzer.requests.llamacpp_chat import ConversionError, normalize_billing_header, to_chat_body


def test_anthropic_system_blocks_are_concatenated_and_blocks_become_chat_messages() -> None:
    body = {"model": "claude-x", "max_tokens": 32, "stream": True, "temperature": 0, "top_k": 5,
            "stop_sequences": ["END"], "metadata": {"user_id": "u-1"}, "tool_choice": {"type": "any"},
            "thinking": {"type": "enabled", "budget_tokens": 64},
            "system": [{"type": "text", "text": "You are terse."},
                       {"type": "text", "text": " Work in /tmp.", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "read", "input_schema": {"type": "object", "properties": {"z": {}, "a": {}}}}],
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "plan", "signature": "s"},
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "é.txt", "n": 2}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "ab"},
                                                                             {"type": "text", "text": "cd"}]},
                    {"type": "text", "text": "go on", "cache_control": {"type": "ephemeral"}}]},
                {"role": "assistant"}]}
    out = to_chat_body(body, "anthropic")
    assert out["messages"] == [
        {"role": "system", "content": "You are terse. Work in /tmp."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "Reading."}],
         "tool_calls": [{"id": "t1", "type": "function",
                         "function": {"name": "read", "arguments": '{"path":"é.txt","n":2}'}}],
         "reasoning_content": "plan"},
        # the user's text first, then the tool result (the server pushes the message, then the results)
        {"role": "user", "content": [{"type": "text", "text": "go on", "cache_control": {"type": "ephemeral"}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "abcd"}]
    assert out["tools"] == [{"type": "function", "function": {
        "name": "read", "description": "", "parameters": {"type": "object", "properties": {"z": {}, "a": {}}}}}]
    assert list(out["tools"][0]["function"]["parameters"]["properties"]) == ["z", "a"]  # key order kept
    assert (out["tool_choice"], out["stop"], out["max_tokens"], out["top_k"]) == ("required", ["END"], 32, 5)
    assert out["thinking_budget_tokens"] == 64 and out["__metadata_user_id"] == "u-1"
    assert "model" not in out and "system" not in out
    assert to_chat_body({"messages": []}, "anthropic")["max_tokens"] == 4096


def test_anthropic_edge_cases_follow_the_server() -> None:
    only_calls = to_chat_body({"messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "n", "input": None}]}]}, "anthropic")
    assert only_calls["messages"] == [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "t", "type": "function", "function": {"name": "n", "arguments": "{}"}}]}]
    image = to_chat_body({"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [
            {"type": "text", "text": "see"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA"}}]}]}]},
        "anthropic")
    assert image["messages"] == [{"role": "tool", "tool_call_id": "t", "content": [
        {"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}]}]
    with pytest.raises(ConversionError, match="'messages' is required"):
        to_chat_body({"system": "x"}, "anthropic")
    stamped = "x-anthropic-billing-header: cc_version=2.1; cch=a5145;You are a coding agent."
    assert normalize_billing_header(stamped) == stamped.replace("cch=a5145;", "cch=fffff;")
    out = to_chat_body({"system": stamped, "messages": []}, "anthropic")
    assert out["messages"][0]["content"].endswith("cch=fffff;You are a coding agent.")
    assert normalize_billing_header("no header cch=a5145;") == "no header cch=a5145;"


def test_responses_items_become_chat_messages_merged_into_the_previous_assistant_turn() -> None:
    body = {"model": "gpt-x", "instructions": "You are terse.", "max_output_tokens": 16,
            "reasoning": {"effort": "low"}, "prompt_cache_key": "k", "stream": False,
            "tools": [{"type": "function", "name": "read", "parameters": {"type": "object"}},
                      {"type": "web_search"},
                      {"type": "function", "name": "write", "parameters": {}, "strict": False}],
            "input": [{"role": "user", "content": "hi"},
                      {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "plan"}]},
                      {"type": "message", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": "Reading."}]},
                      {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{\"p\":1}"},
                      {"type": "function_call_output", "call_id": "c1", "output": "file"},
                      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "more"}]}]}
    out = to_chat_body(body, "responses")
    assert out["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [{"text": "hi", "type": "text"}]},
        {"role": "assistant", "content": [{"text": "Reading.", "type": "text"}],
         "reasoning_content": "plan",
         "tool_calls": [{"function": {"arguments": "{\"p\":1}", "name": "read"}, "id": "c1", "type": "function"}]},
        {"content": "file", "role": "tool", "tool_call_id": "c1"},
        {"role": "user", "content": [{"text": "more", "type": "text"}]}]
    assert out["tools"] == [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"},
                                                              "strict": True}},
                            {"type": "function", "function": {"name": "write", "parameters": {}, "strict": False}}]
    assert (out["max_tokens"], out["reasoning_effort"], out["prompt_cache_key"]) == (16, "low", "k")
    for gone in ("input", "instructions", "max_output_tokens", "reasoning"):
        assert gone not in out
    assert to_chat_body({"input": "hello"}, "responses")["messages"] == [{"role": "user", "content": "hello"}]


def test_responses_bodies_the_server_refuses_are_refused_with_its_message() -> None:
    for body, message in (({"instructions": "x"}, "'input' is required"),
                          ({"input": "x", "previous_response_id": "resp_1"}, "does not support 'previous_response_id'"),
                          ({"input": [{"role": "assistant", "content": "x"}]}, "Cannot determine type of 'item'"),
                          ({"input": [{"role": "user", "content": [{"type": "input_file"}]}]}, "input_file"),
                          ({"input": 3}, "must be a string or array"),
                          ({"input": "x", "tools": {}}, "'tools' must be an array")):
        with pytest.raises(ConversionError, match=message):
            to_chat_body(body, "responses")


def test_the_body_given_is_never_changed_and_chat_passes_through() -> None:
    body = {"input": [{"role": "user", "content": "hi", "status": "x"}],
            "tools": [{"type": "function", "name": "read"}]}
    before = copy.deepcopy(body)
    to_chat_body(body, "responses")
    assert body == before
    chat = {"messages": [{"role": "user", "content": "hi"}]}
    assert to_chat_body(chat, "chat") == chat


# -- exactness against the real server --------------------------------------------------------------------------

@pytest.mark.engine
def test_the_servers_prompt_tokens_equal_the_rendered_converted_body(local_engine) -> None:
    root = local_engine.base_url.rstrip("/").removesuffix("/v1")
    marker = uuid.uuid4().hex[:8]
    tool_schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    anthropic = {"model": "local", "max_tokens": 2, "temperature": 0,
                 "system": [{"type": "text", "text": f"Session {marker}. You are the harbour clerk."},
                            {"type": "text", "text": " Berths close at dusk.", "cache_control": {"type": "ephemeral"}}],
                 "tools": [{"name": "tide_table", "description": "Tide times", "input_schema": tool_schema}],
                 "messages": [{"role": "user", "content": "When does berth four close?"},
                              {"role": "assistant", "content": [
                                  {"type": "text", "text": "Checking."},
                                  {"type": "tool_use", "id": "t1", "name": "tide_table", "input": {"path": "b4"}}]},
                              {"role": "user", "content": [
                                  {"type": "tool_result", "tool_use_id": "t1", "content": "dusk"},
                                  {"type": "text", "text": "And berth five?"}]}]}
    responses = {"model": "local", "max_output_tokens": 2, "temperature": 0,
                 "instructions": f"Session {marker}-r. You are the harbour clerk.",
                 "tools": [{"type": "function", "name": "tide_table", "description": "Tide times",
                            "parameters": tool_schema}],
                 "input": [{"role": "user", "content": "When does berth four close?"},
                           {"type": "function_call", "call_id": "c1", "name": "tide_table",
                            "arguments": "{\"path\":\"b4\"}"},
                           {"type": "function_call_output", "call_id": "c1", "output": "dusk"},
                           {"type": "message", "role": "user",
                            "content": [{"type": "input_text", "text": "And berth five?"}]}]}
    with httpx.Client(timeout=300, trust_env=False) as client:
        for path, body, shape in (("/v1/messages", anthropic, "anthropic"), ("/v1/responses", responses, "responses")):
            answer = client.post(root + path, json=body)
            assert answer.status_code == 200, answer.text
            usage = answer.json()["usage"]
            reported = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0) if shape == "anthropic" \
                else usage["input_tokens"]
            converted = {k: v for k, v in to_chat_body(body, shape).items() if k != "stream"}
            rendered = client.post(root + "/apply-template", json=converted)
            assert rendered.status_code == 200, rendered.text
            tokens = client.post(root + "/tokenize", json={"content": rendered.json()["prompt"], "add_special": True})
            assert len(tokens.json()["tokens"]) == reported, (path, json.dumps(usage))

