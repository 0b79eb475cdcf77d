"""`analyze proxy` against small local upstreams: byte-identical unbuffered relay, rows, clients at once, faults.

The upstream here is scripted per test (a stdlib HTTP server in a thread) so a test controls exactly which bytes
arrive when: a chunk is held back until the client has seen the one before, which proves the relay does not
buffer; a connection is cut mid-stream; the upstream is gone altogether. Timings are recorded, never asserted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest
from observe_server import fake_engine
from scripted_upstream import scripted

from analyzer.cli import main
from analyzer.errors import AnalyzerError
from analyzer.observe.jsonl import read_rows
from analyzer.proxy import start_proxy
from analyzer.requests import parse_request, request_parts

SENTINEL = "sk-proxy-sentinel-5c1e8a90d2b7"
CHUNKS = [b'data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n',
          b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n',
          b'data: {"choices":[{"index":0,"delta":{"content":" \\u00e9 there"},"finish_reason":"stop"}]}\n\n',
          b'data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,'
          b'"prompt_tokens_details":{"cached_tokens":8},"odd_field":[1,2]}}\n\n',
          b"data: [DONE]\n\n"]


def sse_head(h: BaseHTTPRequestHandler, *, chunked: bool = True) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("X-Upstream-Marker", "kept")
    if chunked:
        h.send_header("Transfer-Encoding", "chunked")
    else:
        h.send_header("Connection", "close")
        h.close_connection = True
    h.end_headers()


def write_chunk(h: BaseHTTPRequestHandler, data: bytes) -> None:
    h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
    h.wfile.flush()


def chat(content: str = "hello", **extra: Any) -> dict[str, Any]:
    return {"model": "m", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "system", "content": "You are terse.\n\n"},
                         {"role": "user", "content": content}], **extra}


def test_stream_is_relayed_byte_for_byte_and_chunk_by_chunk(tmp_path: Path) -> None:
    released = threading.Event()

    def script(h: BaseHTTPRequestHandler, body: bytes) -> None:
        sse_head(h)
        write_chunk(h, CHUNKS[0])
        # the rest is held back until the client has read the first chunk *through the proxy*: a relay that
        # buffered the response would never let it see that chunk, and this test would fail on the wait below
        released.wait(timeout=30)
        for c in CHUNKS[1:]:
            write_chunk(h, c)
        write_chunk(h, b"")

    # a body with odd spacing and key order: what reaches the upstream must be these bytes, not a re-encoding
    raw_body = b'{"stream": true,  "model":"m","messages":[{"role":"user","content":"caf\\u00e9  \\n"}]}'
    with scripted(script) as up, start_proxy(up.base_url, tmp_path) as proxy:
        got = b""
        with httpx.stream("POST", proxy.base_url + "/chat/completions", content=raw_body,
                          headers={"Content-Type": "application/json", "X-Client-Marker": "abc"}) as r:
            pieces = r.iter_raw()
            got += next(pieces)
            assert got == CHUNKS[0]
            released.set()
            for piece in pieces:
                got += piece
            assert r.headers["x-upstream-marker"] == "kept"
    assert released.is_set()
    assert got == b"".join(CHUNKS)
    path, headers, body = up.received[0]
    assert path == "/v1/chat/completions" and body == raw_body
    assert headers["X-Client-Marker"] == "abc" and headers["Content-Type"] == "application/json"
    rows = read_rows(proxy.log_path)
    assert len(rows) == 1
    row = rows[0]
    assert row["request_body"] == raw_body.decode()
    assert row["response"]["bytes"] == len(got)
    import hashlib
    assert row["response"]["sha256"] == hashlib.sha256(got).hexdigest()


def test_a_row_has_observes_schema_and_the_proxy_fields(tmp_path: Path) -> None:
    with fake_engine() as up, start_proxy(up.base_url, tmp_path, log_name="pi-turns") as proxy:
        body = chat(tools=[{"type": "function", "function": {"name": "read", "parameters": {}}}])
        r1 = httpx.post(proxy.base_url + "/chat/completions", json=body)
        proxy.label("treatment", value="other-cwd", factor="cwd")
        r2 = httpx.post(proxy.base_url + "/chat/completions", json=body)
        proxy.label("treatment", index=7)
        r3 = httpx.post(proxy.base_url + "/chat/completions", json={**body, "stream": False})
    assert [r.status_code for r in (r1, r2, r3)] == [200, 200, 200]
    rows = read_rows(proxy.log_path)
    assert proxy.log_path.name.startswith("pi-turns-")
    assert [(r["series"], r["index"]) for r in rows] == [("proxy", 1), ("treatment", 1), ("treatment", 7)]
    assert rows[1]["value"] == "other-cwd" and rows[1]["factor"] == "cwd" and rows[1]["label"]["factor"] == "cwd"
    for row, sent in zip(rows, up.sent_usage, strict=True):
        assert row["schema"] == "analyzer.observe/1" and row["source"] == "proxy"
        assert row["usage"] == sent  # the raw usage verbatim
        assert row["status"] == 200 and row["outcome"] == "ok"
        assert row["client_path"] == "/v1/chat/completions"
        assert row["upstream_url"] == up.base_url + "/chat/completions"
        assert json.loads(row["request_body"])["messages"] == up.received[0]["body"]["messages"]
        assert row["parts"] == request_parts(parse_request(json.loads(row["request_body"]), path=row["request_path"]))
        assert row["shape"] == "chat" and row["request_path"] == "/v1/chat/completions" and row["measured"]
        assert row["parts"]["tools"]["names"] == ["read"]
        assert row["config"]["model"] == "m" and row["server"]["version"] == "llama.cpp fake-engine-1"
    assert rows[0]["since_previous_s"] is None and rows[1]["since_previous_s"] > 0
    assert rows[0]["ttft_s"] is not None and rows[0]["finish_reason"] == "length"
    assert rows[2]["ttft_s"] is None and rows[2]["config"]["stream"] is False  # one JSON answer: no first token


def test_several_clients_at_once_each_get_one_complete_row(tmp_path: Path) -> None:
    n = 12
    with fake_engine(delay_s=0.05) as up, start_proxy(up.base_url, tmp_path) as proxy:
        results: list[int] = []

        def one(i: int) -> None:
            with httpx.Client(timeout=60) as c:
                results.append(c.post(proxy.base_url + "/chat/completions", json=chat(f"client {i}")).status_code)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == [200] * n
    lines = proxy.log_path.read_text().splitlines()
    assert len(lines) == n
    rows = [json.loads(line) for line in lines]
    assert sorted(r["exchange"] for r in rows) == list(range(1, n + 1))
    assert sorted(r["index"] for r in rows) == list(range(1, n + 1))
    assert {json.loads(r["request_body"])["messages"][1]["content"] for r in rows} == {f"client {i}" for i in range(n)}


def test_a_vanished_upstream_gives_502_a_row_and_a_clear_line(tmp_path: Path) -> None:
    said: list[str] = []
    with fake_engine() as up:
        url = up.base_url
    with start_proxy(url, tmp_path, say=said.append) as proxy:
        r = httpx.post(proxy.base_url + "/chat/completions", json=chat())
    assert r.status_code == 502 and "upstream is unreachable" in r.json()["error"]["message"]
    (row,) = read_rows(proxy.log_path)
    assert row["outcome"] == "connection-error" and row["status"] is None
    assert "unreachable" in row["error"] and json.loads(row["request_body"])["model"] == "m"
    assert len(said) == 1 and "exchange 1 POST /v1/chat/completions: the upstream is unreachable" in said[0]


def test_a_stream_cut_mid_way_is_cut_for_the_client_too(tmp_path: Path) -> None:
    def script(h: BaseHTTPRequestHandler, body: bytes) -> None:
        sse_head(h)
        write_chunk(h, CHUNKS[0])
        write_chunk(h, CHUNKS[1])
        if b"cut" not in body:
            for c in CHUNKS[2:]:
                write_chunk(h, c)
            write_chunk(h, b"")
            return
        h.close_connection = True
        h.connection.shutdown(2)  # gone without the last chunk

    said: list[str] = []
    with scripted(script) as up, start_proxy(up.base_url, tmp_path, say=said.append) as proxy:
        with pytest.raises(httpx.RemoteProtocolError), httpx.stream(
                "POST", proxy.base_url + "/chat/completions", json=chat("cut")) as r:
            b"".join(r.iter_raw())
        after = httpx.post(proxy.base_url + "/chat/completions", json=chat())  # the proxy is still serving
    assert after.status_code == 200
    rows = read_rows(proxy.log_path)
    assert [r["outcome"] for r in rows] == ["connection-error", "ok"]
    assert "the upstream broke off after" in rows[0]["error"] and rows[0]["usage"] is None
    assert rows[0]["response"]["bytes"] == len(CHUNKS[0]) + len(CHUNKS[1])
    assert any("cut short" in line for line in said)


def test_the_key_from_api_key_env_goes_upstream_and_nowhere_else(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("PROXY_TEST_KEY", SENTINEL)
    client_key = "sk-client-own-key-0123456789"
    with fake_engine(api_key=SENTINEL) as up:
        with start_proxy(up.base_url, tmp_path / "with", api_key_env="PROXY_TEST_KEY") as proxy:
            ok = httpx.post(proxy.base_url + "/chat/completions", json=chat(f"echo {SENTINEL}"),
                            headers={"Authorization": f"Bearer {client_key}"})
        with start_proxy(up.base_url, tmp_path / "without") as bare:  # the client's own header is passed on
            refused = httpx.post(bare.base_url + "/chat/completions", json=chat(),
                                 headers={"Authorization": f"Bearer {client_key}"})
    assert ok.status_code == 200 and refused.status_code == 401  # the key really was what let it in
    assert up.received[0]["headers"]["Authorization"] == f"Bearer {SENTINEL}"
    assert up.received[1]["headers"]["Authorization"] == f"Bearer {client_key}"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) == 2
    for p in written:
        text = p.read_text()
        assert SENTINEL not in text and client_key not in text, p
    row = read_rows(proxy.log_path)[0]
    assert "echo [redacted]" in row["request_body"] and row["config"]["api_key_env"] == "PROXY_TEST_KEY"
    cap = capsys.readouterr()
    assert SENTINEL not in cap.out + cap.err


def test_bad_input_is_one_error_line_and_nothing_on_disk(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("PROXY_UNSET_KEY", raising=False)
    assert main(["proxy", "--upstream", "ftp://x", "--out", str(tmp_path / "a")]) == 3
    assert "expected an http(s) base URL" in capsys.readouterr().err
    assert main(["proxy", "--upstream", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "b"),
                 "--api-key-env", "PROXY_UNSET_KEY"]) == 3
    assert "$PROXY_UNSET_KEY is not set" in capsys.readouterr().err
    with fake_engine() as up, start_proxy(up.base_url, tmp_path / "c") as first:
        with pytest.raises(AnalyzerError, match="cannot listen on 127.0.0.1"):
            start_proxy(up.base_url, tmp_path / "d", port=first.port)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    assert not list((tmp_path / "d").glob("*.jsonl"))


def test_ctrl_c_leaves_only_complete_rows_and_says_so(tmp_path: Path) -> None:
    hold = threading.Event()

    def script(h: BaseHTTPRequestHandler, body: bytes) -> None:
        sse_head(h)
        if b"hold" in body:
            write_chunk(h, CHUNKS[0])
            hold.wait(timeout=60)  # in flight when Ctrl-C arrives
        for c in CHUNKS:
            write_chunk(h, c)
        write_chunk(h, b"")

    with scripted(script) as up:
        proc = subprocess.Popen([sys.executable, "-m", "analyzer", "proxy", "--upstream", up.base_url,
                                 "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            base_url = proc.stdout.readline().strip()
            assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
            for i in range(3):
                assert httpx.post(base_url + "/chat/completions", json=chat(f"turn {i}")).status_code == 200
            with httpx.stream("POST", base_url + "/chat/completions", json=chat("hold")) as r:
                next(r.iter_raw())  # the held exchange is now in flight
                proc.send_signal(signal.SIGINT)
                _, err = proc.communicate(timeout=60)
        finally:
            hold.set()
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, err
    (log,) = tmp_path.glob("*.jsonl")
    text = log.read_text()
    assert text.endswith("\n") and len(text.splitlines()) == 3
    assert [json.loads(line)["outcome"] for line in text.splitlines()] == ["ok"] * 3
    assert f"stopped: 3 exchange(s) recorded in {log}; 1 exchange(s) still in flight were dropped" in err
    assert "Traceback" not in err
    assert os.path.getsize(log) == len(text.encode())


def test_a_chunked_request_body_with_expect_continue_arrives_whole(tmp_path: Path) -> None:
    """What curl sends for a large body: `Expect: 100-continue`, here with a chunked body as well."""
    import socket

    payload = json.dumps(chat("x" * 3000)).encode()
    with fake_engine() as up, start_proxy(up.base_url, tmp_path) as proxy:
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=30) as s:
            s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Expect: 100-continue\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
            assert s.recv(64).startswith(b"HTTP/1.1 100")
            for i in range(0, len(payload), 1000):
                part = payload[i:i + 1000]
                s.sendall(b"%x\r\n%s\r\n" % (len(part), part))
            s.sendall(b"0\r\n\r\n")
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 200") and b"data: [DONE]" in answer
    assert up.received[0]["body"] == json.loads(payload)
    assert "Expect" not in up.received[0]["headers"]
    (row,) = read_rows(proxy.log_path)
    assert row["request_body"] == payload.decode() and row["outcome"] == "ok"


def _proxy_server_error(tmp_path: Path, exc: BaseException, capsys) -> tuple[list[str], str]:
    """What the proxy's server does when a connection's thread ends with `exc`: the lines `say` got, stderr."""
    said: list[str] = []
    with scripted(lambda h, body: None) as upstream, \
            start_proxy(upstream.base_url, tmp_path, say=said.append) as proxy:
        try:
            raise exc
        except BaseException:
            proxy._server.handle_error(None, ("127.0.0.1", 5555))
    return said, capsys.readouterr().err


def test_a_client_dropping_its_connection_prints_no_traceback(tmp_path: Path, capsys) -> None:
    said, err = _proxy_server_error(tmp_path, ConnectionResetError(104, "Connection reset by peer"), capsys)
    assert "Traceback" not in err and err == ""
    assert said == []


def test_any_other_failure_of_a_connection_is_one_line(tmp_path: Path, capsys) -> None:
    said, err = _proxy_server_error(tmp_path, ValueError("bad state"), capsys)
    assert "Traceback" not in err
    assert said == ["connection from 127.0.0.1:5555 ended by ValueError: bad state"]
