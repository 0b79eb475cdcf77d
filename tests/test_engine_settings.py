"""Reading a llama-server's real settings: /props, /v1/models, /slots and the launch record beside its log."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from analyzer.engine.paths import EnginePaths
from analyzer.engine.process import launch_record_path, process_start_ticks
from analyzer.engine.settings import KEYS, server_settings

MODEL = "/cache/engine/models/fixture-model.gguf"
PROPS = {"total_slots": 2, "build_info": "b4242-fixture", "model_path": MODEL,
         "default_generation_settings": {"n_ctx": 16384, "params": {"n_predict": -1}}}
MODELS = {"data": [{"id": "local", "meta": {"n_ctx": 16384, "n_ctx_train": 131072}}]}
SLOTS = [{"id": 0, "n_ctx": 16384}, {"id": 1, "n_ctx": 16384}]


def serve(routes: dict[str, object]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = routes.get(self.path)
            data = json.dumps(body).encode() if body is not None else b'{"error": "not found"}'
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def llama_like() -> Iterator[str]:
    yield from serve({"/props": PROPS, "/v1/models": MODELS, "/slots": SLOTS})


def write_record(engine_dir: Path, base_url: str, **changes: object) -> Path:
    port = int(base_url.rsplit(":", 1)[1].split("/")[0])
    record = {"pid": os.getpid(), "start_ticks": process_start_ticks(os.getpid()), "port": port, "model": MODEL,
              "options": {"parallel": 2, "ctx_size": 32768, "kv_unified": False, "cache_ram_mib": 512,
                          "cache_reuse": 64, "n_predict": 16, "slot_prompt_similarity": 0.1},
              "model_facts": {"ctx_train": 131072, "answer_tokens": 3, "answer": " Ok."}}
    record.update(changes)
    path = launch_record_path(EnginePaths(engine_dir).logs, port)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return path


def test_settings_come_from_the_server_and_its_launch_record(llama_like: str, tmp_path: Path) -> None:
    record = write_record(tmp_path, llama_like)
    s = server_settings(llama_like, engine_dir=tmp_path)
    assert s is not None and set(KEYS) <= set(s)
    assert (s["server"], s["slots"], s["ctx_per_slot"], s["ctx_train"], s["build"]) == \
        ("llama.cpp", 2, 16384, 131072, "b4242-fixture")
    assert (s["ctx_size"], s["kv_unified"], s["cache_ram_mib"], s["cache_reuse"]) == (32768, False, 512, 64)
    assert (s["n_predict_default"], s["n_predict_cap"], s["answer"], s["cache_prompt"]) == (16, 3, " Ok.", True)
    assert s["model"] == "fixture-model.gguf"
    assert s["sources"]["slots"] == "/props total_slots"
    assert s["sources"]["ctx_train"] == "/v1/models meta.n_ctx_train"
    assert str(record) in s["sources"]["cache_ram_mib"]


def test_a_record_of_another_process_or_model_is_not_trusted(llama_like: str, tmp_path: Path) -> None:
    for changes in ({"start_ticks": -1}, {"model": "/elsewhere/other.gguf"}):
        write_record(tmp_path, llama_like, **changes)
        s = server_settings(llama_like, engine_dir=tmp_path)
        assert s is not None and s["slots"] == 2, "what the server itself reports is still read"
        assert s["cache_ram_mib"] is None and s["n_predict_cap"] is None and "cache_ram_mib" not in s["sources"]


def test_a_server_without_props_has_no_settings(tmp_path: Path) -> None:
    for url in serve({"/v1/models": MODELS}):
        assert server_settings(url, engine_dir=tmp_path) is None


def test_slot_context_falls_back_to_slots_endpoint(tmp_path: Path) -> None:
    props = {k: v for k, v in PROPS.items() if k != "default_generation_settings"}
    for url in serve({"/props": props, "/slots": SLOTS}):
        s = server_settings(url, engine_dir=tmp_path)
        assert s is not None and s["ctx_per_slot"] == 16384 and s["sources"]["ctx_per_slot"] == "/slots n_ctx"
        assert s["ctx_train"] is None and "ctx_train" not in s["sources"]


def test_observation_rows_carry_the_settings() -> None:
    import datetime as dt

    from analyzer.observe.client import Outcome
    from analyzer.observe.runner import observation_row

    settings = {"slots": 2, "ctx_per_slot": 16384, "sources": {"slots": "/props total_slots"}}
    row = observation_row(experiment="e", factor=None, series="s", index=1, measured=True, value=None,
                          started_at=dt.datetime.now(dt.UTC), wait_s=None, since_previous_s=None,
                          outcome=Outcome(status=200, outcome="ok"), config={}, parts={},
                          server_version="llama.cpp b1", server_settings=settings)
    assert row["server"]["settings"] == settings and row["server"]["version"] == "llama.cpp b1"
