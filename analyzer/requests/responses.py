"""OpenAI Responses → `Request`: `instructions` and leading system/developer input items are the system prompt,
`tools` the tool definitions, the other `input` items (messages with input_text/output_text parts,
function_call, function_call_output, reasoning, …) the conversation. `previous_response_id` is cache control:
the server prepends state the body does not carry, which the request model records but cannot show."""

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
from analyzer.requests.chat import tool_block, tool_name
from analyzer.requests.model import Block, Request
from analyzer.requests.rules import ShapeRules, render_rules

ITEM_ROLES = {"function_call": "assistant", "reasoning": "assistant", "function_call_output": "tool",
              "custom_tool_call": "assistant", "custom_tool_call_output": "tool"}


def parse_responses(body: Mapping[str, Any], *, path: str | None = None, headers: Headers = None) -> Request:
    all_rules = render_rules()
    rules = all_rules.of("responses")
    collected = Collected()
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        collected.add("system", "instructions", "system", [Block("text", instructions)])
    elif isinstance(instructions, list):
        for i, item in enumerate(instructions):
            blocks, markers = item_blocks(item, rules)
            collected.add("system", f"instructions[{i}]", _role(item) or "system", blocks, markers=markers)
    data = body.get("input")
    if isinstance(data, str):
        collected.add("message", "input", "user", [Block("text", data)])
    elif isinstance(data, list):
        leading = True
        for i, item in enumerate(data):
            role = _role(item)
            blocks, markers = item_blocks(item, rules)
            if leading and role in rules.system_roles:
                collected.add("system", f"input[{i}]", role, blocks, markers=markers)
                continue
            leading = False
            name = text_or_none(item.get("call_id")) if isinstance(item, Mapping) else None
            collected.add("message", f"input[{i}]", role, blocks, name=name, markers=markers)
    for i, tool in enumerate(listed(body.get("tools"))):
        cc = marker(tool)
        collected.add("tool", f"tools[{i}]", None, [tool_block(tool, rules)],
                      name=tool_name(tool) or (text_or_none(tool.get("type")) if isinstance(tool, Mapping) else None),
                      markers=entry_markers(cc))
    return assemble("responses", path, body, collected, rules, control_of(body, headers, all_rules),
                    fields(body, rules.param_fields))


def _role(item: Any) -> str | None:
    if not isinstance(item, Mapping):
        return None
    role = text_or_none(item.get("role"))
    return role if role is not None else ITEM_ROLES.get(str(item.get("type")))


def item_blocks(item: Any, rules: ShapeRules) -> tuple[list[Block], ControlMarkers]:
    """A message item's content parts; any other item (a call, its output, reasoning) as one block of its type,
    without the keys that only identify it (`id`, `status`). A string function output renders as its text."""
    if not isinstance(item, Mapping):
        return [block_of(item, rules)], []
    kind = str(item.get("type") or ("message" if "role" in item else "object"))
    if kind == "message" or ("role" in item and "content" in item):
        return content_blocks(item.get("content"), rules)
    if kind.endswith("_call_output") and isinstance(item.get("output"), str):
        return [Block(kind, item["output"])], []
    dropped = frozenset() if kind in rules.id_is_content_types else rules.item_metadata_keys
    kept = {k: v for k, v in item.items() if k not in dropped}
    return [Block(kind, canonical_json(without_control(kept, rules), rules))], []
