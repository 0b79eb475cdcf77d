"""Anthropic Messages → `Request`: `tools`, then `system` (a string, or text blocks), then `messages` with their
content blocks — the order the prompt cache is built in. `cache_control` on a tool, a system block or a content
block becomes a Breakpoint on that segment/block; a top-level `cache_control` is automatic mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analyzer.requests.build import (
    Collected,
    assemble,
    block_of,
    content_blocks,
    entry_markers,
    fields,
    listed,
    marker,
    text_or_none,
)
from analyzer.requests.cachecontrol import Headers, control_of
from analyzer.requests.chat import tool_block, tool_name
from analyzer.requests.model import Block, Request
from analyzer.requests.rules import render_rules


def parse_anthropic(body: Mapping[str, Any], *, path: str | None = None, headers: Headers = None) -> Request:
    all_rules = render_rules()
    rules = all_rules.of("anthropic")
    collected = Collected()
    for i, tool in enumerate(listed(body.get("tools"))):
        cc = marker(tool)
        collected.add("tool", f"tools[{i}]", None, [tool_block(tool, rules)], name=tool_name(tool),
                      markers=entry_markers(cc))
    system = body.get("system")
    if isinstance(system, str):
        collected.add("system", "system", "system", [Block("text", system)])
    elif isinstance(system, list):
        for i, part in enumerate(system):
            cc = marker(part)
            collected.add("system", f"system[{i}]", "system", [block_of(part, rules)],
                          markers=entry_markers(cc, 0))
    for i, message in enumerate(listed(body.get("messages"))):
        if not isinstance(message, Mapping):
            collected.add("message", f"messages[{i}]", None, [block_of(message, rules)])
            continue
        blocks, markers = content_blocks(message.get("content"), rules)
        collected.add("message", f"messages[{i}]", text_or_none(message.get("role")), blocks, markers=markers)
    return assemble("anthropic", path, body, collected, rules, control_of(body, headers, all_rules),
                    fields(body, rules.param_fields))
