"""`analyze proxy` with requests of every shape: Anthropic Messages and Responses streams end, their usage and
TTFT are recorded, rows name their shape and path, rejected requests are not measured, the exchange index counts
requests of any shape, keys in any auth header never reach disk, and the command stops on SIGINT (even inherited
as ignored) and SIGTERM with the same closing line. Upstreams are scripted stdlib servers; nothing sleeps."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest
from request_fixtures import ANTHROPIC_USAGE, anthropic_stream, chat_stream, responses_stream, sse_bytes
from scripted_upstream import Scripted, scripted

from analyzer.observe.jsonl import read_rows
from analyzer.proxy import start_proxy
from analyzer.requests import read_usage

ANTHROPIC_KEY = "sk-ant-api03-proxy-sentinel-7f1d2c"
ENV_KEY = "sk-env-sentinel-0b5e9a41c7"

ANTHROPIC_BODY = {"model": "claude-x", "max_tokens": 16, "stream": True,
                  "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
                  "tools": [{"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}],
                  "messages": [{"role": "user", "content": "hi"}]}
RESPONSES_BODY = {"model": "gpt-x", "stream": True, "instructions": "You are terse.", "input": "hi",
                  "prompt_cache_key": "conv-1", "max_output_tokens": 16}
CHAT_BODY = {"model": "m", "stream": True, "messages": [{"role": "system", "content": "You are terse."},
                                                        {"role": "user", "content": "hi"}]}


@contextmanager
def upstream(answer: Callable[[str, dict[str, Any]], tuple[int, str, bytes]]) -> Iterator[Scripted]:
    """A scripted upstream that answers each POST with `answer(path, JSON body)` → (status, content type, bytes)."""

    def script(h: BaseHTTPRequestHandler, body: bytes) -> None:
        status, content_type, data = answer(h.path, json.loads(body or b"{}"))
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    with scripted(script) as up:
        yield up


def by_shape(path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    """A well-behaved upstream of every shape: streams when asked, one JSON answer otherwise."""
    if "fail" in json.dumps(body):
        return 400, "application/json", b'{"type":"error","error":{"type":"invalid_request_error",' \
                                        b'"message":"Failed to parse tools: Missing tool type"}}'
    stream = body.get("stream")
    if path.endswith("/messages"):
        if stream:
            return 200, "text/event-stream", sse_bytes(anthropic_stream())
        return 200, "application/json", json.dumps({
            "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "Hello"}], "usage": ANTHROPIC_USAGE}).encode()
    if path.endswith("/responses"):
        if stream:
            return 200, "text/event-stream", sse_bytes(responses_stream())
        return 200, "application/json", json.dumps({
            "id": "resp_2", "object": "response", "status": "completed", "model": "gpt-x",
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "Hello"}]}],
            "usage": {"input_tokens": 30, "input_tokens_details": {"cached_tokens": 16}, "output_tokens": 1}}).encode()
    return 200, "text/event-stream", sse_bytes(chat_stream())


def test_anthropic_and_responses_streams_are_complete_rows_with_usage_ttft_shape_and_path(tmp_path: Path) -> None:
    with upstream(by_shape) as up, start_proxy(up.base_url, tmp_path) as proxy:
        a = httpx.post(proxy.base_url + "/messages", json=ANTHROPIC_BODY,
                       headers={"x-session-affinity": "sess-42", "anthropic-version": "2023-06-01"})
        r = httpx.post(proxy.base_url + "/responses", json=RESPONSES_BODY)
    assert a.status_code == r.status_code == 200
    assert a.content == sse_bytes(anthropic_stream())  # relayed unchanged
    ra, rr = read_rows(proxy.log_path)
    assert (ra["outcome"], ra["error"], ra["shape"], ra["request_path"]) == ("ok", None, "anthropic", "/v1/messages")
    assert ra["usage"] == {**ANTHROPIC_USAGE, "output_tokens": 7}  # message_start's, updated by message_delta
    assert read_usage(ra["usage"]).cached == 2048
    assert ra["ttft_s"] is not None and ra["finish_reason"] == "end_turn" and ra["measured"]
    assert ra["parts"]["tools"]["names"] == ["read"] and ra["parts"]["system"]["bytes"] == len("You are terse.")
    assert ra["control"]["breakpoints"] == [[1, 0, None]]  # the system block, after the tool
    assert ra["control"]["affinity"] == [["x-session-affinity", "sess-42"]]
    assert ra["config"]["max_tokens"] == 16 and ra["config"]["model"] == "claude-x"
    assert (rr["outcome"], rr["shape"], rr["request_path"]) == ("ok", "responses", "/v1/responses")
    assert read_usage(rr["usage"]).cached == 1920 and rr["ttft_s"] is not None
    assert rr["control"]["prompt_cache_key"] == "conv-1" and rr["config"]["max_tokens"] == 16


def test_non_streamed_answers_of_each_shape_are_read(tmp_path: Path) -> None:
    with upstream(by_shape) as up, start_proxy(up.base_url, tmp_path) as proxy:
        httpx.post(proxy.base_url + "/messages", json={**ANTHROPIC_BODY, "stream": False})
        httpx.post(proxy.base_url + "/responses", json={**RESPONSES_BODY, "stream": False})
    ra, rr = read_rows(proxy.log_path)
    assert (ra["outcome"], ra["output_chars"], read_usage(ra["usage"]).cached) == ("ok", 5, 2048)
    assert (rr["outcome"], rr["output_chars"], read_usage(rr["usage"]).cached) == ("ok", 5, 16)
    assert ra["ttft_s"] is None and rr["ttft_s"] is None


def test_a_rejected_request_is_marked_and_not_measured_and_every_shape_counts_in_the_index(tmp_path: Path) -> None:
    with upstream(by_shape) as up, start_proxy(up.base_url, tmp_path) as proxy:
        httpx.post(proxy.base_url + "/chat/completions", json=CHAT_BODY)
        httpx.post(proxy.base_url + "/messages", json=ANTHROPIC_BODY)
        rejected = httpx.post(proxy.base_url + "/messages", json={**ANTHROPIC_BODY, "metadata": {"user_id": "fail"}})
        httpx.get(proxy.base_url + "/models")
        httpx.post(proxy.base_url + "/responses", json=RESPONSES_BODY)
    assert rejected.status_code == 400
    rows = read_rows(proxy.log_path)
    assert [(r["shape"], r["index"], r["measured"], r["outcome"]) for r in rows] == [
        ("chat", 1, True, "ok"), ("anthropic", 2, True, "ok"), ("anthropic", 3, False, "http-error"),
        (None, 0, False, "http-error"), ("responses", 4, True, "ok")]
    assert "Missing tool type" in rows[2]["error"] and rows[2]["status"] == 400


def test_no_key_of_any_auth_header_reaches_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROXY_SHAPES_KEY", ENV_KEY)
    with upstream(by_shape) as up:
        with start_proxy(up.base_url, tmp_path / "own") as own:
            httpx.post(own.base_url + "/messages", json={**ANTHROPIC_BODY, "system": f"echo {ANTHROPIC_KEY}"},
                       headers={"x-api-key": ANTHROPIC_KEY, "api-key": ANTHROPIC_KEY + "-azure"})
        with start_proxy(up.base_url, tmp_path / "env", api_key_env="PROXY_SHAPES_KEY") as env:
            httpx.post(env.base_url + "/messages", json=ANTHROPIC_BODY, headers={"x-api-key": "placeholder-key"})
    # the client's own key went upstream as sent; with --api-key-env the env key replaced it in the same header
    assert up.received[0][1]["x-api-key"] == ANTHROPIC_KEY
    assert up.received[1][1]["x-api-key"] == ENV_KEY and "Authorization" not in up.received[1][1]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 2
    for p in files:
        text = p.read_text()
        assert ANTHROPIC_KEY not in text and ENV_KEY not in text and "placeholder-key" not in text, p
    (row,) = read_rows(own.log_path)
    assert "echo [redacted]" in row["request_body"] and row["outcome"] == "ok"


def _start_cli(up: Scripted, out: Path, *, ignore_sigint: bool) -> tuple[subprocess.Popen[str], str]:
    def preexec() -> None:
        if ignore_sigint:  # what a script's background job (`cmd &`) inherits
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen([sys.executable, "-m", "analyzer", "proxy", "--upstream", up.base_url, "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()  # printed once the handlers are installed and it listens
    assert base_url.startswith("http://127.0.0.1:"), base_url
    return proc, base_url


@pytest.mark.parametrize(("sig", "ignore_sigint"), [(signal.SIGINT, True), (signal.SIGINT, False),
                                                    (signal.SIGTERM, True)])
def test_the_command_stops_cleanly_on_sigint_even_inherited_ignored_and_on_sigterm(
        tmp_path: Path, sig: signal.Signals, ignore_sigint: bool) -> None:
    with upstream(by_shape) as up:
        proc, base_url = _start_cli(up, tmp_path, ignore_sigint=ignore_sigint)
        try:
            assert httpx.post(base_url + "/messages", json=ANTHROPIC_BODY).status_code == 200
            assert httpx.post(base_url + "/responses", json=RESPONSES_BODY).status_code == 200
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
    assert proc.returncode == 0, err
    (log,) = tmp_path.glob("*.jsonl")
    assert f"stopped: 2 exchange(s) recorded in {log}" in err
    assert "Traceback" not in err
    assert [json.loads(line)["outcome"] for line in log.read_text().splitlines()] == ["ok", "ok"]


def test_observes_client_reads_anthropic_and_responses_streams_as_complete() -> None:
    """The client `analyze observe` sends with judges every shape's stream by the same readers as the proxy."""
    from analyzer.observe.client import headers_for, send

    with upstream(by_shape) as up, httpx.Client(timeout=30, trust_env=False) as client:
        a = send(client, up.base_url + "/messages", headers_for(None), ANTHROPIC_BODY)
        r = send(client, up.base_url + "/responses", headers_for(None), RESPONSES_BODY)
    assert (a.outcome, a.error, a.finish_reason) == ("ok", None, "end_turn")
    assert read_usage(a.usage).cached == 2048 and a.ttft_s is not None
    assert (r.outcome, r.error) == ("ok", None) and read_usage(r.usage).cached == 1920
