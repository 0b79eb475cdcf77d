"""The engine holds a real agent's request: two slots reported as two, output capped whatever max_tokens asks,
a 20k-token prompt accepted, and the settings recorded in the proxy's rows."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from enginefixtures import chat, require_engine

from analyzer.engine import EngineHandle, EngineOptions, start_engine
from analyzer.engine.settings import server_settings
from analyzer.observe.jsonl import read_rows
from analyzer.proxy import start_proxy

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def two_slot_engine() -> Iterator[EngineHandle]:
    handle = start_engine(require_engine(), options=EngineOptions(parallel=2))
    try:
        yield handle
    finally:
        handle.stop()


def final_usage(chunks: list[dict]) -> dict:
    with_usage = [c for c in chunks if c.get("usage")]
    assert with_usage, "the stream should end with a usage chunk"
    return with_usage[-1]["usage"]


def test_two_slots_are_read_back_from_the_server(two_slot_engine: EngineHandle) -> None:
    s = server_settings(two_slot_engine.base_url)
    assert s is not None
    assert s["slots"] == 2 and s["sources"]["slots"] == "/props total_slots"
    assert s["ctx_per_slot"] == 32768 and s["ctx_train"] == 131072
    assert s["ctx_size"] == 65536 and s["kv_unified"] is False
    assert s["cache_ram_mib"] == 8192 and s["cache_reuse"] == 0 and s["n_predict_default"] == 16
    assert s["n_predict_cap"] == 3 and "launch record" in s["sources"]["n_predict_cap"]


@pytest.mark.parametrize("limit", [{"max_tokens": 4000}, {}])
def test_output_ends_within_the_cap_whatever_the_request_asks(two_slot_engine: EngineHandle, limit: dict) -> None:
    body = {"model": "local", "temperature": 1.0, **limit,
            "messages": [{"role": "user", "content": f"Write a long essay, {uuid.uuid4().hex}."}]}
    status, chunks = chat(two_slot_engine.base_url, body)
    assert status == 200
    usage = final_usage(chunks)
    cap = server_settings(two_slot_engine.base_url)["n_predict_cap"]  # type: ignore[index]
    assert 0 < usage["completion_tokens"] <= cap
    finish = [c["choices"][0]["finish_reason"] for c in chunks if c.get("choices") and
              c["choices"][0].get("finish_reason")]
    assert finish == ["stop"], "the answer ends by itself (end-of-sequence), not at a length limit"


def test_a_20k_token_prompt_fits_one_slot(two_slot_engine: EngineHandle) -> None:
    text = " ".join(f"Line {i}: the harbour gate {uuid.uuid4().hex[:6]} opens at dawn." for i in range(1300))
    status, chunks = chat(two_slot_engine.base_url, {"model": "local", "max_tokens": 8,
                                                     "messages": [{"role": "system", "content": text},
                                                                  {"role": "user", "content": "Which gate?"}]},
                          timeout=600)
    assert status == 200, chunks
    assert 19000 < final_usage(chunks)["prompt_tokens"] < 32768


def test_proxy_rows_carry_the_servers_settings(two_slot_engine: EngineHandle, tmp_path: Path) -> None:
    body = {"model": "local", "stream": False, "max_tokens": 4, "messages": [{"role": "user", "content": "Hi"}]}
    with start_proxy(two_slot_engine.base_url, tmp_path) as proxy:
        response = httpx.post(proxy.base_url + "/chat/completions", json=body, timeout=120)
    assert response.status_code == 200
    (row,) = read_rows(proxy.log_path)
    settings = row["server"]["settings"]
    assert settings["slots"] == 2 and settings["ctx_per_slot"] == 32768 and settings["n_predict_cap"] == 3
    assert settings["cache_ram_mib"] == 8192
