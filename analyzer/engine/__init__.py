"""A real local inference engine (llama.cpp's llama-server) for observing prompt caching.

Built once per machine from the llama.cpp vendored in the llama-cpp-python sdist and run with a tiny
generated model, so prompt-cache reuse can be observed for real without an API key.
Heavy imports (gguf, numpy, filelock) happen inside the functions that need them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from analyzer.engine.build import Progress, build_engine, engine_available
from analyzer.engine.options import DEFAULT_OPTIONS, EngineOptions
from analyzer.engine.paths import EnginePaths
from analyzer.engine.process import EngineHandle

__all__ = ["EngineHandle", "EngineOptions", "build_engine", "engine_available", "start_engine"]


def start_engine(cache_dir: Path, *, api_key: str | None = None, port: int | None = None,
                 options: EngineOptions = DEFAULT_OPTIONS, progress: Progress | None = None,
                 say: Callable[[str], None] | None = None) -> EngineHandle:
    """Build llama-server if needed, generate the model if needed, start it on 127.0.0.1, wait for /health.

    The options are checked against the generated model first (a context per slot beyond its training
    context is refused, not silently capped by the server).

    The returned handle owns the process: `.stop()` ends exactly it. Nothing about the run is written to
    the state file here (the CLI does that), so tests and the CLI never overwrite each other's engine.
    """
    from analyzer.engine.process import launch
    from analyzer.engine.tinymodel import ModelSpec, ensure_model

    spec = ModelSpec()
    options.check(spec.context)
    say = say or (lambda line: None)
    paths = EnginePaths(Path(cache_dir))
    result = build_engine(paths.cache_dir, progress=progress, say=say)
    model = ensure_model(paths.cache_dir, spec, say=say)
    info = build_info(paths.cache_dir)
    facts = {"ctx_train": spec.context, "answer_tokens": spec.answer_tokens,
             "kv_bytes_per_token": spec.kv_bytes_per_token,
             "answer": "".join(spec.answer).replace("Ġ", " ")}
    handle = launch(result.binary, model, paths.logs, api_key=api_key, port=port,
                    version=str(info.get("llama_server_version", "")), options=options, model_facts=facts,
                    progress=say)
    handle.llama_cpp_commit = str(info.get("llama_cpp_commit", ""))
    return handle


def build_info(cache_dir: Path) -> dict:
    """build.json of the cached engine ({} when it is not built), with the vendored llama.cpp commit."""
    from analyzer.engine.sdist import vendored_llama_cpp_commit

    paths = EnginePaths(Path(cache_dir))
    try:
        info = json.loads(paths.build_info.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not info.get("llama_cpp_commit") and paths.sdist.is_file():  # builds made before the field existed
        info["llama_cpp_commit"] = vendored_llama_cpp_commit(paths)
    return info
