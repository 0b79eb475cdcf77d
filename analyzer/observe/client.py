"""Send one request and measure it: time to first token, total time, the raw usage verbatim.

Faults are results, not exceptions: a refused connection, a timeout, a 4xx/5xx or a broken stream becomes an
`Outcome` with `outcome` and `error` set, so the run writes a row for it and goes on. Only Ctrl-C propagates.
The Authorization header is built here and never returned, logged or put in an error message.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import httpx

from analyzer.requests.answers import Answer, answer_from_json
from analyzer.requests.detect import detect_shape
from analyzer.requests.model import Shape
from analyzer.requests.streams import StreamReader as ShapeReader

ERROR_BODY_CHARS = 300


@dataclass
class Outcome:
    outcome: str                       # ok | http-error | connection-error | timeout | protocol-error
    status: int | None = None
    ttft_s: float | None = None        # first content, reasoning or tool-argument delta (streaming only)
    total_s: float | None = None
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    server: dict[str, Any] = field(default_factory=dict)
    finish_reason: str | None = None
    output_chars: int = 0
    error: str | None = None
    retries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


def headers_for(api_key: str | None) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream, application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def send(client: httpx.Client, url: str, headers: dict[str, str], body: dict[str, Any], *, retries_429: int = 3,
         max_retry_wait_s: float = 60.0, sleep: Callable[[float], None] = time.sleep) -> Outcome:
    """POST `body`, honouring 429 `Retry-After` up to `retries_429` times (each wait is kept in `retries`)."""
    retries: list[dict[str, Any]] = []
    while True:
        result = _attempt(client, url, headers, body)
        if result.status != 429 or len(retries) >= retries_429:
            result.retries = retries
            return result
        wait, header = _retry_after(result.server.get("retry_after"), len(retries), max_retry_wait_s)
        retries.append({"status": 429, "retry_after": header, "waited_s": round(wait, 3)})
        sleep(wait)


def _attempt(client: httpx.Client, url: str, headers: dict[str, str], body: dict[str, Any]) -> Outcome:
    start = time.monotonic()
    try:
        with client.stream("POST", url, headers=headers, json=body) as response:
            server = server_headers(response)
            if response.status_code >= 400:
                text = _read_limited(response)
                return Outcome("http-error", response.status_code, total_s=time.monotonic() - start, server=server,
                               error=f"HTTP {response.status_code}: {error_text(text)}")
            is_json = response.headers.get("content-type", "").startswith("application/json")
            shape = detect_shape(body, urlparse(url).path)
            if body.get("stream") and not is_json:  # a server that ignores `stream` answers with one JSON object
                out = _read_stream(response, start, shape)
            else:
                out = _read_json(response, start, shape)
            out.status = response.status_code
            out.server = {**server, **out.server}
            return out
    except httpx.TimeoutException as exc:
        return Outcome("timeout", total_s=time.monotonic() - start, error=f"timed out ({type(exc).__name__})")
    except httpx.TransportError as exc:
        return Outcome("connection-error", total_s=time.monotonic() - start,
                       error=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


def _read_stream(response: httpx.Response, start: float, shape: Shape | None) -> Outcome:
    """Server-sent events of the request's shape, line by line until the shape's end marker."""
    reader = StreamReader(start, shape)
    for line in response.iter_lines():
        if not reader.feed(line):
            break
    return reader.finish()


class StreamReader:
    """Reads an SSE stream of any shape (chat, Anthropic Messages, Responses) line by line into an `Outcome`.

    A thin face over `analyzer.requests.streams.StreamReader`, fed by `send` here and by the recording proxy
    (which passes the bytes on unchanged and feeds a copy), so both judge a stream — TTFT, usage, timings, its
    end marker, an error event — by the same rules. `shape` None: taken from the first event.
    """

    def __init__(self, start: float, shape: Shape | None = None) -> None:
        self._reader = ShapeReader(start, shape)

    @property
    def done(self) -> bool:
        return self._reader.done

    @property
    def shape(self) -> Shape | None:
        return self._reader.shape

    def feed(self, line: str) -> bool:
        """Take one line (without its newline); False once the stream is over or broken (feed no more)."""
        return self._reader.feed(line)

    def finish(self) -> Outcome:
        return outcome_of(self._reader.finish())


def outcome_of(answer: Answer) -> Outcome:
    """observe's Outcome of a request-model Answer (the same fields; status and retries are set by the caller)."""
    return Outcome(answer.outcome, ttft_s=answer.ttft_s, total_s=answer.total_s, usage=answer.usage,
                   timings=answer.timings, server=dict(answer.server), finish_reason=answer.finish_reason,
                   output_chars=answer.output_chars, error=answer.error)


def _read_json(response: httpx.Response, start: float, shape: Shape | None) -> Outcome:
    try:
        data = json.loads(response.read())
    except json.JSONDecodeError:
        return Outcome("protocol-error", total_s=time.monotonic() - start, error="the response is not JSON")
    return outcome_from_json(data, time.monotonic() - start, shape)


def outcome_from_json(data: Any, total_s: float, shape: Shape | None = None) -> Outcome:
    """A non-streamed answer (one JSON object) of any shape as an `Outcome` (`shape` None: judged from it)."""
    return outcome_of(answer_from_json(data, total_s, shape))


def server_headers(response: httpx.Response) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if response.headers.get("server"):
        found["header"] = response.headers["server"]
    if response.headers.get("retry-after") is not None:
        found["retry_after"] = response.headers["retry-after"]
    return found


def _read_limited(response: httpx.Response) -> str:
    data = b""
    for piece in response.iter_bytes():
        data += piece
        if len(data) > 4096:
            break
    return data.decode("utf-8", "replace")


def error_text(text: str) -> str:
    """The server's own message when it sends OpenAI-style JSON errors, else the start of the body."""
    try:
        data = json.loads(text)
        err = data.get("error", data) if isinstance(data, dict) else data
        message = err.get("message") if isinstance(err, dict) else None
        if isinstance(message, str):
            text = message
    except (json.JSONDecodeError, AttributeError):
        pass
    text = " ".join(text.split())
    return text[:ERROR_BODY_CHARS] + ("…" if len(text) > ERROR_BODY_CHARS else "")


def _retry_after(header: str | None, attempt: int, cap: float) -> tuple[float, str | None]:
    """Seconds to wait: the Retry-After header (seconds or an HTTP date), else exponential backoff; capped."""
    wait: float | None = None
    if header:
        try:
            wait = float(header)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(header)
                wait = when.timestamp() - time.time()
            except (TypeError, ValueError):
                wait = None
    if wait is None:
        wait = float(2 ** attempt)
    return max(0.0, min(wait, cap)), header
