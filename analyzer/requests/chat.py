"""OpenAI chat completions → `Request`: leading system/developer messages are the system prompt, `tools` the
tool definitions, the remaining messages the conversation (each with its content parts, reasoning and tool calls)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analyzer.requests.build import (
    Collected,
    ControlMarkers,
    assemble,
    block_of,
    canonical_json,
    content_blocks,
    entry_markers,
    fields,
    listed,
    marker,
    text_or_none,
    without_control,
)
from analyzer.requests.cachecontrol import Headers, control_of
from analyzer.requests.model import Block, Request
from analyzer.requests.rules import ShapeRules, render_rules


def parse_chat(body: Mapping[str, Any], *, path: str | None = None, headers: Headers = None) -> Request:
    all_rules = render_rules()
    rules = all_rules.of("chat")
    collected = Collected()
    leading = True
    for i, message in enumerate(listed(body.get("messages"))):
        if not isinstance(message, Mapping):
            collected.add("message", f"messages[{i}]", None, [block_of(message, rules)])
            leading = False
            continue
        role = text_or_none(message.get("role"))
        blocks, markers = message_blocks(message, rules)
        if leading and role in rules.system_roles:
            collected.add("system", f"messages[{i}]", role, blocks, markers=markers)
            continue
        leading = False
        name = text_or_none(message.get("name")) or text_or_none(message.get("tool_call_id"))
        collected.add("message", f"messages[{i}]", role, blocks, name=name, markers=markers)
    for i, tool in enumerate(listed(body.get("tools"))):
        cc = marker(tool)
        collected.add("tool", f"tools[{i}]", None, [tool_block(tool, rules)], name=tool_name(tool),
                      markers=entry_markers(cc))
    return assemble("chat", path, body, collected, rules, control_of(body, headers, all_rules),
                    fields(body, rules.param_fields))


def message_blocks(message: Mapping[str, Any], rules: ShapeRules) -> tuple[list[Block], ControlMarkers]:
    """Reasoning (rendered before the answer by the templates that show it), the content parts, then each tool
    call; block indices of content markers shift past a reasoning block."""
    reasoning = message.get("reasoning_content")
    if reasoning is None:
        reasoning = message.get("reasoning")
    head = [Block("reasoning", reasoning)] if isinstance(reasoning, str) and reasoning else []
    blocks, markers = content_blocks(message.get("content"), rules)
    markers = [(None if b is None else b + len(head), cc) for b, cc in markers]
    calls = [Block("tool_call", canonical_json(without_control(c, rules), rules))
             for c in listed(message.get("tool_calls"))]
    return head + blocks + calls, markers


def tool_block(tool: Any, rules: ShapeRules) -> Block:
    kind = str(tool.get("type") or "function") if isinstance(tool, Mapping) else "tool"
    return Block(kind, canonical_json(without_control(tool, rules), rules))


def tool_name(tool: Any) -> str | None:
    """A chat tool's `function.name`; a flat tool's `name` (Responses and Anthropic style)."""
    if not isinstance(tool, Mapping):
        return None
    function = tool.get("function")
    if isinstance(function, Mapping) and isinstance(function.get("name"), str):
        return str(function["name"])
    return text_or_none(tool.get("name"))
