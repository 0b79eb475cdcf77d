"""Replay: re-send a recorded log (as recorded, or rewritten by a fix) to a real endpoint — the local engine by
default — in the recorded order and spacing (or compressed, and said), recorded like the proxy records
(schema `analyzer.observe/1`, the request body verbatim), so that what the what-if predicts is *measured*.

Why a separate pass per version: a replay warms the endpoint's cache, so comparing a log as recorded with its
fixed version needs each on a fresh cache (a freshly started engine); `compare` then reads both replay logs.
"""

from __future__ import annotations

import datetime as _dt
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from analyzer.cost.fixes import Fix, apply_fixes
from analyzer.errors import AnalyzerError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
EXPERIMENT = "replay"


@dataclass(frozen=True)
class Spacing:
    """`recorded`: the recorded gaps; `compressed`: none; `max_gap_s` caps each recorded gap (said)."""

    mode: str = "recorded"
    max_gap_s: float | None = None

    def describe(self) -> str:
        if self.mode == "compressed":
            return "compressed: each request sent as soon as the previous one finished"
        if self.max_gap_s is not None:
            return f"the recorded gaps, each capped at {self.max_gap_s:g} s"
        return "the recorded gaps"


@dataclass
class ReplayResult:
    log: Path
    rows: list[dict[str, Any]]
    spacing: str
    fixes: list[str]
    failed: int


def _start(row: dict[str, Any]) -> float | None:
    text = row.get("started_at")
    if not isinstance(text, str):
        return None
    try:
        return _dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


PROPS_SETTINGS = {"total_slots": "total_slots"}   # what the cache model reads of llama-server's /props


def endpoint_settings(client: Any, base_url: str, headers: dict[str, str]) -> dict[str, Any]:
    """The cache settings llama-server reports at /props (its slot count), recorded in every replayed row's
    `server` block so the cache model need not assume them; {} from any other server."""
    import httpx

    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        response = client.get(f"{root}/props", headers=headers, timeout=5.0)
        data = response.json() if response.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {ours: data[theirs] for ours, theirs in PROPS_SETTINGS.items() if isinstance(data.get(theirs), int)}


def replay(rows: list[dict[str, Any]], base_url: str, out_dir: Path, *, fixes: list[Fix] | None = None,
           spacing: Spacing = Spacing(), api_key: str | None = None, timeout_s: float = 300.0,
           sleep: Callable[[float], None] = time.sleep) -> ReplayResult:
    """Send every recorded chat request of `rows` to `base_url` (…/v1) and log the answers as the proxy does."""
    import httpx

    from analyzer.observe.client import headers_for, send
    from analyzer.observe.jsonl import RowWriter, log_path
    from analyzer.observe.runner import observation_row, server_version
    from analyzer.requests import parse_request, request_parts

    todo = []
    for n, row in enumerate(rows, 1):
        text = row.get("request_body")
        if not isinstance(text, str):
            continue
        try:
            body = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(body, dict) and isinstance(body.get("messages"), list):
            todo.append((n, row, body))
    if not todo:
        raise AnalyzerError("no row carries a chat request body (`request_body`) to replay; record the application "
                            "through `analyze proxy`")
    url = base_url.rstrip("/") + "/chat/completions"
    headers = headers_for(api_key)
    fixes = fixes or []
    path = log_path(out_dir, EXPERIMENT)
    failed = 0
    written: list[dict[str, Any]] = []
    trust_env = urlparse(base_url).hostname not in LOOPBACK
    with RowWriter(path, [api_key] if api_key else []) as writer, \
            httpx.Client(timeout=httpx.Timeout(timeout_s, connect=10.0), trust_env=trust_env) as client:
        version = server_version(client, base_url, headers)
        settings = endpoint_settings(client, base_url, headers)
        previous_recorded: float | None = None
        previous_start: float | None = None
        for index, (n, row, body) in enumerate(todo):
            recorded = _start(row)
            wait = 0.0
            if spacing.mode == "recorded" and previous_recorded is not None and recorded is not None:
                wait = max(0.0, recorded - previous_recorded)
                if spacing.max_gap_s is not None:
                    wait = min(wait, spacing.max_gap_s)
                if previous_start is not None:   # the gap runs from the previous start, as recorded
                    wait = max(0.0, wait - (time.monotonic() - previous_start))
            if wait > 0:
                sleep(wait)
            previous_recorded = recorded
            sent, changed = apply_fixes(body, fixes) if fixes else (body, [])
            sent = {**sent, "stream": True, "stream_options": {"include_usage": True}}
            started_at = _dt.datetime.now(_dt.UTC)
            start = time.monotonic()
            outcome = send(client, url, headers, sent)
            gap = None if previous_start is None else round(start - previous_start, 6)
            previous_start = start
            request = parse_request(sent, path="/v1/chat/completions")
            config: dict[str, Any] = {"endpoint": base_url, "url": url, "model": sent.get("model"), "max_tokens":
                      sent.get("max_tokens"), "stream": True, "temperature": sent.get("temperature"),
                      "api_key_env": None, "overrides": {}, "experiment_file": None}
            out = observation_row(experiment=EXPERIMENT, factor="fix" if fixes else None,
                                  series=str(row.get("series") or "replay"), index=index, measured=True,
                                  value="fixed" if fixes else "as recorded", started_at=started_at, wait_s=wait,
                                  since_previous_s=gap, outcome=outcome, config=config,
                                  parts=request_parts(request) if request is not None else {},
                                  server_version=version)
            out["server"] = {**settings, **(out.get("server") or {})}
            out.update({"source": "replay", "replayed_row": n, "fix": changed, "shape": "chat",
                        "request_path": "/v1/chat/completions",
                        "request_body": json.dumps(sent, ensure_ascii=False)})
            writer.write(out)
            written.append(out)
            failed += 0 if outcome.ok else 1
    return ReplayResult(path, written, spacing.describe(), [f.describe() for f in fixes], failed)


def measured_cached(rows: list[dict[str, Any]]) -> int:
    """Cached tokens the endpoint reported over a replay log (the shared usage reader)."""
    from analyzer.cost.buckets import row_buckets

    total = 0
    for row in rows:
        b = row_buckets(row)
        total += b.cache_read if b is not None else 0
    return total


def within(predicted: int, measured: int, *, share: float = 0.05, tokens: int = 16) -> bool:
    """The what-if's acceptance: within 5% of what replay measured, or 16 tokens."""
    return abs(predicted - measured) <= max(tokens, share * abs(measured))
