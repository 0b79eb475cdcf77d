"""What came back for one request, of any shape: `Answer` (outcome, TTFT, usage verbatim, finish reason, size of
the generated text), and the reader of a non-streamed JSON answer of each shape.

Why here and not in observe: the proxy and observe's client must judge an answer by the same rules, and both
read the request model; `observe.client.Outcome` is filled from an `Answer`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from analyzer.requests.model import Shape

ERROR_CHARS = 300


@dataclass
class Answer:
    outcome: str = "ok"                 # ok | http-error (the server reported an error) | protocol-error
    error: str | None = None
    ttft_s: float | None = None         # first content, reasoning or tool-argument delta (streams only)
    total_s: float | None = None
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    server: dict[str, Any] = field(default_factory=dict)   # model, id, system_fingerprint as the server said
    finish_reason: str | None = None
    output_chars: int = 0
    complete: bool = False              # the shape's end marker arrived (a stream) or the JSON was whole
    shape: Shape | None = None


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def error_message(value: Any) -> str:
    """The server's own message out of an error object of any shape, shortened to one line."""
    text = None
    if isinstance(value, Mapping):
        inner = value.get("error", value)
        if isinstance(inner, Mapping):
            text = inner.get("message")
        elif isinstance(inner, str):
            text = inner
    elif isinstance(value, str):
        text = value
    if not isinstance(text, str):
        text = json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text[:ERROR_CHARS] + ("…" if len(text) > ERROR_CHARS else "")


def answer_shape(data: Mapping[str, Any]) -> Shape | None:
    """Which shape a JSON answer is: chat has `choices`, Responses `object: response`, Anthropic `type: message`."""
    if "choices" in data:
        return "chat"
    if data.get("object") == "response" or "output" in data and "status" in data:
        return "responses"
    if data.get("type") == "message" or ("content" in data and "stop_reason" in data):
        return "anthropic"
    return None


def answer_from_json(data: Any, total_s: float | None, shape: Shape | None = None) -> Answer:
    """A non-streamed answer (one JSON object) of `shape` (None: judged from the object itself)."""
    out = Answer(total_s=total_s, complete=True)
    if not isinstance(data, Mapping):
        return out
    if data.get("type") == "error" or ("error" in data and data.get("error") and "choices" not in data
                                       and data.get("object") != "response"):
        out.outcome, out.error = "http-error", f"error in answer: {error_message(data)}"
        return out
    out.shape = shape or answer_shape(data)
    take_server(out, data)
    out.usage = dict(data["usage"]) if isinstance(data.get("usage"), Mapping) else None
    out.timings = dict(data["timings"]) if isinstance(data.get("timings"), Mapping) else None
    if out.shape == "anthropic":
        out.finish_reason = _str(data.get("stop_reason"))
        out.output_chars = sum(_block_chars(b) for b in as_list(data.get("content")) if isinstance(b, Mapping))
    elif out.shape == "responses":
        _responses_json(out, data)
    else:
        choice = as_map((as_list(data.get("choices")) or [{}])[0])
        message = as_map(choice.get("message"))
        out.output_chars = sum(len(str(message.get(k) or "")) for k in ("content", "reasoning_content"))
        out.output_chars += sum(len(str(as_map(c.get("function")).get("arguments") or ""))
                                for c in as_list(message.get("tool_calls")) if isinstance(c, Mapping))
        out.finish_reason = _str(choice.get("finish_reason"))
    return out


def _responses_json(out: Answer, data: Mapping[str, Any]) -> None:
    status = data.get("status")
    if status == "failed":
        out.outcome, out.error = "http-error", f"the response failed: {error_message(data.get('error') or data)}"
    details = data.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, Mapping) else None
    out.finish_reason = _str(reason) or _str(status)
    for item in as_list(data.get("output")):
        if not isinstance(item, Mapping):
            continue
        if isinstance(item.get("arguments"), str):
            out.output_chars += len(item["arguments"])
        for part in as_list(item.get("content")) or as_list(item.get("summary")):
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                out.output_chars += len(part["text"])


def _block_chars(block: Mapping[str, Any]) -> int:
    for key in ("text", "thinking"):
        if isinstance(block.get(key), str):
            return len(block[key])
    if "input" in block:
        return len(json.dumps(block["input"], ensure_ascii=False, separators=(",", ":")))
    return 0


def take_server(out: Answer, data: Mapping[str, Any]) -> None:
    for key in ("model", "system_fingerprint", "id"):
        if data.get(key):
            out.server[key] = data[key]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
