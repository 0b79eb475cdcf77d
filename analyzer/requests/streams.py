"""Read a streamed answer of any shape line by line as it arrives (server-sent events) into an `Answer`.

One reader for chat completions (`data:` chunks until `data: [DONE]`, usage in the last chunk), Anthropic
Messages (`event:`/`data:` pairs; `message_start` carries the input and cache usage, `message_delta` the output
usage, `message_stop` ends it; `event: error`) and Responses (`response.*.delta` events; `response.completed`
carries `response.usage`; `response.failed`/`error`). Which events end a stream, count as the first token or
carry usage is data: `analyzer/rules/requests/streams.toml`. A reader made without a shape takes it from the
first event. Fed by observe's client and by the proxy (which relays the bytes and feeds a copy), so both judge
every stream by the same rules.
"""

from __future__ import annotations

import functools
import json
import time
import tomllib
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.requests.answers import Answer, as_list, as_map, error_message, take_server
from analyzer.requests.model import Shape

STREAM_RULES_FILE = "analyzer/rules/requests/streams.toml"


@functools.cache
def stream_rules() -> dict[str, dict[str, Any]]:
    text = resources.files("analyzer.rules.requests").joinpath("streams.toml").read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AnalyzerError(f"{STREAM_RULES_FILE}: {exc}") from None
    for shape in ("chat", "anthropic", "responses"):
        if not isinstance(data.get(shape), dict):
            raise AnalyzerError(f"{STREAM_RULES_FILE}: no [{shape}] table; every shape needs its stream rules")
    return data


def _sniff(event: str | None, chunk: Mapping[str, Any]) -> Shape | None:
    """The shape of a stream from its first event: chat chunks have `choices`, Responses events are
    `response.*`, Anthropic events are the Messages event types."""
    kind = str(chunk.get("type") or event or "")
    if "choices" in chunk or chunk.get("object") == "chat.completion.chunk":
        return "chat"
    if kind.startswith("response."):
        return "responses"
    if kind in ("message_start", "content_block_start", "content_block_delta", "content_block_stop",
                "message_delta", "message_stop", "ping"):
        return "anthropic"
    return None


class StreamReader:
    """Fed one line at a time (without its newline); `finish()` gives the Answer."""

    def __init__(self, start: float, shape: Shape | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.start = start
        self.clock = clock
        self.shape = shape
        self.out = Answer(shape=shape)
        self.done = False
        self.stopped = False
        self._event: str | None = None
        self._data: list[str] = []

    # -- lines -------------------------------------------------------------------------------------------------

    def feed(self, line: str) -> bool:
        """Take one line; False once the stream is over or broken (feed no more)."""
        if self.stopped:
            return False
        if not line.strip():
            if self._data:  # data lines that never made one JSON value
                self._fail("protocol-error", f"unparseable stream chunk: {chr(10).join(self._data)[:80]!r}")
            self._event = None
            return not self.stopped
        if line.startswith(":"):
            return True  # an SSE comment (keep-alive)
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self._event = value.strip()
        elif name == "data":
            self._data.append(value)
            self._take("\n".join(self._data))
        return not self.stopped

    def _take(self, payload: str) -> None:
        if payload.strip() == (stream_rules()["chat"].get("end") or "[DONE]"):
            self._data = []
            self.shape = self.shape or "chat"
            self._end()
            return
        try:
            chunk = json.loads(payload)
        except json.JSONDecodeError:
            return  # maybe the first line of a multi-line data field: judged at the blank line
        self._data = []
        if isinstance(chunk, Mapping):
            self._chunk(chunk)

    # -- events ------------------------------------------------------------------------------------------------

    def _chunk(self, chunk: Mapping[str, Any]) -> None:
        event = self._event
        kind = str(chunk.get("type") or event or "")
        if self.shape is None:
            self.shape = _sniff(event, chunk)
            self.out.shape = self.shape
        if event == "error" or kind == "error" or ("error" in chunk and chunk.get("error")
                                                   and not kind.startswith("response.")):
            self._fail("http-error", f"error in stream: {error_message(chunk)}")
            return
        if self.shape == "anthropic":
            self._anthropic(kind, chunk)
        elif self.shape == "responses":
            self._responses(kind, chunk)
        else:
            self._chat(chunk)

    def _chat(self, chunk: Mapping[str, Any]) -> None:
        rules = stream_rules()["chat"]
        out = self.out
        take_server(out, chunk)
        for choice in as_list(chunk.get("choices")):
            if not isinstance(choice, Mapping):
                continue
            delta = as_map(choice.get("delta"))
            text = "".join(str(delta.get(k) or "") for k in rules["delta_fields"])
            text += "".join(str(as_map(c.get("function")).get("arguments") or "")
                            for c in as_list(delta.get("tool_calls")) if isinstance(c, Mapping))
            self._generated(text)
            if choice.get("finish_reason"):
                out.finish_reason = str(choice["finish_reason"])
        if isinstance(chunk.get("usage"), Mapping):
            out.usage = dict(chunk["usage"])
        if isinstance(chunk.get("timings"), Mapping):
            out.timings = dict(chunk["timings"])

    def _anthropic(self, kind: str, chunk: Mapping[str, Any]) -> None:
        rules = stream_rules()["anthropic"]
        out = self.out
        if kind == "message_start" and isinstance(chunk.get("message"), Mapping):
            take_server(out, chunk["message"])
        if kind in rules["usage_types"]:
            holder = chunk.get("message") if kind == "message_start" else chunk
            usage = holder.get("usage") if isinstance(holder, Mapping) else None
            if isinstance(usage, Mapping):  # message_delta's usage is cumulative: it updates message_start's
                out.usage = {**(out.usage or {}), **usage}
        if kind in rules["delta_types"]:
            delta = as_map(chunk.get("delta"))
            self._generated("".join(str(delta.get(k) or "") for k in rules["delta_fields"]))
        if kind == "message_delta":
            reason = as_map(chunk.get("delta")).get("stop_reason")
            if reason:
                out.finish_reason = str(reason)
        if isinstance(chunk.get("timings"), Mapping):
            out.timings = dict(chunk["timings"])
        if kind in rules["end_types"]:
            self._end()

    def _responses(self, kind: str, chunk: Mapping[str, Any]) -> None:
        rules = stream_rules()["responses"]
        out = self.out
        response = chunk.get("response") if isinstance(chunk.get("response"), Mapping) else None
        if response is not None:
            take_server(out, response)
        if kind in rules["delta_types"]:
            self._generated("".join(str(chunk.get(k) or "") for k in rules["delta_fields"]))
        if kind in rules["usage_types"] and response is not None and isinstance(response.get("usage"), Mapping):
            out.usage = dict(response["usage"])
        if isinstance(chunk.get("timings"), Mapping):
            out.timings = dict(chunk["timings"])
        if response is not None and kind in rules["end_types"]:
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, Mapping) else None
            out.finish_reason = str(reason or response.get("status") or kind.split(".")[-1])
        if kind in rules["failed_types"]:
            why = (response or {}).get("error") or chunk
            self._fail("http-error", f"error in stream: {error_message(why)}")
        elif kind in rules["end_types"]:
            self._end()

    # -- state -------------------------------------------------------------------------------------------------

    def _generated(self, text: str) -> None:
        if text and self.out.ttft_s is None:
            self.out.ttft_s = self.clock() - self.start
        self.out.output_chars += len(text)

    def _end(self) -> None:
        self.done = True
        self.out.complete = True
        self.stopped = True

    def _fail(self, outcome: str, error: str) -> None:
        self.out.outcome, self.out.error = outcome, error
        self.stopped = True

    def finish(self) -> Answer:
        """The answer once the bytes stopped coming: a stream that ended before its shape's end marker is a
        protocol error naming the marker it lacked."""
        out = self.out
        if self._data and not self.stopped:
            self.feed("")
        out.total_s = self.clock() - self.start
        if out.outcome == "ok" and not self.done:
            out.outcome, out.error = "protocol-error", f"the stream ended without {end_marker(self.shape)}"
        return out


def end_marker(shape: Shape | None) -> str:
    """The marker a complete stream of `shape` ends with, as the error message names it."""
    rules = stream_rules()
    if shape == "anthropic":
        return "event: " + " or ".join(rules["anthropic"]["end_types"])
    if shape == "responses":
        return "event: " + " or ".join(rules["responses"]["end_types"])
    return f"data: {rules['chat'].get('end', '[DONE]')}"
