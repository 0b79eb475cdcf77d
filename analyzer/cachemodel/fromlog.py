"""Log rows → the cache model's arrivals: which rows are requests of a known shape, which the server answered
(only those enter the cache state), and each one's tokens, time, breakpoints and server settings.

Why here: `prefix` and `cost` must feed the cache model the same way — one definition of "a request the cache
saw" — so both build their arrivals with `arrival()`. Rendering stays with the caller: pass what it rendered
(anything with `tokens` and `block_ends`: token offsets where each content block ends).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from analyzer.cachemodel.model import Arrival, Marker
from analyzer.requests import Request, parse_request, read_usage

SERVER_ID_KEYS = ("instance", "pid", "started_at", "start_time")   # what tells one server process from the next


class RenderedPrompt(Protocol):
    @property
    def tokens(self) -> Sequence[int]: ...

    @property
    def block_ends(self) -> tuple[int, ...]: ...


@dataclass
class LoggedRequest:
    row: int
    data: dict[str, Any]
    body: dict[str, Any]
    request: Request
    ok: bool
    error: str | None


def logged_requests(rows: Iterable[dict[str, Any]]) -> tuple[list[LoggedRequest], list[str]]:
    """Every row that carries a request body of a known shape, and one line for each row that does not."""
    out, skipped = [], []
    for n, row in enumerate(rows, 1):
        text = row.get("request_body")
        body = None
        if isinstance(text, str):
            try:
                body = json.loads(text)
            except json.JSONDecodeError:
                body = None
        request = parse_request(body, path=row.get("client_path")) if isinstance(body, dict) else None
        if request is None or body is None:
            skipped.append(f"row {n}: no request body of a known shape")
            continue
        status = row.get("status")
        # the HTTP status decides: a 2xx means the server processed the prompt, whatever the client made of the
        # stream (a proxy that could not read a shape's stream marked complete 200s protocol-error/unmeasured);
        # without a status, the row's own verdict
        if isinstance(status, int):
            ok = 200 <= status < 300
        else:
            ok = row.get("outcome") in (None, "ok") and row.get("measured") is not False
        error = None
        if not ok:
            text = str(row.get("error") or ("not a measured request" if row.get("measured") is False else
                                             "no error text recorded"))
            head = f"HTTP {status}" if isinstance(status, int) else str(row.get("outcome") or "no response")
            error = text if text.startswith(head) else f"{head}: {text}"
        out.append(LoggedRequest(n, row, body, request, ok, error))
    return out, skipped


def arrival(e: LoggedRequest, rendered: RenderedPrompt | None, given: dict[str, Any] | None = None,
            generated: tuple[int, ...] | None = None) -> Arrival:
    """The arrival of one logged request: not ok (skipped with its error) when the server did not answer it
    with 2xx; `given` settings win over the row's `server` block; `generated`: the answer's token ids when
    known (`answer_text` says when the row's server recorded a fixed answer)."""
    given = given or {}
    row = e.data
    raw_server = row.get("server")
    server: dict[str, Any] = raw_server if isinstance(raw_server, dict) else {}
    if rendered is None or not e.ok:
        return Arrival(e.row, (), ok=False, error=e.error)
    ends = rendered.block_ends
    flat = [(si, bi) for si, seg in enumerate(e.request.segments) for bi in range(len(seg.blocks))]
    markers = []
    for bp in e.request.control.breakpoints:
        if bp.block is None:
            idx = max((i for i, (si, _b) in enumerate(flat) if si == bp.segment), default=None)
        else:
            idx = next((i for i, fb in enumerate(flat) if fb == (bp.segment, bp.block)), None)
        if idx is not None and idx < len(ends):
            markers.append(Marker(ends[idx], bp.ttl))
    usage = read_usage(row.get("usage"), row.get("timings"))
    server_id = server_identity(row)
    return Arrival(e.row, tuple(rendered.tokens), at=_seconds(row.get("started_at")),
                   duration=row.get("total_s") if isinstance(row.get("total_s"), int | float) else None,
                   output_tokens=usage.output, model=e.request.model, cache_key=e.request.control.prompt_cache_key,
                   markers=tuple(markers), automatic=e.request.control.automatic, block_ends=ends,
                   settings={**server, **given}, server_id=server_id, generated=generated,
                   first_token=row.get("ttft_s") if isinstance(row.get("ttft_s"), int | float) else None,
                   cache_prompt=e.body.get("cache_prompt") is not False,
                   slot_id=slot if isinstance(slot := e.body.get("id_slot"), int) and slot >= 0 else None)


def _seconds(stamp: Any) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def answer_text(row: dict[str, Any]) -> str | None:
    """The answer the server always gives, when its settings record one (the engine's generated model)."""
    server = row.get("server")
    settings = server.get("settings") if isinstance(server, dict) else None
    answer = settings.get("answer") if isinstance(settings, dict) else None
    return answer if isinstance(answer, str) and answer else None


def server_identity(row: dict[str, Any]) -> str | None:
    """What tells this row's server process from another: a process id or start time when the row has one,
    else the endpoint with the model and build the server reported (rows of logs joined together, or of a
    server restarted with another model, then read as another server)."""
    raw = row.get("server")
    server: dict[str, Any] = raw if isinstance(raw, dict) else {}
    found = next((f"{k} {server[k]}" for k in SERVER_ID_KEYS if server.get(k) is not None), None)
    if found is not None:
        return found
    raw_settings, raw_config = server.get("settings"), row.get("config")
    settings: dict[str, Any] = raw_settings if isinstance(raw_settings, dict) else {}
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    parts = [str(v) for v in (config.get("endpoint"), settings.get("model"), settings.get("build")) if v]
    return " ".join(parts) or None
