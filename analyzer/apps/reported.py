"""What the app itself says it used: the third witness beside the server's raw usage and the replayed ledger.

Each reader takes what one app writes and returns one entry per model call, in the order the calls were made,
with the app's own field names kept (`input`, `cacheRead` for Pi; `inputTokens`, `cacheReadTokens` for dsh) plus
`prompt`/`cached`/`output` normalised the way that app means them, and where the entry was read from.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

Reader = Callable[[Path, Path, float], list[dict[str, Any]]]


def _read_text(path: Path) -> str:
    """A log's text; dsh compresses its session logs with zstd (`session.jsonl.zstd`)."""
    try:
        if path.suffix == ".zstd":
            import zstandard

            with path.open("rb") as fh:
                return zstandard.ZstdDecompressor().stream_reader(fh).read().decode("utf-8", "replace")
        return path.read_text(encoding="utf-8", errors="replace")
    except (OSError, ImportError, ValueError) as exc:  # zstandard raises ZstdError (a ValueError) on bad frames
        raise OSError(f"cannot read {path}: {exc}") from exc


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        text = _read_text(path)
    except OSError:
        return
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line.startswith("{"):
            try:
                yield n, json.loads(line)
            except ValueError:
                continue


def pi_json_events(stdout: Path, _home: Path, _since: float) -> list[dict[str, Any]]:
    """Pi `--mode json`: each assistant `message_end` carries `usage` {input, output, cacheRead, cacheWrite}.

    Pi counts `input` as the prompt tokens *not* read from the cache (its OpenAI-compatible parser subtracts
    cached_tokens), so the prompt it saw is input + cacheRead + cacheWrite.
    """
    out: list[dict[str, Any]] = []
    for n, event in _json_lines(stdout):
        if not isinstance(event, dict) or event.get("type") != "message_end":
            continue
        message = event.get("message") or {}
        usage = message.get("usage") if isinstance(message, dict) else None
        if message.get("role") != "assistant" or not isinstance(usage, dict):
            continue
        raw = {k: usage.get(k) for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")}
        prompt = sum(int(usage.get(k) or 0) for k in ("input", "cacheRead", "cacheWrite"))
        out.append({"source": f"{stdout.name}:{n}", "fields": raw, "prompt": prompt,
                    "cached": int(usage.get("cacheRead") or 0), "output": int(usage.get("output") or 0),
                    "response_id": message.get("responseId"), "stop_reason": message.get("stopReason"),
                    "error": message.get("errorMessage")})
    return out


def dsh_session_log(_stdout: Path, home: Path, since: float) -> list[dict[str, Any]]:
    """dsh's session logs under its home: each `assistant/message` event carries the call's TokenUsage.

    dsh's `inputTokens` counts the prompt tokens *not* served from the cache and `cacheReadTokens` the ones that
    were (observed: 7,758 prompt tokens with 7,757 cached came back as inputTokens 1, cacheReadTokens 7,757), so
    the prompt it saw is their sum. Only logs written during this turn are read; the usage chunks streamed before
    the message repeat the same figures and are not counted again.
    """
    out: list[dict[str, Any]] = []
    logs = sorted((p for p in home.rglob("*.jsonl*") if p.name.endswith((".jsonl", ".jsonl.zstd"))
                   and p.stat().st_mtime >= since - 1), key=lambda p: p.stat().st_mtime)
    for path in logs:
        for n, event in _json_lines(path):
            data = event.get("data") if isinstance(event, dict) and event.get("type") == "assistant/message" else None
            if not isinstance(data, dict):
                continue
            usage = data.get("usage")
            if not isinstance(usage, dict) or "inputTokens" not in usage:
                continue
            raw = {k: usage.get(k) for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens",
                                             "reasoningTokens")}
            out.append({"source": f"{path.relative_to(home)}:{n}", "fields": raw,
                        "prompt": sum(int(usage.get(k) or 0) for k in ("inputTokens", "cacheReadTokens",
                                                                         "cacheWriteTokens")),
                        "cached": int(usage.get("cacheReadTokens") or 0),
                        "output": int(usage.get("outputTokens") or 0), "turn": data.get("turn"),
                        "step": data.get("step")})
    return out


READERS: dict[str, Reader] = {"pi-json-events": pi_json_events, "dsh-session-log": dsh_session_log}


def read_reported(kind: str, stdout: Path, home: Path, *, since: float) -> list[dict[str, Any]]:
    reader = READERS.get(kind)
    if reader is None:
        raise ValueError(f"unknown reported-usage reader {kind!r}; known: {', '.join(READERS)}")
    return reader(stdout, home, since)
