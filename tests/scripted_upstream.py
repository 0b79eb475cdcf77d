"""A scripted upstream for proxy tests: a real HTTP server on 127.0.0.1 whose POST handler is a test's function."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Scripted:
    """An upstream whose POST handler is `script(handler, body)`; it records every request it received."""

    def __init__(self, script: Callable[[BaseHTTPRequestHandler, bytes], None]) -> None:
        self.script = script
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.received.append((self.path, dict(self.headers.items()), body))
                owner.script(self, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def scripted(script: Callable[[BaseHTTPRequestHandler, bytes], None]) -> Iterator[Scripted]:
    up = Scripted(script)
    try:
        yield up
    finally:
        up.close()
