"""Which API shape a recorded body is, and the one entry point that parses any of them.

The request path decides when there is one (`/chat/completions`, `/responses`, `/messages`, as the render rules
list them); without it, or for a path of no known shape whose body has `messages`, the body's own keys do (rules
`detect_*`). Anything else — a GET, a non-object body,
an embeddings call — is no request of these shapes: None, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from analyzer.requests.cachecontrol import Headers
from analyzer.requests.model import SHAPES, Request, Shape
from analyzer.requests.rules import render_rules


def detect_shape(body: Any, path: str | None = None) -> Shape | None:
    if not isinstance(body, Mapping):
        return None
    rules = render_rules()
    if path:
        clean = urlparse(path).path.rstrip("/")
        for shape in SHAPES:
            if any(clean.endswith(p) for p in rules.of(shape).paths):
                return shape if _has_prompt(body, shape) else None
        if not isinstance(body.get("messages"), list):
            return None  # another endpoint (embeddings' `input`, completions' `prompt`): no request of ours
    for shape in ("responses", "anthropic"):
        r = rules.of(shape)
        if any(k in body for k in r.detect_keys) and _has_prompt(body, shape):
            return shape
        if r.detect_block_types and _block_types(body) & r.detect_block_types:
            return shape
        tools = body.get("tools")
        if r.detect_tool_keys and isinstance(tools, list) and any(
                isinstance(t, Mapping) and any(k in t for k in r.detect_tool_keys) for t in tools):
            return shape
    return "chat" if isinstance(body.get("messages"), list) else None


def _has_prompt(body: Mapping[str, Any], shape: Shape) -> bool:
    if shape == "responses":
        return "input" in body or "instructions" in body
    return isinstance(body.get("messages"), list)


def _block_types(body: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):
            found.update(str(b.get("type")) for b in content if isinstance(b, Mapping))
    return found


def parse_request(body: Any, *, path: str | None = None, headers: Headers = None) -> Request | None:
    """The request model of `body` (a decoded JSON object) sent to `path`; None when it is none of the shapes."""
    shape = detect_shape(body, path)
    if shape is None:
        return None
    endpoint = urlparse(path).path if path else None
    if shape == "chat":
        from analyzer.requests.chat import parse_chat
        return parse_chat(body, path=endpoint, headers=headers)
    if shape == "responses":
        from analyzer.requests.responses import parse_responses
        return parse_responses(body, path=endpoint, headers=headers)
    from analyzer.requests.anthropic import parse_anthropic
    return parse_anthropic(body, path=endpoint, headers=headers)
