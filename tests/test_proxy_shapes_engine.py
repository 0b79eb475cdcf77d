"""The proxy in front of the real local engine (llama-server) with Anthropic Messages and Responses requests,
streamed and not: every row is a complete `ok` exchange with the server's usage, its cached count readable, TTFT
for streams, and the second identical request reports the cache hit the first one left behind."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest

from analyzer.observe.jsonl import read_rows
from analyzer.proxy import start_proxy
from analyzer.requests import read_usage

pytestmark = pytest.mark.engine


def test_anthropic_and_responses_requests_through_the_proxy_are_complete_rows(local_engine, tmp_path: Path) -> None:
    marker = uuid.uuid4().hex[:8]
    system = f"Session {marker}. You are the harbour clerk. " + "Berths close at dusk. " * 20
    anthropic = {"model": "local", "max_tokens": 3, "temperature": 0, "system": system,
                 "messages": [{"role": "user", "content": "When does berth four close?"}]}
    responses = {"model": "local", "max_output_tokens": 3, "temperature": 0, "instructions": system + "(r)",
                 "input": "When does berth four close?"}
    with start_proxy(local_engine.base_url, tmp_path) as proxy, httpx.Client(timeout=300, trust_env=False) as c:
        for stream in (True, False):
            for path, body in (("/messages", anthropic), ("/responses", responses)):
                answer = c.post(proxy.base_url + path, json={**body, "stream": stream})
                assert answer.status_code == 200, answer.text
    rows = read_rows(proxy.log_path)
    assert [(r["shape"], r["config"]["stream"]) for r in rows] == [
        ("anthropic", True), ("responses", True), ("anthropic", False), ("responses", False)]
    for row in rows:
        assert (row["outcome"], row["error"], row["measured"]) == ("ok", None, True), row
        usage = read_usage(row["usage"], row["timings"])
        assert usage.prompt is not None and usage.prompt > 50 and usage.cached is not None
        assert (row["ttft_s"] is not None) == row["config"]["stream"]
    # the same prompt again, one slot: the second of each shape reuses what the first left in the cache
    assert read_usage(rows[2]["usage"]).cached > 0 and read_usage(rows[3]["usage"]).cached > 0
