"""The proxy's HTTP side: accept on 127.0.0.1, forward unchanged with httpx, pass the response back as it arrives.

One thread per client connection (stdlib `ThreadingHTTPServer`), one shared httpx client upstream. The response
is relayed piece by piece as httpx yields it (`iter_raw`: the bytes the upstream sent, still encoded if they
were) and a copy is read by observe's `StreamReader`, so TTFT and usage are judged by the same rules as
`analyze observe`. A row is written only once its exchange is over, fsynced, under one lock: several clients at
once, Ctrl-C (`stop()`) and an upstream that vanishes leave a log of complete rows.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx

from analyzer.errors import AnalyzerError
from analyzer.observe.client import Outcome, StreamReader, error_text, outcome_from_json, server_headers
from analyzer.observe.jsonl import RowWriter, log_path
from analyzer.observe.runner import LOOPBACK, server_info
from analyzer.proxy.rows import PROXY_EXPERIMENT, Exchange, Label, exchange_row, parsed_request
from analyzer.requests import Request

# RFC 9110 §7.6.1 connection-specific fields: they describe one hop, so they are not passed on
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
                        "te", "trailer", "transfer-encoding", "upgrade"})
SECRET_HEADERS = ("authorization", "x-api-key", "api-key")
JSON_KEEP_BYTES = 8 * 1024 * 1024      # a non-streamed answer larger than this is passed on but not parsed
STOP_WAIT_S = 10.0
MIN_SECRET_CHARS = 8


class RunningProxy:
    """A proxy serving in a background thread; `stop()` (or leaving the `with` block) ends it cleanly."""

    def __init__(self, upstream: str, out_dir: Path, *, port: int = 0, api_key_env: str | None = None,
                 log_name: str | None = None, timeout_s: float = 600.0,
                 say: Callable[[str], None] | None = None) -> None:
        parsed = urlparse(upstream)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise AnalyzerError(f"--upstream {upstream!r}: expected an http(s) base URL such as "
                                "http://127.0.0.1:8080/v1")
        self.upstream = upstream.rstrip("/")
        self._origin = f"{parsed.scheme}://{parsed.netloc}"
        self._base_path = parsed.path.rstrip("/")
        self.api_key_env = api_key_env
        self._api_key = _api_key(api_key_env)
        self.log_name = log_name or PROXY_EXPERIMENT
        self._say = say or (lambda line: None)
        self._writer = RowWriter(log_path(Path(out_dir), self.log_name), [self._api_key] if self._api_key else [])
        self.log_path: Path = self._writer.path
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._label = Label()
        self._counters: dict[str, int] = {}
        self._exchanges = 0
        self._last_start: float | None = None
        self._active: set[httpx.Response] = set()
        self._cut: set[int] = set()           # responses `stop()` closed mid-relay: their exchanges are dropped
        self._in_flight = 0
        self.dropped = 0
        self.stopping = False
        self._stopped = False
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(10.0, timeout_s)),
                                    follow_redirects=False, trust_env=parsed.hostname not in LOOPBACK,
                                    limits=httpx.Limits(max_connections=None, max_keepalive_connections=32))
        self._client.headers = httpx.Headers()  # no default User-Agent/Accept-Encoding: the client's headers only
        info = server_info(self._client, self.upstream, self._auth_headers())
        self.server_version, self.server_settings = info.version, info.settings
        try:
            self._server = _Server(("127.0.0.1", port), _handler_for(self))
            self._server.say = self._say
        except OSError as exc:
            self._writer.close()
            self.log_path.unlink(missing_ok=True)
            self._client.close()
            raise AnalyzerError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); choose another --port or "
                                "omit it for a free one") from None
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self.base_url: str = f"http://127.0.0.1:{self.port}{self._base_path}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="analyzer-proxy", daemon=True)
        self._thread.start()

    # -- the library face ----------------------------------------------------------------------------------------

    def label(self, series: str, index: int | None = None, **extra: Any) -> None:
        """Tag the rows of the exchanges that follow: `series`, and `index` (counted up per series when None).

        `extra` is kept in each row's `label`; `value` and `factor`, when given, also fill the row's own fields.
        """
        with self._lock:
            self._label = Label(series, index, dict(extra))
            if index is not None:
                self._counters[series] = index - 1

    @property
    def rows(self) -> int:
        """Rows durably written so far."""
        return self._writer.rows

    def stop(self) -> None:
        """Stop accepting, drop the exchanges still in flight (no row for them), close the log."""
        with self._lock:
            if self._stopped:
                return
            self.stopping = True
            active = list(self._active)
            self._cut.update(id(r) for r in active)
        self._server.shutdown()
        for response in active:  # unblocks the relaying threads; they see they were cut and write no row
            _interrupt(response)
        deadline = time.monotonic() + STOP_WAIT_S
        with self._idle:
            while self._in_flight and time.monotonic() < deadline:
                self._idle.wait(timeout=max(0.0, deadline - time.monotonic()))
            self.dropped += self._in_flight  # still waiting for the upstream's first byte: they never write
            self._stopped = True
            self._writer.close()
        self._server.server_close()
        self._client.close()

    def __enter__(self) -> RunningProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- used by the handler -------------------------------------------------------------------------------------

    def _auth_headers(self, client_headers: Any = None) -> dict[str, str]:
        """The key in the header the client used for its own: `x-api-key` (Anthropic) or `api-key` (Azure) when
        it sent one of those, else `Authorization: Bearer`."""
        if not self._api_key:
            return {}
        sent = {k.lower() for k in (client_headers.keys() if client_headers is not None else ())}
        for name in ("x-api-key", "api-key"):
            if name in sent:
                return {name: self._api_key}
        return {"Authorization": f"Bearer {self._api_key}"}

    def _begin(self, request: Request | None) -> tuple[int, float | None, Label, int]:
        """Number the exchange, time the gap since the previous one, and fix its label when it starts; a request
        of any known shape counts in its series' index (a GET or another endpoint does not)."""
        with self._lock:
            self._in_flight += 1
            self._exchanges += 1
            now = time.monotonic()
            gap = None if self._last_start is None else round(now - self._last_start, 6)
            self._last_start = now
            label = self._label
            index = 0
            if request is not None:
                index = self._counters.get(label.series, 0) + 1
                self._counters[label.series] = index
            return self._exchanges, gap, label, index

    def _end(self, exchange: Exchange | None, label: Label, index: int, secrets: list[str]) -> None:
        """Write the exchange's row (None: dropped) and let `stop()` know one fewer is in flight."""
        with self._idle:
            try:
                if self._stopped:  # it outlived stop()'s wait (counted there); the log is closed
                    return
                if exchange is None:
                    self.dropped += self.stopping
                    return
                row = exchange_row(exchange, label, index, log_name=self.log_name, upstream=self.upstream,
                                   base_url=self.base_url, api_key_env=self.api_key_env,
                                   server_version=self.server_version, server_settings=self.server_settings)
                extra = self._writer.secrets
                self._writer.secrets = extra + [s for s in secrets if s and s not in extra]
                try:
                    self._writer.write(row)
                finally:
                    self._writer.secrets = extra
            finally:
                self._in_flight -= 1
                self._idle.notify_all()

    def _settle(self, response: httpx.Response) -> bool:
        """The relay of `response` is over: True when it ran to its end, False when `stop()` cut it."""
        with self._lock:
            self._active.discard(response)
            return id(response) not in self._cut

    def _track(self, response: httpx.Response, on: bool) -> None:
        with self._lock:
            (self._active.add if on else self._active.discard)(response)


def start_proxy(upstream: str, out_dir: Path, *, port: int = 0, api_key_env: str | None = None,
                log_name: str | None = None, say: Callable[[str], None] | None = None) -> RunningProxy:
    """Start a recording proxy on 127.0.0.1 (`port` 0: a free one) in front of the OpenAI-compatible `upstream`.

    `api_key_env` names the environment variable whose key the proxy sends upstream (replacing the client's
    Authorization); `say` receives one line per notable event (an unreachable upstream, a broken stream).
    """
    return RunningProxy(upstream, out_dir, port=port, api_key_env=api_key_env, log_name=log_name, say=say)


def _api_key(name: str | None) -> str | None:
    if name is None:
        return None
    if not name.isidentifier():
        raise AnalyzerError("--api-key-env takes the NAME of an environment variable (e.g. DEEPSEEK_API_KEY), "
                            "never the key itself")
    value = os.environ.get(name, "")
    if not value:
        raise AnalyzerError(f"--api-key-env {name}: ${name} is not set; export {name}=… (the key is never written "
                            "anywhere) or drop --api-key-env to pass the client's own Authorization on")
    return value


def _interrupt(response: httpx.Response) -> None:
    """Wake a thread blocked reading `response`: closing it is not enough, a recv() in progress only returns
    when its socket is shut down."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(Exception):
        response.close()


def _client_secrets(headers: Any) -> list[str]:
    """The credentials a client sent, to scrub from its row. Shorter than MIN_SECRET_CHARS is a placeholder
    ("local", "x"): scrubbing it would mangle the verbatim body wherever the word occurs."""
    found = []
    for key, value in headers:
        if key.lower() in SECRET_HEADERS:
            token = value.split(None, 1)[-1] if value.strip() else ""
            if len(token) >= MIN_SECRET_CHARS:
                found.append(token)
    return found


# A client closing or resetting its keep-alive connection between requests is how many clients end a session.
CLIENT_GONE = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, TimeoutError)


class _Server(ThreadingHTTPServer):
    """The stdlib server, minus its traceback on stderr for every connection a client drops: a dropped
    connection is silent, any other failure of a connection's thread is one line through `say`."""

    say: Callable[[str], None] = staticmethod(lambda line: None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if exc is None or isinstance(exc, CLIENT_GONE):
            return
        self.say(f"connection from {client_address[0]}:{client_address[1]} ended by "
                 f"{type(exc).__name__}: {exc}")


def _handler_for(proxy: RunningProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(_Relay):
        owner = proxy

    return Handler


class _Relay(BaseHTTPRequestHandler):
    """One client connection; each request on it is one exchange."""

    protocol_version = "HTTP/1.1"
    owner: RunningProxy

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        pass

    def do_GET(self) -> None:
        self._exchange()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_GET

    def _exchange(self) -> None:
        proxy = self.owner
        if proxy.stopping:
            self.close_connection = True
            self._send_error(503, "analyzer proxy: shutting down")
            return
        secrets = _client_secrets(self.headers.items())
        try:
            body = self._read_body()
        except (ConnectionError, OSError, ValueError):  # the client went away (or sent a broken chunk size)
            self.close_connection = True
            return
        request = self._read_request(body) if body else None
        number, gap, label, index = proxy._begin(request)
        started_at = _dt.datetime.now(_dt.UTC)
        start = time.monotonic()
        exchange: Exchange | None = None
        try:
            ex = Exchange(number, self.command, self.path, proxy._origin + self.path, started_at, gap, body,
                          Outcome("ok"), request=request)
            exchange = self._forward(ex, start)
        except (ConnectionError, OSError):  # the client went away while its answer was relayed
            self.close_connection = True
            exchange = None
        finally:
            proxy._end(exchange, label, index, secrets)

    def _read_request(self, body: bytes) -> Request | None:
        """The request model of the body; a body it cannot read is relayed all the same (recorded without a
        shape, one line through `say`): analysis never breaks the pass-through."""
        try:
            return parsed_request(body, self.path, self.headers.items())
        except Exception as exc:  # noqa: BLE001 - the relay must go on whatever the parser meets
            self.owner._say(f"{self.command} {self.path}: the request model could not read the body "
                            f"({type(exc).__name__}: {exc}); recorded without its shape")
            return None

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _upstream_headers(self) -> list[tuple[str, str]]:
        proxy = self.owner
        drop = HOP_BY_HOP | {"host", "content-length", "expect"}  # 100-continue was answered here already
        if proxy._api_key:
            drop = drop | set(SECRET_HEADERS)
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in drop]
        headers += list(proxy._auth_headers(self.headers).items())
        return headers

    def _forward(self, ex: Exchange, start: float) -> Exchange | None:
        proxy = self.owner
        client = proxy._client
        request = client.build_request(self.command, ex.upstream_url, headers=self._upstream_headers(),
                                       content=ex.body)
        try:
            response = client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            return self._unreachable(ex, start, "timeout", f"the upstream timed out ({type(exc).__name__})")
        except httpx.TransportError as exc:
            if proxy.stopping:
                return None
            why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            return self._unreachable(ex, start, "connection-error", f"the upstream is unreachable ({why})")
        proxy._track(response, True)
        try:
            return self._relay(ex, response, start)
        finally:
            proxy._track(response, False)
            response.close()

    def _unreachable(self, ex: Exchange, start: float, outcome: str, error: str) -> Exchange:
        self.owner._say(f"exchange {ex.number} {self.command} {self.path}: {error}; the client got 502")
        self._send_error(502, f"analyzer proxy: {error} at {self.owner.upstream}")
        ex.outcome = Outcome(outcome, total_s=time.monotonic() - start, error=error)
        return ex

    def _send_error(self, status: int, message: str) -> None:
        data = json.dumps({"error": {"message": message, "type": "proxy_error"}}).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except OSError:
            self.close_connection = True

    def _relay(self, ex: Exchange, response: httpx.Response, start: float) -> Exchange | None:
        """Pass the response on as it arrives; read a copy into an Outcome."""
        proxy = self.owner
        content_type = response.headers.get("content-type", "")
        encoded = response.headers.get("content-encoding", "identity").lower() not in ("", "identity")
        sse = content_type.startswith("text/event-stream") and not encoded
        chunked = "content-length" not in response.headers and self.command != "HEAD"
        self.send_response_only(response.status_code, response.reason_phrase)
        for key, value in response.headers.multi_items():
            if key.lower() not in HOP_BY_HOP:
                self.send_header(key, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        if response.headers.get("connection", "").lower() == "close":
            self.close_connection = True
        self.end_headers()
        reader = StreamReader(start, ex.request.shape if ex.request is not None else None)
        digest = hashlib.sha256()
        kept = bytearray()
        pending = b""
        broken: str | None = None
        client_gone = False
        length = response.headers.get("content-length")
        expected = int(length) if length and length.isdigit() else None
        try:
            for piece in response.iter_raw():
                if not piece:
                    continue
                digest.update(piece)
                ex.response_bytes += len(piece)
                try:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                    self.wfile.flush()
                except OSError:
                    client_gone = True
                    break
                if sse:
                    pending += piece
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        reader.feed(line.decode("utf-8", "replace").rstrip("\r"))
                if (not sse or response.status_code >= 400) and len(kept) < JSON_KEEP_BYTES:
                    kept += piece
        except httpx.HTTPError as exc:
            broken = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        # complete as far as the client can tell: every byte the upstream announced, or the stream's end marker
        delivered = reader.done or (expected is not None and ex.response_bytes >= expected)
        if not proxy._settle(response):  # stop() cut it
            if not delivered:  # dropped, as observe drops its request in flight on Ctrl-C
                self.close_connection = True
                return None
            broken = None  # the cut came after the last byte: a finished exchange
        if chunked and broken is None and not client_gone:
            try:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except OSError:
                client_gone = True
        if broken is not None or client_gone:
            self.close_connection = True  # a stream cut short must look cut short to the client too
        ex.response_sha256 = digest.hexdigest()
        ex.content_type = content_type or None
        ex.outcome = self._judge(response, reader, sse, bytes(kept), start, pending, ex.request)
        ex.outcome.status = response.status_code
        ex.outcome.server = {**server_headers(response), **ex.outcome.server}
        if broken is not None:
            ex.outcome.outcome = "connection-error"
            ex.outcome.error = f"the upstream broke off after {ex.response_bytes} bytes ({broken})"
            proxy._say(f"exchange {ex.number} {self.command} {self.path}: {ex.outcome.error}; the client's stream "
                       "was cut short too")
        elif client_gone:
            ex.outcome.outcome = "connection-error"
            ex.outcome.error = f"the client closed the connection after {ex.response_bytes} bytes"
        return ex

    @staticmethod
    def _judge(response: httpx.Response, reader: StreamReader, sse: bool, kept: bytes, start: float,
               pending: bytes, request: Request | None) -> Outcome:
        if response.status_code >= 400:
            text = kept.decode("utf-8", "replace")
            return Outcome("http-error", response.status_code, total_s=time.monotonic() - start,
                           error=f"HTTP {response.status_code}: {error_text(text)}")
        if sse:
            if pending:
                reader.feed(pending.decode("utf-8", "replace").rstrip("\r"))
            return reader.finish()
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("application/json") and kept:
            try:
                return outcome_from_json(json.loads(kept), time.monotonic() - start,
                                         request.shape if request is not None else None)
            except (json.JSONDecodeError, UnicodeDecodeError):
                return Outcome("protocol-error", total_s=time.monotonic() - start, error="the response is not JSON")
        return Outcome("ok", total_s=time.monotonic() - start)
