"""`analyze engine build|start|stop|status`: a real local llama-server for observing prompt caching."""

from __future__ import annotations

import argparse

from analyzer.cli.context import CliContext

NAME = "engine"
HELP = "build, start, stop or inspect a local llama.cpp server (prefix caching, no API key needed)"
ORDER = 72
DESCRIPTION = (
    "llama-server is built once per machine from the llama.cpp vendored in the llama-cpp-python sdist (cached "
    "by version under the analyzer cache dir, or $ANALYZER_ENGINE_CACHE), runs a tiny generated model with "
    "DeepSeek LLM's real tokenizer on 127.0.0.1 (prompt caching on; one slot of 32,768 tokens unless told "
    "otherwise), answers every request with the same few tokens (\" Ok.\" and end-of-sequence, whatever "
    "max_tokens asks), and reports usage.prompt_tokens_details.cached_tokens and timings.cache_n."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="engine_action", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="build and cache llama-server (8–30 minutes on 2 cores, once per machine)")
    build.add_argument("--force", action="store_true", help="rebuild even if a cached build exists")
    start = sub.add_parser("start", help="start llama-server on a free port and print its base URL")
    start.add_argument("--port", type=int, default=None, help="listen on this port instead of a free one")
    start.add_argument("--api-key-env", default=None, metavar="NAME",
                       help="require the API key held in environment variable NAME (the key is never written)")
    _engine_options(start)
    sub.add_parser("stop", help="stop the llama-server that `engine start` started")
    sub.add_parser("status", help="running or not; pid, URL, binary, model, version (exit 1 when not running)")
    from analyzer.cli import _global_options  # the global options also after the action (`engine start --json`)

    for p in sub.choices.values():
        _global_options(p, suppress=True)


def _engine_options(start: argparse.ArgumentParser) -> None:
    """The server options; defaults are llama.cpp's own except the context (32,768 tokens per slot) and the
    output default (see analyzer/engine/options.py for where each is read in the vendored server)."""
    from analyzer.engine.options import CACHE_RAM_MIB, CACHE_REUSE, CTX_PER_SLOT, N_PREDICT

    start.add_argument("--parallel", type=int, default=1, metavar="N",
                       help="slots: prompts the server keeps cached at once (default: 1)")
    start.add_argument("--ctx-size", type=int, default=None, metavar="N",
                       help=f"context of all slots together; each slot gets N / --parallel unless --kv-unified "
                            f"(default: {CTX_PER_SLOT:,} × --parallel)")
    start.add_argument("--kv-unified", action="store_true",
                       help="one KV pool shared by all slots, each slot may use all of it (default: off, as "
                            "llama-server does when --parallel is given)")
    start.add_argument("--cache-ram", type=int, default=CACHE_RAM_MIB, metavar="MIB", dest="cache_ram",
                       help=f"host-memory prompt cache in MiB, 0 off, -1 no limit (default: {CACHE_RAM_MIB:,}, "
                            "llama-server's own)")
    start.add_argument("--no-cache-idle-slots", action="store_false", dest="cache_idle_slots",
                       help="do not save idle slots' prompts to the host cache when a task starts (default: saved, "
                            "as llama-server does when --cache-ram is on)")
    start.add_argument("--cache-reuse", type=int, default=CACHE_REUSE, metavar="N",
                       help=f"reuse cached chunks of at least N tokens by KV shifting, 0 off (default: {CACHE_REUSE})")
    start.add_argument("--n-predict", type=int, default=N_PREDICT, metavar="N",
                       help=f"output tokens for a request that sets no max_tokens (default: {N_PREDICT}); whatever a "
                            "request asks, the generated model answers in 3 tokens")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.engine.paths import engine_cache_dir

    engine_dir = engine_cache_dir(ctx.cache_dir)
    action = args.engine_action
    if action == "build":
        return _build(ctx, engine_dir, force=args.force)
    if action == "start":
        from analyzer.engine.options import EngineOptions

        options = EngineOptions(parallel=args.parallel, ctx_size=args.ctx_size, cache_ram_mib=args.cache_ram,
                                cache_reuse=args.cache_reuse, n_predict=args.n_predict, kv_unified=args.kv_unified,
                                cache_idle_slots=args.cache_idle_slots)
        return _start(ctx, port=args.port, api_key_env=args.api_key_env, options=options)
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


def _start(ctx: CliContext, *, port: int | None, api_key_env: str | None, options) -> int:
    from analyzer.api.engine import start
    from analyzer.engine.progress import build_progress

    with build_progress(ctx) as progress:
        state = start(ctx.cache_dir, options, port=port, api_key_env=api_key_env, progress=progress, say=_say(ctx))
    if ctx.json:
        ctx.emit_json(state)
    else:
        ctx.err.print(f"engine: llama-server pid {state['pid']} ready; log {state['log']}; stop it with "
                      "`analyze engine stop`", markup=False)
        ctx.err.print(f"engine: {_options_line(state['options'], state.get('model_facts') or {})}", markup=False)
        ctx.out.print(state["base_url"], markup=False)
    return 0


def _stop(ctx: CliContext) -> int:
    from analyzer.api.engine import stop

    done = stop(ctx.cache_dir)
    state = done.state
    if state is None:
        if ctx.json:
            ctx.emit_json({"stopped": False, "reason": "no engine state"})
        else:
            ctx.out.print("engine: not running (nothing started by `analyze engine start`)", markup=False)
        return 0
    if ctx.json:
        ctx.emit_json({"stopped": done.stopped, "pid": state["pid"], "base_url": state.get("base_url")})
    elif done.stopped:
        ctx.out.print(f"engine: stopped llama-server pid {state['pid']} ({state.get('base_url')})", markup=False)
    else:
        ctx.out.print(f"engine: pid {state['pid']} had already exited; state cleared", markup=False)
    return 0


def _status(ctx: CliContext, engine_dir) -> int:
    from analyzer.api.engine import engine_status
    from analyzer.engine.paths import EnginePaths

    status = engine_status(ctx.cache_dir)
    report, state, running = status.report, status.state, status.running
    if ctx.json:
        ctx.emit_json(report)
        return 0 if running else 1
    settings = report["settings"]
    if running:
        ctx.out.print(f"engine: running ({'healthy' if report['healthy'] else 'not answering /health'})",
                      markup=False)
        for key in ("pid", "base_url", "binary", "model", "version", "api_key_required", "log"):
            ctx.out.print(f"  {key}: {report[key]}", markup=False)
        ctx.out.print(f"  source: llama-cpp-python {report['llama_cpp_python']} sdist, vendored llama.cpp "
                      f"{report['llama_cpp_commit'] or '(commit not stated)'} per its CHANGELOG", markup=False)
        if state and state.get("options"):
            ctx.out.print(f"  options: {_options_line(state['options'], state.get('model_facts') or {})}",
                          markup=False)
        if settings:
            ctx.out.print(f"  server reports: {settings.get('slots')} slot(s) of {_n(settings.get('ctx_per_slot'))} "
                          f"tokens (training context {_n(settings.get('ctx_train'))}), build {settings.get('build')}",
                          markup=False)
    else:
        ctx.out.print("engine: not running", markup=False)
        built = (f"built, llama-server {report['version'] or '(version unknown)'} at {EnginePaths(engine_dir).binary}"
                 if report["built"] else "not built yet (`analyze engine build`, 8–30 minutes once per machine)")
        ctx.out.print(f"  binary: {built}", markup=False)
        ctx.out.print(f"  `engine start` defaults: {_options_line(report['defaults'], {})}", markup=False)
    return 0 if running else 1


def _n(value) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"


def _options_line(options: dict, facts: dict) -> str:
    """One line saying what the server was told: slots, context, caches and the output cap."""
    per_slot = (options["ctx_size"] if options.get("kv_unified")
                else options["ctx_size"] // max(1, int(options.get("parallel") or 1)))
    cap = (f"every answer {facts['answer_tokens']} tokens ({facts.get('answer')!r} + end-of-sequence)"
           if facts.get("answer_tokens") else "every answer 3 tokens (the generated model's fixed reply)")
    return (f"--parallel {options['parallel']}, --ctx-size {_n(options['ctx_size'])} "
            f"({_n(per_slot)} per slot{', unified KV' if options.get('kv_unified') else ''}), "
            f"--cache-ram {_n(options['cache_ram_mib'])} MiB"
            f"{'' if options.get('cache_idle_slots', True) else ' (idle slots not saved)'}, "
            f"--cache-reuse {options['cache_reuse']}, "
            f"--n-predict {options['n_predict']} (requests without max_tokens); {cap}")
