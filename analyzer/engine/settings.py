"""The settings a running llama-server really uses, read from the server rather than assumed.

Why three places: `/props` reports the slot count, the context each slot got (after llama.cpp's split and its
cap to the training context) and the build; `/v1/models` the model's training context; `/slots` each slot's
context. What no endpoint reports — `--cache-ram`, `--cache-reuse`, `--n-predict`, `--kv-unified`, the
slot-selection similarity — is read from the launch record `analyze engine start` (and the test fixtures)
leave beside the server's log, and only when that record's process is still the one serving the port and
its model is the one /props names. Every value says where it came from (`sources`); a value nobody reports
is None, never a guess.

The keys (documented for the cache model in docs/round3.md, section "engine settings"):
    server                 "llama.cpp" (the settings are only read from a server whose /props answers)
    build                  /props build_info, e.g. "b7000-abcdef0"
    model                  file name of the model /props names
    slots                  /props total_slots: how many prompts the server keeps at once
    ctx_per_slot           /props default_generation_settings.n_ctx: tokens one slot holds
    ctx_train              /v1/models meta.n_ctx_train: the model's training context (caps ctx_per_slot)
    ctx_size               --ctx-size (all slots together)
    kv_unified             --kv-unified: one KV pool shared by the slots (then ctx_per_slot == ctx_size)
    cache_prompt           --cache-prompt: reuse the slot's common prefix (a request may still turn it off)
    cache_ram_mib          --cache-ram: host-memory prompt cache size in MiB (0 off, -1 no limit)
    cache_reuse            --cache-reuse: minimum chunk reused by KV shifting (0 off)
    slot_prompt_similarity --slot-prompt-similarity: how alike a prompt must be to pick a slot by prefix
    n_predict_default      --n-predict: output tokens for a request that sets no max_tokens
    n_predict_cap          most tokens one request can generate whatever it asks (the generated model's
                           fixed answer, end-of-sequence included), None when not known
    answer                 the generated model's fixed reply text, when it is ours
    sources                key -> where the value was read ("/props total_slots", "launch record …")
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx

LOOPBACK = ("127.0.0.1", "localhost", "::1")
KEYS = ("server", "build", "model", "slots", "ctx_per_slot", "ctx_train", "ctx_size", "kv_unified", "cache_prompt",
        "cache_ram_mib", "cache_reuse", "slot_prompt_similarity", "n_predict_default", "n_predict_cap", "answer")
_LAUNCH_KEYS = {"ctx_size": "ctx_size", "kv_unified": "kv_unified", "cache_ram_mib": "cache_ram_mib",
                "cache_reuse": "cache_reuse", "slot_prompt_similarity": "slot_prompt_similarity",
                "n_predict_default": "n_predict"}


def server_root(base_url: str) -> str:
    return base_url.rstrip("/").removesuffix("/v1")


def server_settings(base_url: str, headers: dict[str, str] | None = None, *, client: httpx.Client | None = None,
                    engine_dir: Path | None = None) -> dict[str, Any] | None:
    """The server's real settings (flat keys above), or None when it is not a llama.cpp server."""
    root = server_root(base_url)
    own = client is None
    http = client or httpx.Client(timeout=5.0, trust_env=False)
    try:
        props = _get(http, f"{root}/props", headers)
        if not isinstance(props, dict) or "total_slots" not in props:
            return None
        models = _get(http, f"{root}/v1/models", headers)
        slots = _get(http, f"{root}/slots", headers)
    finally:
        if own:
            http.close()
    out: dict[str, Any] = dict.fromkeys(KEYS)
    sources: dict[str, str] = {}

    def put(key: str, value: Any, source: str) -> None:
        if value is not None:
            out[key] = value
            sources[key] = source

    put("server", "llama.cpp", "/props answered")
    put("build", props.get("build_info"), "/props build_info")
    model_path = props.get("model_path")
    put("model", Path(model_path).name if isinstance(model_path, str) and model_path else None, "/props model_path")
    put("slots", props.get("total_slots"), "/props total_slots")
    put("ctx_per_slot", (props.get("default_generation_settings") or {}).get("n_ctx"),
        "/props default_generation_settings.n_ctx")
    if isinstance(slots, list) and slots and out["ctx_per_slot"] is None:
        put("ctx_per_slot", slots[0].get("n_ctx") if isinstance(slots[0], dict) else None, "/slots n_ctx")
    put("ctx_train", _ctx_train(models), "/v1/models meta.n_ctx_train")
    record = launch_record(base_url, model_path, engine_dir)
    if record is not None:
        where, data = record
        options = data.get("options") or {}
        for key, option in _LAUNCH_KEYS.items():
            put(key, options.get(option), f"launch record {where} (options of `analyze engine start`)")
        put("cache_prompt", True, f"launch record {where} (started with --cache-prompt)")
        facts = data.get("model_facts") or {}
        put("n_predict_cap", facts.get("answer_tokens"),
            f"launch record {where}: the generated model always answers {facts.get('answer')!r} and then ends")
        put("answer", facts.get("answer"), f"launch record {where}")
    out["sources"] = sources
    return out


def launch_record(base_url: str, model_path: Any, engine_dir: Path | None = None) -> tuple[str, dict] | None:
    """(path, record) of the engine started on this loopback port, if it is still that process and model."""
    from analyzer.engine.paths import EnginePaths, engine_cache_dir
    from analyzer.engine.process import launch_record_path, process_start_ticks
    from analyzer.paths import default_cache_dir

    parsed = urlparse(base_url)
    if parsed.hostname not in LOOPBACK or parsed.port is None:
        return None
    logs = EnginePaths(engine_dir if engine_dir is not None else engine_cache_dir(default_cache_dir())).logs
    path = launch_record_path(logs, parsed.port)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
        return None
    ticks = process_start_ticks(data["pid"])
    if ticks is None or (data.get("start_ticks") is not None and ticks != data["start_ticks"]):
        return None  # that server has exited; whoever answers on the port now is another
    if isinstance(model_path, str) and model_path and data.get("model") != model_path:
        return None
    return str(path), data


def _ctx_train(models: Any) -> int | None:
    if not isinstance(models, dict):
        return None
    for entry in models.get("data") or []:
        meta = entry.get("meta") if isinstance(entry, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("n_ctx_train"), int):
            return int(meta["n_ctx_train"])
    return None


def _get(client: httpx.Client, url: str, headers: dict[str, str] | None) -> Any:
    try:
        response = client.get(url, headers=headers or {}, timeout=5.0)
        if response.status_code != 200:
            return None
        return response.json()
    except (httpx.HTTPError, ValueError):
        return None
