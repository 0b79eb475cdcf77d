"""Hand-written small streams of each API shape (chat, Anthropic Messages, Responses) as SSE lines, shared by
the request-model and proxy tests. They reproduce the shapes the providers document, never recorded traffic."""

from __future__ import annotations

import json
from typing import Any


def sse(*events: tuple[str | None, Any]) -> list[str]:
    lines: list[str] = []
    for event, data in events:
        if event is not None:
            lines.append(f"event: {event}")
        lines.append("data: " + (data if isinstance(data, str) else json.dumps(data)))
        lines.append("")
    return lines


ANTHROPIC_USAGE = {"input_tokens": 12, "cache_read_input_tokens": 2048, "cache_creation_input_tokens": 64,
                   "output_tokens": 1}


def anthropic_stream() -> list[str]:
    return sse(("message_start", {"type": "message_start", "message": {
                   "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": [],
                   "stop_reason": None, "usage": ANTHROPIC_USAGE}}),
               ("ping", {"type": "ping"}),
               ("content_block_start", {"type": "content_block_start", "index": 0,
                                        "content_block": {"type": "text", "text": ""}}),
               ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": "Hello"}}),
               ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": " there"}}),
               ("content_block_stop", {"type": "content_block_stop", "index": 0}),
               ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                  "usage": {"output_tokens": 7}}),
               ("message_stop", {"type": "message_stop"}))


def responses_stream() -> list[str]:
    usage = {"input_tokens": 2100, "input_tokens_details": {"cached_tokens": 1920}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2105}
    return sse(("response.created", {"type": "response.created", "response": {
                    "id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-x"}}),
               ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                               "item": {"type": "function_call", "name": "read", "arguments": ""}}),
               ("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                                                           "delta": "{\"p\":"}),
               ("response.output_text.delta", {"type": "response.output_text.delta", "delta": "ok"}),
               ("response.completed", {"type": "response.completed", "response": {
                    "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-x",
                    "usage": usage}}))


def chat_stream() -> list[str]:
    return sse((None, {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}]}),
               (None, {"choices": [{"index": 0, "delta": {"reasoning_content": "hm"}}]}),
               (None, {"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}]}),
               (None, {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2,
                                                "prompt_tokens_details": {"cached_tokens": 4}},
                       "timings": {"cache_n": 4, "prompt_n": 5}}),
               (None, "[DONE]"))


def sse_bytes(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()
