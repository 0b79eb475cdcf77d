"""`analyze proxy` in front of the real local engine (llama-server): streams pass unchanged, usage is recorded
verbatim, and a key the engine requires reaches the engine but no file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import pytest
from enginefixtures import SENTINEL_API_KEY

from analyzer.observe.jsonl import read_rows
from analyzer.proxy import start_proxy

pytestmark = pytest.mark.engine

SYSTEM = "You are a harbour clerk. Answer in one short sentence.\n\nGate rules: " + "berth four closes at dusk. " * 40
BODY = {"model": "local", "stream": True, "stream_options": {"include_usage": True}, "max_tokens": 12,
        "temperature": 0, "seed": 7, "messages": [{"role": "system", "content": SYSTEM},
                                                  {"role": "user", "content": "When does berth four close?"}]}


def _stream(base_url: str, body: dict, headers: dict | None = None) -> tuple[int, bytes]:
    with httpx.stream("POST", base_url + "/chat/completions", json=body, headers=headers, timeout=120) as r:
        return r.status_code, b"".join(r.iter_raw())


def _events(data: bytes) -> list[dict]:
    lines = [line[5:].strip() for line in data.decode().splitlines() if line.startswith("data:")]
    assert lines[-1] == "[DONE]"
    return [json.loads(x) for x in lines[:-1]]


def _without_volatile(event: dict) -> dict:
    """An SSE event minus what differs between two runs of the same request (ids, clocks, timings, cache)."""
    return {k: v for k, v in event.items() if k not in ("id", "created", "timings", "usage")}


def test_the_stream_through_the_proxy_is_the_engines_stream(local_engine, tmp_path: Path) -> None:
    _stream(local_engine.base_url, BODY)  # the slot now holds this prompt: both measured requests hit alike
    status_direct, direct = _stream(local_engine.base_url, BODY)
    with start_proxy(local_engine.base_url, tmp_path) as proxy:
        status, through = _stream(proxy.base_url, BODY)
    assert status == status_direct == 200
    (row,) = read_rows(proxy.log_path)
    # what the client got is exactly what the proxy read from the engine (digest of the relayed bytes)
    assert row["response"]["sha256"] == hashlib.sha256(through).hexdigest()
    assert row["response"]["bytes"] == len(through)
    events_direct, events_through = _events(direct), _events(through)
    # the same request answered twice by the same greedy model: equal event for event, up to ids and clocks
    assert [_without_volatile(e) for e in events_through] == [_without_volatile(e) for e in events_direct]
    assert len(events_through) > 3
    last = events_through[-1]
    assert row["usage"] == last["usage"] and row["timings"] == last["timings"]  # raw usage verbatim
    assert row["usage"]["prompt_tokens_details"]["cached_tokens"] == row["timings"]["cache_n"] > 0
    assert row["server"]["version"].startswith("llama.cpp ")
    assert json.loads(row["request_body"]) == BODY


def test_the_engines_key_reaches_the_engine_and_no_file(local_engine_with_key, tmp_path: Path, monkeypatch,
                                                         capsys) -> None:
    monkeypatch.setenv("PROXY_ENGINE_KEY", SENTINEL_API_KEY)
    with start_proxy(local_engine_with_key.base_url, tmp_path / "keyed", api_key_env="PROXY_ENGINE_KEY") as proxy:
        status, data = _stream(proxy.base_url, BODY, headers={"Authorization": "Bearer placeholder"})
    with start_proxy(local_engine_with_key.base_url, tmp_path / "bare") as bare:
        refused, _ = _stream(bare.base_url, BODY, headers={"Authorization": f"Bearer {SENTINEL_API_KEY}x"})
    assert status == 200 and _events(data)[-1]["usage"]["prompt_tokens"] > 100
    assert refused == 401  # the engine checks the key: it was the proxy's key that let the first one in
    rows = read_rows(proxy.log_path) + read_rows(bare.log_path)
    assert [r["status"] for r in rows] == [200, 401]
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert SENTINEL_API_KEY not in p.read_text(), p
    cap = capsys.readouterr()
    assert SENTINEL_API_KEY not in cap.out + cap.err
