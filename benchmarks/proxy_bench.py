"""Proxy benchmark: the latency `analyze proxy` adds per streamed request, against a direct connection, same run.

    python benchmarks/proxy_bench.py [--requests N] [--chunks K] [--engine | --upstream URL]

Default upstream: a small local fake (stdlib HTTP server in a thread) that answers every request with K SSE
chunks at once, so what is timed is the relay, not a model. `--engine` starts the local llama-server
(`analyze engine build` first) and sends it a short chat; `--upstream URL` uses any OpenAI-compatible server on
127.0.0.1. Requests alternate direct / proxied so machine load affects both alike; each is streamed to the end
with its own connection (as an application's request would be). Printed: median, min and max of the time to
the first chunk and the total time for both paths, the median added latency and the ratio. Goal: the proxy
adds a few milliseconds per request (small next to any model's time to first token).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from analyzer.proxy import start_proxy

BODY = {"model": "local", "stream": True, "stream_options": {"include_usage": True}, "max_tokens": 8,
        "temperature": 0, "messages": [{"role": "system", "content": "You answer in one word."},
                                       {"role": "user", "content": "Say a colour."}]}


def fake_upstream(chunks: int) -> ThreadingHTTPServer:
    piece = b'data: {"choices":[{"index":0,"delta":{"content":"word "}}]}\n\n'
    tail = (b'data: {"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":8,'
            b'"prompt_tokens_details":{"cached_tokens":19}}}\n\ndata: [DONE]\n\n')

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for data in [piece] * chunks + [tail]:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def timed(base_url: str) -> tuple[float, float]:
    """(time to the first body chunk, total) of one streamed request on a fresh connection."""
    with httpx.Client(timeout=120) as client:
        start = time.perf_counter()
        first = None
        with client.stream("POST", base_url + "/chat/completions", json=BODY) as response:
            response.raise_for_status()
            for _piece in response.iter_raw():
                if first is None:
                    first = time.perf_counter() - start
        return first or 0.0, time.perf_counter() - start


def stats(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"median {statistics.median(ms):8.2f} ms  (min {min(ms):7.2f}, max {max(ms):7.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=60, help="requests per path (default 60)")
    parser.add_argument("--chunks", type=int, default=32, help="SSE chunks per answer from the fake (default 32)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--engine", action="store_true", help="the local llama-server instead of the fake")
    where.add_argument("--upstream", default=None, metavar="URL", help="an OpenAI-compatible base URL on 127.0.0.1")
    args = parser.parse_args()

    engine = server = None
    if args.engine:
        from analyzer.engine import start_engine
        from analyzer.engine.paths import engine_cache_dir
        from analyzer.paths import default_cache_dir

        engine = start_engine(engine_cache_dir(default_cache_dir()))
        upstream, what = engine.base_url, f"local llama-server {engine.base_url}"
    elif args.upstream:
        upstream, what = args.upstream.rstrip("/"), args.upstream
    else:
        server = fake_upstream(args.chunks)
        upstream = f"http://127.0.0.1:{server.server_address[1]}/v1"
        what = f"local fake upstream ({args.chunks} SSE chunks per answer)"
    try:
        with tempfile.TemporaryDirectory() as out, start_proxy(upstream, Path(out)) as proxy:
            timed(upstream)  # warm both paths once (imports, the engine's first prompt), unmeasured
            timed(proxy.base_url)
            direct: list[tuple[float, float]] = []
            proxied: list[tuple[float, float]] = []
            for _ in range(args.requests):
                direct.append(timed(upstream))
                proxied.append(timed(proxy.base_url))
        rows = proxy.rows  # after stop(): every exchange's row is on disk
    finally:
        if server is not None:
            server.shutdown()
        if engine is not None:
            engine.stop()
    print(f"upstream: {what}; {args.requests} streamed requests per path, alternating; {rows} rows recorded")
    print(f"direct   first chunk {stats([d[0] for d in direct])}   total {stats([d[1] for d in direct])}")
    print(f"proxied  first chunk {stats([p[0] for p in proxied])}   total {stats([p[1] for p in proxied])}")
    added = [p[1] - d[1] for d, p in zip(direct, proxied, strict=True)]
    d_med, p_med = statistics.median(d[1] for d in direct), statistics.median(p[1] for p in proxied)
    print(f"added latency per request: median {statistics.median(added) * 1000:.2f} ms "
          f"(pairwise); total time proxied/direct = {p_med / d_med:.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
