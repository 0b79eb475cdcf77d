"""Small experiment files for `analyze observe` tests (our own text, nothing from upstream)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import tomli_w

SYSTEM = "You are a careful assistant for a small test harbour. " * 40
TOOLS = [
    {"type": "function", "function": {"name": name, "description": f"Look up {name}.",
                                      "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
    for name in ("alpha", "beta", "gamma")
]


def experiment(factor: str = "system-prefix", **sections: Any) -> dict[str, Any]:
    """A valid experiment dict; `sections` replace or extend tables (e.g. run={"requests": 2})."""
    data: dict[str, Any] = {
        "name": f"test-{factor}",
        "question": "Does the test factor change cached tokens?",
        "endpoint": {"base_url": "http://127.0.0.1:9/v1", "model": "local"},
        "run": {"requests": 3, "interval_s": 0.0, "max_tokens": 4},
        "request": {"system": SYSTEM, "tools": copy.deepcopy(TOOLS),
                 "messages": [{"role": "user", "content": "What is the tide at noon?"}]},
        "vary": {"factor": factor},
    }
    if factor in ("system-prefix", "system-suffix"):
        data["vary"]["values"] = ["Time 10:00:01.", "Time 10:00:02.", "Time 10:00:03."]
    elif factor == "tools-order":
        data["vary"]["values"] = [["alpha", "beta", "gamma"], ["gamma", "beta", "alpha"], ["beta", "gamma", "alpha"]]
    elif factor == "tool-added":
        data["vary"]["tool"] = {"type": "function", "function": {"name": "delta", "parameters": {"type": "object"}}}
    elif factor == "history-compacted":
        data["request"]["messages"] = [{"role": "user", "content": "First question about berths."},
                                    {"role": "assistant", "content": "First answer about berths."},
                                    {"role": "user", "content": "What is the tide at noon?"}]
        data["vary"]["values"] = ["", "They talked about berths.", "Berths were discussed."]
    elif factor == "interval":
        data["vary"]["values"] = [0.0, 0.05, 0.1]
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
    return data


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path
