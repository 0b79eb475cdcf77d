"""The CLI's record of the engine it started: `<cache>/engine/state.json`, written atomically, never the key."""

from __future__ import annotations

import json
from pathlib import Path

from analyzer.atomic import write_text_atomic
from analyzer.engine.process import process_start_ticks


def state_path(cache_dir: Path) -> Path:
    return Path(cache_dir) / "engine" / "state.json"


def save_state(cache_dir: Path, state: dict) -> Path:
    if "api_key" in state:
        raise ValueError("the engine state must never hold an API key")
    path = state_path(cache_dir)
    write_text_atomic(path, json.dumps(state, indent=2) + "\n")
    return path


def load_state(cache_dir: Path) -> dict | None:
    """The saved state, or None when there is none or it is unreadable (treated as 'not running')."""
    try:
        data = json.loads(state_path(cache_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("pid"), int) else None


def is_live(state: dict) -> bool:
    """The recorded pid still runs and is the same process (same start time)."""
    ticks = process_start_ticks(int(state["pid"]))
    return ticks is not None and (state.get("start_ticks") is None or ticks == state.get("start_ticks"))


def running_base_url(cache_dir: Path) -> str | None:
    """The base URL of the engine `analyze engine start` started in this cache dir, if it still runs."""
    state = load_state(cache_dir)
    if state is None or not is_live(state):
        return None
    url = state.get("base_url")
    return url if isinstance(url, str) and url else None


def clear_state(cache_dir: Path) -> None:
    state_path(cache_dir).unlink(missing_ok=True)
