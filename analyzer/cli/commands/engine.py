"""`analyze engine build|start|stop|status`: a real local llama-server for Round 3 observations."""

from __future__ import annotations

import argparse
import os

from analyzer.cli.context import CliContext
from analyzer.errors import AnalyzerError

NAME = "engine"
HELP = "build, start, stop or inspect a local llama.cpp server (prefix caching, no API key needed)"
ORDER = 72
DESCRIPTION = (
    "llama-server is built once per machine from the llama.cpp vendored in the llama-cpp-python sdist (cached "
    "by version under the analyzer cache dir, or $ANALYZER_ENGINE_CACHE), runs a tiny random-weight model with "
    "DeepSeek LLM's real tokenizer on 127.0.0.1, one slot, prompt caching on, and reports "
    "usage.prompt_tokens_details.cached_tokens and timings.cache_n."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="engine_action", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="build and cache llama-server (8–30 minutes on 2 cores, once per machine)")
    build.add_argument("--force", action="store_true", help="rebuild even if a cached build exists")
    start = sub.add_parser("start", help="start llama-server on a free port and print its base URL")
    start.add_argument("--port", type=int, default=None, help="listen on this port instead of a free one")
    start.add_argument("--api-key-env", default=None, metavar="NAME",
                       help="require the API key held in environment variable NAME (the key is never written)")
    sub.add_parser("stop", help="stop the llama-server that `engine start` started")
    sub.add_parser("status", help="running or not; pid, URL, binary, model, version (exit 1 when not running)")
    from analyzer.cli import _global_options  # the global options also after the action (`engine start --json`)

    for p in sub.choices.values():
        _global_options(p, suppress=True)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.engine.paths import engine_cache_dir

    engine_dir = engine_cache_dir(ctx.cache_dir)
    action = args.engine_action
    if action == "build":
        return _build(ctx, engine_dir, force=args.force)
    if action == "start":
        return _start(ctx, engine_dir, port=args.port, api_key_env=args.api_key_env)
    if action == "stop":
        return _stop(ctx)
    return _status(ctx, engine_dir)


def _say(ctx: CliContext):
    return lambda line: ctx.err.print(line, markup=False)


def _build(ctx: CliContext, engine_dir, *, force: bool) -> int:
    from analyzer.engine.build import build_engine
    from analyzer.engine.progress import build_progress

    with build_progress(ctx) as progress:
        result = build_engine(engine_dir, progress=progress, say=_say(ctx), force=force)
    if ctx.json:
        ctx.emit_json({"binary": str(result.binary), "reused": result.reused, **result.info})
        return 0
    how = "cached build reused" if result.reused else f"built in {result.info.get('build_seconds', '?')}s"
    ctx.out.print(f"llama-server {result.info.get('llama_server_version') or '(version unknown)'}: {how}",
                  markup=False)
    ctx.out.print(f"binary: {result.binary}", markup=False)
    return 0


def _start(ctx: CliContext, engine_dir, *, port: int | None, api_key_env: str | None) -> int:
    from analyzer.engine import start_engine
    from analyzer.engine.progress import build_progress
    from analyzer.engine.state import is_live, load_state, save_state

    if port is not None and not 0 < port < 65536:
        raise AnalyzerError(f"--port {port} is not a TCP port; give 1–65535 or leave it out for a free one")
    api_key = None
    if api_key_env is not None:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise AnalyzerError(f"--api-key-env {api_key_env}: that environment variable is empty or unset; "
                                f"export {api_key_env}=<key> first")
    current = load_state(ctx.cache_dir)
    if current and is_live(current):
        raise AnalyzerError(f"an engine is already running at {current.get('base_url')} (pid {current['pid']}); "
                            "run `analyze engine stop` first")
    with build_progress(ctx) as progress:
        handle = start_engine(engine_dir, api_key=api_key, port=port, progress=progress, say=_say(ctx))
    state = handle.state()
    state["api_key_env"] = api_key_env
    save_state(ctx.cache_dir, state)
    if ctx.json:
        ctx.emit_json(state)
    else:
        ctx.err.print(f"engine: llama-server pid {handle.pid} ready; log {handle.log}; stop it with "
                      "`analyze engine stop`", markup=False)
        ctx.out.print(handle.base_url, markup=False)
    return 0


def _stop(ctx: CliContext) -> int:
    from analyzer.engine.process import stop_process
    from analyzer.engine.state import clear_state, load_state

    state = load_state(ctx.cache_dir)
    if state is None:
        if ctx.json:
            ctx.emit_json({"stopped": False, "reason": "no engine state"})
        else:
            ctx.out.print("engine: not running (nothing started by `analyze engine start`)", markup=False)
        return 0
    stopped = stop_process(int(state["pid"]), state.get("start_ticks"))
    clear_state(ctx.cache_dir)
    if ctx.json:
        ctx.emit_json({"stopped": stopped, "pid": state["pid"], "base_url": state.get("base_url")})
    elif stopped:
        ctx.out.print(f"engine: stopped llama-server pid {state['pid']} ({state.get('base_url')})", markup=False)
    else:
        ctx.out.print(f"engine: pid {state['pid']} had already exited; state cleared", markup=False)
    return 0


def _status(ctx: CliContext, engine_dir) -> int:
    from analyzer.engine import build_info
    from analyzer.engine.paths import EnginePaths
    from analyzer.engine.process import health
    from analyzer.engine.state import is_live, load_state

    paths = EnginePaths(engine_dir)
    info = build_info(engine_dir)
    state = load_state(ctx.cache_dir)
    running = bool(state and is_live(state))
    healthy = None
    if running and state:
        code, _ = health(str(state["base_url"]).removesuffix("/v1"))
        healthy = code == 200
    report = {
        "running": running,
        "healthy": healthy,
        "pid": state.get("pid") if running and state else None,
        "base_url": state.get("base_url") if running and state else None,
        "binary": str(paths.binary) if info else None,
        "built": bool(info),
        "model": state.get("model") if running and state else None,
        "version": info.get("llama_server_version") or None,
        "llama_cpp_python": info.get("llama_cpp_python") or paths.version,
        "llama_cpp_commit": info.get("llama_cpp_commit") or None,
        "api_key_required": bool(state.get("api_key_required")) if running and state else None,
        "log": state.get("log") if running and state else None,
    }
    if ctx.json:
        ctx.emit_json(report)
        return 0 if running else 1
    if running:
        ctx.out.print(f"engine: running ({'healthy' if healthy else 'not answering /health'})", markup=False)
        for key in ("pid", "base_url", "binary", "model", "version", "api_key_required", "log"):
            ctx.out.print(f"  {key}: {report[key]}", markup=False)
        ctx.out.print(f"  source: llama-cpp-python {report['llama_cpp_python']} sdist, vendored llama.cpp "
                      f"{report['llama_cpp_commit'] or '(commit not stated)'} per its CHANGELOG", markup=False)
    else:
        ctx.out.print("engine: not running", markup=False)
        built = (f"built, llama-server {report['version'] or '(version unknown)'} at {paths.binary}" if info else
                 "not built yet (`analyze engine build`, 8–30 minutes once per machine)")
        ctx.out.print(f"  binary: {built}", markup=False)
    return 0 if running else 1
