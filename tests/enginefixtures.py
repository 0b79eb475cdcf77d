"""Fixtures for tests against the real local engine (llama-server built by `analyze engine build`).

The build is shared, never per test: it lives in `$ANALYZER_ENGINE_CACHE`, else the analyzer cache dir the
CLI would use. When it is not built the fixtures skip with the command to run — unless
`ANALYZER_REQUIRE_ENGINE=1` (CI), where a missing engine is a failure.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyzer.engine import EngineHandle, engine_available, start_engine
from analyzer.engine.paths import engine_cache_dir
from analyzer.paths import default_cache_dir

REQUIRE_ENV = "ANALYZER_REQUIRE_ENGINE"
# Not a real key: a marker the tests search for in every file and output the engine path writes.
SENTINEL_API_KEY = "sk-analyzer-sentinel-7f3a9c51e2d84b06"


def shared_engine_cache() -> Path:
    return engine_cache_dir(default_cache_dir())


def require_engine() -> Path:
    """The shared engine cache dir, or skip (fail under ANALYZER_REQUIRE_ENGINE=1) when nothing is built."""
    cache = shared_engine_cache()
    if not engine_available(cache):
        reason = (f"llama-server is not built under {cache}/engine; run `analyze engine build` "
                  "(8–30 minutes, once per machine) or set ANALYZER_ENGINE_CACHE")
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
        pytest.skip(reason)
    return cache


@pytest.fixture(scope="session")
def local_engine() -> Iterator[EngineHandle]:
    """One llama-server for the session (no API key); base_url ends in /v1."""
    handle = start_engine(require_engine())
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture(scope="session")
def local_engine_with_key() -> Iterator[EngineHandle]:
    """A second llama-server that requires SENTINEL_API_KEY (`handle.api_key`)."""
    handle = start_engine(require_engine(), api_key=SENTINEL_API_KEY)
    try:
        yield handle
    finally:
        handle.stop()


def chat(base_url: str, body: dict, api_key: str | None = None, timeout: float = 120.0) -> tuple[int, list[dict]]:
    """POST /chat/completions with stream=True; (HTTP status, parsed SSE chunks) — the last holds the usage."""
    payload = {"stream": True, "stream_options": {"include_usage": True}, **body}
    req = urllib.request.Request(f"{base_url}/chat/completions", data=json.dumps(payload).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    if api_key:
        req.add_header("Authorization", f"Bearer {api_key}")
    chunks: list[dict] = []
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - loopback only
            for raw in resp:
                line = raw.decode("utf-8", "replace").strip()
                if line.startswith("data:") and line[5:].strip() != "[DONE]":
                    chunks.append(json.loads(line[5:]))
            return resp.status, chunks
    except urllib.error.HTTPError as exc:
        return exc.code, [json.loads(exc.read() or b"{}")]
