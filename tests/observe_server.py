"""A small OpenAI-compatible chat server on 127.0.0.1 for `analyze observe` tests (stdlib http.server, a thread).

It speaks streaming SSE and plain JSON, keeps a one-slot prefix cache like llama-server (cached tokens = the
common prefix with the previous prompt, in 4-character "tokens"), and can be scripted per request to produce the
faults a real engine will not: HTTP errors, 429 with Retry-After, a stall past the client's timeout, a dropped
connection. It also records what it received so tests can check the Authorization header was sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN_CHARS = 4


def render(body: dict[str, Any]) -> str:
    """The 'prompt' the fake model sees: system, then tools, then the other messages (like a chat template)."""
    msgs = body.get("messages") or []
    system = "".join(m["content"] for m in msgs if m.get("role") == "system")
    tools = json.dumps(body.get("tools") or [], separators=(",", ":"))
    rest = "".join(f"<{m['role']}>{m['content']}" for m in msgs if m.get("role") != "system")
    return f"<system>{system}<tools>{tools}{rest}<assistant>"


def tokens(text: str) -> list[str]:
    return [text[i:i + TOKEN_CHARS] for i in range(0, len(text), TOKEN_CHARS)]


class FakeEngine:
    def __init__(self, *, api_key: str | None = None, usage_style: str = "openai", delay_s: float = 0.0) -> None:
        self.api_key = api_key
        self.usage_style = usage_style
        self.delay_s = delay_s
        self.script: dict[int, tuple[Any, ...]] = {}   # request number (1-based) → behaviour
        self.received: list[dict[str, Any]] = []
        self.sent_usage: list[dict[str, Any]] = []
        self._last: list[str] = []
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.server.handle_error = self._quiet_disconnects  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _quiet_disconnects(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-stream (Ctrl-C, timeouts) is what some tests do; anything else is shown."""
        import sys
        import traceback
        if not isinstance(sys.exc_info()[1], ConnectionError):
            traceback.print_exc()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> FakeEngine:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def usage_for(self, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        toks = tokens(render(body))
        with self._lock:
            common = 0
            for a, b in zip(self._last, toks, strict=False):
                if a != b:
                    break
                common += 1
            cached = min(common, len(toks) - 1)  # the last token is always computed, as in llama.cpp
            self._last = toks
            self.sent_usage.append(usage := self._usage(len(toks), cached))
        return usage, {"cache_n": cached, "prompt_n": len(toks) - cached, "predicted_n": 3}

    def _usage(self, prompt: int, cached: int) -> dict[str, Any]:
        completion = 3
        if self.usage_style == "deepseek":
            return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                    "prompt_cache_hit_tokens": cached, "prompt_cache_miss_tokens": prompt - cached}
        if self.usage_style == "anthropic":
            return {"input_tokens": prompt - cached, "output_tokens": completion, "cache_read_input_tokens": cached,
                    "cache_creation_input_tokens": 0}
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.endswith("/props"):
                    self._json(200, {"build_info": "fake-engine-1"})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with engine._lock:
                    engine.received.append({"headers": dict(self.headers), "body": body})
                    n = len(engine.received)
                behaviour = engine.script.get(n, ("ok",))
                if engine.api_key and self.headers.get("Authorization") != f"Bearer {engine.api_key}":
                    self._json(401, {"error": {"message": "Invalid API Key"}})
                    return
                kind = behaviour[0]
                if kind == "status":
                    self._json(behaviour[1], {"error": {"message": behaviour[2] if len(behaviour) > 2 else "boom"}})
                    return
                if kind == "429":
                    self._json(429, {"error": {"message": "rate limited"}}, {"Retry-After": str(behaviour[1])})
                    return
                if kind == "sleep":
                    time.sleep(behaviour[1])
                if kind == "close":
                    self.close_connection = True
                    self.connection.close()
                    return
                if engine.delay_s:
                    time.sleep(engine.delay_s)
                usage, timings = engine.usage_for(body)
                if body.get("stream") and kind != "json":
                    self._stream(body, usage, timings)
                else:
                    self._json(200, {"id": "chatcmpl-fake", "model": "fake-model", "system_fingerprint": "fp_fake",
                                     "choices": [{"index": 0, "finish_reason": "length",
                                                  "message": {"role": "assistant", "content": "Hello there"}}],
                                     "usage": usage, "timings": timings})

            def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], usage: dict[str, Any], timings: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake-model",
                        "system_fingerprint": "fp_fake"}
                chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}]},
                          {"choices": [{"index": 0, "delta": {"content": "Hello"}}]},
                          {"choices": [{"index": 0, "delta": {"content": " there"}, "finish_reason": "length"}]}]
                if (body.get("stream_options") or {}).get("include_usage"):
                    chunks.append({"choices": [], "usage": usage, "timings": timings})
                for c in chunks:
                    self.wfile.write(f"data: {json.dumps({**base, **c})}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler


@contextmanager
def fake_engine(**kwargs: Any) -> Iterator[FakeEngine]:
    engine = FakeEngine(**kwargs).start()
    try:
        yield engine
    finally:
        engine.stop()
