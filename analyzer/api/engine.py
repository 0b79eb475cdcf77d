"""`engine`: the local llama-server `analyze engine start` recorded in the cache dir — start, stop, status.

The state file (`engine/state.json` under the cache dir) is what ties a later `stop`/`status` to the
process a `start` launched; these functions are the only readers and writers the command line uses.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.engine.build import Progress
    from analyzer.engine.options import EngineOptions


@dataclass(frozen=True)
class EngineStatus:
    """Whether the recorded engine runs (and answers /health), what is built, the options it was started
    with, the `start` defaults, and the settings the server itself reports (None unless it is healthy)."""

    report: dict[str, Any]  # the `engine status --json` document, keys in the order printed
    state: dict[str, Any] | None  # the state file, when one is recorded

    @property
    def running(self) -> bool:
        return bool(self.report["running"])


@dataclass(frozen=True)
class EngineStop:
    stopped: bool  # False: nothing recorded, or the recorded process had already exited
    state: dict[str, Any] | None  # what was recorded (None: nothing was)


def engine_status(cache_dir: Path) -> EngineStatus:
    """The engine recorded under `cache_dir`, and the build under its engine dir; never starts anything."""
    from analyzer.engine import build_info
    from analyzer.engine.options import DEFAULT_OPTIONS
    from analyzer.engine.paths import EnginePaths, engine_cache_dir
    from analyzer.engine.process import health
    from analyzer.engine.settings import server_settings
    from analyzer.engine.state import is_live, load_state

    engine_dir = engine_cache_dir(cache_dir)
    paths = EnginePaths(engine_dir)
    info = build_info(engine_dir)
    state = load_state(cache_dir)
    running = bool(state and is_live(state))
    healthy = None
    settings = None
    if running and state:
        code, _ = health(str(state["base_url"]).removesuffix("/v1"))
        healthy = code == 200
        if healthy:
            settings = server_settings(str(state["base_url"]), engine_dir=engine_dir)
    live = state if running and state else None
    report: dict[str, Any] = {
        "running": running,
        "healthy": healthy,
        "pid": live.get("pid") if live else None,
        "base_url": live.get("base_url") if live else None,
        "binary": str(paths.binary) if info else None,
        "built": bool(info),
        "model": live.get("model") if live else None,
        "version": info.get("llama_server_version") or None,
        "llama_cpp_python": info.get("llama_cpp_python") or paths.version,
        "llama_cpp_commit": info.get("llama_cpp_commit") or None,
        "api_key_required": bool(live.get("api_key_required")) if live else None,
        "log": live.get("log") if live else None,
        "options": live.get("options") if live else None,
        "defaults": DEFAULT_OPTIONS.as_dict(),
        "settings": settings,
    }
    return EngineStatus(report, state)


def start(cache_dir: Path, options: EngineOptions, *, port: int | None = None, api_key_env: str | None = None,
          progress: Progress | None = None, say: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build and start llama-server (unless one recorded here still runs: an error) and record it; returns the
    recorded state. The key is read from `api_key_env` and never written, only whether one is required."""
    from analyzer.engine import start_engine
    from analyzer.engine.paths import engine_cache_dir
    from analyzer.engine.state import is_live, load_state, save_state

    if port is not None and not 0 < port < 65536:
        raise AnalyzerError(f"--port {port} is not a TCP port; give 1–65535 or leave it out for a free one")
    api_key = None
    if api_key_env is not None:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise AnalyzerError(f"--api-key-env {api_key_env}: that environment variable is empty or unset; "
                                f"export {api_key_env}=<key> first")
    current = load_state(cache_dir)
    if current and is_live(current):
        raise AnalyzerError(f"an engine is already running at {current.get('base_url')} (pid {current['pid']}); "
                            "run `analyze engine stop` first")
    handle = start_engine(engine_cache_dir(cache_dir), api_key=api_key, port=port, options=options,
                          progress=progress, say=say)
    state = handle.state()
    state["api_key_env"] = api_key_env
    save_state(cache_dir, state)
    return state


def stop(cache_dir: Path) -> EngineStop:
    """Stop the process recorded under `cache_dir` — only when it is still the one started (its start time
    matches), never a process that took over its pid — and clear the record."""
    from analyzer.engine.process import launch_record_path, stop_process
    from analyzer.engine.state import clear_state, load_state

    state = load_state(cache_dir)
    if state is None:
        return EngineStop(False, None)
    stopped = stop_process(int(state["pid"]), state.get("start_ticks"))
    if state.get("log") and state.get("port"):
        launch_record_path(Path(str(state["log"])).parent, int(state["port"])).unlink(missing_ok=True)
    clear_state(cache_dir)
    return EngineStop(stopped, state)
