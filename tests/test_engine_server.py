"""Against the real llama-server (built once by `analyze engine build`): prefix caching is visible in the
raw usage, start/status/stop control exactly one process, and an API key is never written anywhere."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from enginefixtures import SENTINEL_API_KEY, chat, require_engine

from analyzer.cli import main
from analyzer.engine.process import health, process_start_ticks
from analyzer.engine.state import state_path

pytestmark = pytest.mark.engine


def system_prompt(nonce: str, sentences: int = 60) -> str:
    """About 1k tokens of ordinary English; the nonce first, so no earlier test's cache can match it."""
    body = " ".join(f"Rule {i}: keep the answer short, cite the file and line, and say when unsure."
                    for i in range(sentences))
    return f"Session {nonce}. {body}"


def usage_of(chunks: list[dict]) -> dict:
    with_usage = [c for c in chunks if c.get("usage")]
    assert with_usage, "stream_options.include_usage should give a final chunk with usage"
    return with_usage[-1]


def test_same_system_prompt_is_served_from_the_prefix_cache(local_engine) -> None:
    body = {"model": "local", "max_tokens": 4, "temperature": 0,
            "messages": [{"role": "system", "content": system_prompt(uuid.uuid4().hex)},
                         {"role": "user", "content": "Which rule comes first?"}]}
    status1, first = chat(local_engine.base_url, body)
    status2, second = chat(local_engine.base_url, body)
    assert status1 == status2 == 200
    u1, u2 = usage_of(first), usage_of(second)
    prompt = u2["usage"]["prompt_tokens"]
    assert prompt > 800, "the system prompt should be about 1k tokens with DeepSeek LLM's tokenizer"
    assert u1["usage"]["prompt_tokens"] == prompt
    cold = u1["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0)
    warm = u2["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cold < prompt * 0.1, "a fresh nonce cannot be in the cache"
    assert warm >= prompt * 0.9, "the repeated prompt should be served from the slot's prefix cache"
    assert u2["timings"]["cache_n"] == warm


def test_changed_first_line_is_a_cache_miss(local_engine) -> None:
    nonce = uuid.uuid4().hex
    base = {"model": "local", "max_tokens": 2, "messages": [{"role": "user", "content": "Hi"}]}
    chat(local_engine.base_url, {**base, "messages": [{"role": "system", "content": system_prompt(nonce)},
                                                    *base["messages"]]})
    status, chunks = chat(local_engine.base_url, {**base, "messages": [
        {"role": "system", "content": "Current time 10:00:02. " + system_prompt(nonce)}, *base["messages"]]})
    assert status == 200
    usage = usage_of(chunks)["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] < usage["prompt_tokens"] * 0.1


def test_reordered_tools_reuse_only_what_comes_before_them(local_engine) -> None:
    """The model's chat template renders system, then tools, then messages: a tools-order change keeps the
    system prompt cached and recomputes from the tools on (what `observe` reports as the tools part)."""
    tools = [{"type": "function", "function": {"name": f"tool_{n}", "description": f"Does {n}. " * 30,
                                                "parameters": {"type": "object", "properties": {}}}}
             for n in ("alpha", "beta", "gamma")]
    messages = [{"role": "system", "content": system_prompt(uuid.uuid4().hex)}, {"role": "user", "content": "Hi"}]
    only_system = usage_of(chat(local_engine.base_url, {"model": "local", "max_tokens": 2,
                                                        "messages": messages[:1]})[1])["usage"]["prompt_tokens"]
    chat(local_engine.base_url, {"model": "local", "max_tokens": 2, "messages": messages, "tools": tools})
    status, chunks = chat(local_engine.base_url, {"model": "local", "max_tokens": 2, "messages": messages,
                                                  "tools": tools[::-1]})
    assert status == 200
    usage = usage_of(chunks)["usage"]
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    assert only_system * 0.9 < cached < usage["prompt_tokens"] * 0.95


def test_cached_build_is_reused_without_a_toolchain(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from analyzer.engine.build import build_engine

    shared = require_engine()
    binary = shared / "engine" / "llama-server-0.3.36" / "bin" / "llama-server"
    before = binary.stat()
    monkeypatch.setenv("PATH", str(tmp_path))  # no cmake, no compiler: only the cache can answer
    result = build_engine(shared, say=lambda s: None)
    assert result.reused and result.binary == binary
    assert binary.stat().st_mtime_ns == before.st_mtime_ns and result.info["llama_cpp_python"] == "0.3.36"


def test_engine_with_key_refuses_requests_without_it(local_engine_with_key) -> None:
    handle = local_engine_with_key
    assert handle.api_key == SENTINEL_API_KEY
    assert SENTINEL_API_KEY not in repr(handle)
    body = {"model": "local", "max_tokens": 2, "messages": [{"role": "user", "content": "Hi"}]}
    assert chat(handle.base_url, body)[0] == 401
    assert chat(handle.base_url, body, api_key="sk-wrong")[0] == 401
    assert chat(handle.base_url, body, api_key=handle.api_key)[0] == 200
    cmdline = Path(f"/proc/{handle.pid}/cmdline").read_bytes()
    assert SENTINEL_API_KEY.encode() not in cmdline, "the key goes through the environment, not argv"
    assert SENTINEL_API_KEY not in handle.log.read_text(errors="replace")
    assert SENTINEL_API_KEY not in json.dumps(handle.state())


def files_containing(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_cli_start_status_stop_one_process_and_no_key_on_disk(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    shared = require_engine()
    monkeypatch.setenv("ANALYZER_ENGINE_CACHE", str(shared))
    monkeypatch.setenv("ANALYZER_TEST_ENGINE_KEY", SENTINEL_API_KEY)
    state_dir = tmp_path / "state"
    cli = ["--cache-dir", str(state_dir), "engine"]
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    pid = None
    try:
        assert main([*cli, "start", "--api-key-env", "ANALYZER_TEST_ENGINE_KEY"]) == 0
        out, err = capsys.readouterr()
        url = out.strip().splitlines()[-1]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert health(url.removesuffix("/v1"))[0] == 200

        assert main([*cli, "status", "--json"]) == 0
        status = json.loads(capsys.readouterr().out)
        pid = status["pid"]
        assert status["running"] and status["healthy"] and status["base_url"] == url
        assert status["api_key_required"] is True and Path(status["binary"]).is_file() and status["version"]
        assert main([*cli, "start"]) == 3, "a second start while one runs is refused"
        again = capsys.readouterr()
        assert "already running" in again.err

        body = {"model": "local", "max_tokens": 2, "messages": [{"role": "user", "content": "Hi"}]}
        assert chat(url, body)[0] == 401 and chat(url, body, api_key=SENTINEL_API_KEY)[0] == 200

        assert main([*cli, "stop"]) == 0
        stopped = capsys.readouterr()
        assert f"pid {pid}" in stopped.out
        assert process_start_ticks(pid) is None, "the started llama-server has ended"
        assert bystander.poll() is None, "stop ends exactly that process"
        assert not state_path(state_dir).exists()
        assert main([*cli, "status"]) == 1

        seen = out + err + again.out + again.err + stopped.out + stopped.err
        assert SENTINEL_API_KEY not in seen
        assert files_containing(state_dir, SENTINEL_API_KEY) == []
        log = Path(status["log"])
        assert log.is_file() and SENTINEL_API_KEY not in log.read_text(errors="replace")
    finally:
        if pid is not None and process_start_ticks(pid) is not None:
            main([*cli, "stop"])
        bystander.kill()
        bystander.wait()
