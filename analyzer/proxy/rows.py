"""Turn one proxied exchange into a row of observe's schema (`analyzer.observe/1`) plus what only a proxy sees.

The common fields come from `analyzer.observe.runner.observation_row`; the request is read by the request model
(`analyzer.requests`) whatever its shape, and the part digests come from it, so rows of chat, Responses and
Anthropic Messages requests digest alike. Added: the request's shape and path, its cache control (with the
session-affinity headers, never a credential), the request body verbatim, the client's path and the upstream URL,
the method, the exchange number, the label the caller set, and the size and sha256 of the response bytes.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from analyzer.observe.client import Outcome
from analyzer.observe.runner import observation_row
from analyzer.requests import CacheControl, Request, parse_request, request_parts

PROXY_EXPERIMENT = "proxy"
DEFAULT_SERIES = "proxy"


@dataclass
class Label:
    """What the caller said about the exchanges that follow: their series, index and free-form extras."""

    series: str = DEFAULT_SERIES
    index: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Exchange:
    """One request the proxy passed on and what came back."""

    number: int
    method: str
    client_path: str
    upstream_url: str
    started_at: _dt.datetime
    since_previous_s: float | None
    body: bytes
    outcome: Outcome
    response_bytes: int = 0
    response_sha256: str | None = None
    content_type: str | None = None
    request: Request | None = None     # the request model of `body` (None: not a request of a known shape)


def parsed_request(body: bytes, path: str, headers: Any = None) -> Request | None:
    """The request model of what the client sent (chat, Responses or Anthropic Messages), or None for anything
    else (a GET, a non-JSON body, another endpoint)."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return parse_request(data, path=path, headers=headers)


MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


def exchange_row(ex: Exchange, label: Label, index: int, *, log_name: str, upstream: str, base_url: str,
                 api_key_env: str | None, server_version: str | None,
                 server_settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """One row for the exchange. A request that got no 2xx answer (rejected, unreachable) is not `measured`:
    the server processed no prompt for it, so predictions and summaries leave it out."""
    request = ex.request
    params = request.params if request is not None else {}
    config: dict[str, Any] = {
        "endpoint": upstream,
        "url": ex.upstream_url,
        "model": request.model if request else None,
        "max_tokens": next((params[k] for k in MAX_TOKENS_FIELDS if k in params), None),
        "stream": bool(params.get("stream")) if request else None,
        "temperature": params.get("temperature") if request else None,
        "api_key_env": api_key_env,
        "overrides": {},
        "experiment_file": None,
        "proxy": base_url,
    }
    answered = ex.outcome.status is not None and 200 <= ex.outcome.status < 300
    row = observation_row(experiment=log_name, factor=label.extra.get("factor"), series=label.series,
                          index=index if request is not None else 0,
                          measured=request is not None and answered,
                          value=label.extra.get("value"), started_at=ex.started_at, wait_s=None,
                          since_previous_s=ex.since_previous_s, outcome=ex.outcome, config=config,
                          parts=request_parts(request) if request is not None else {},
                          server_version=server_version, server_settings=server_settings)
    row.update({
        "source": "proxy",
        "exchange": ex.number,
        "label": dict(label.extra),
        "method": ex.method,
        "shape": request.shape if request else None,
        "request_path": urlparse(ex.client_path).path,
        "client_path": ex.client_path,
        "upstream_url": ex.upstream_url,
        "control": control_row(request.control) if request is not None else None,
        "response": {"bytes": ex.response_bytes, "sha256": ex.response_sha256, "content_type": ex.content_type},
    })
    try:
        row["request_body"] = ex.body.decode("utf-8")
    except UnicodeDecodeError:
        import base64
        row["request_body_base64"] = base64.b64encode(ex.body).decode("ascii")
    return row


def control_row(control: CacheControl) -> dict[str, Any]:
    """The request's cache control as the row keeps it: the session-affinity headers are only here (the body
    is verbatim in the row, the headers are not)."""
    return {"breakpoints": [[b.segment, b.block, b.ttl] for b in control.breakpoints],
            "automatic": control.automatic, "prompt_cache_key": control.prompt_cache_key,
            "prompt_cache_retention": control.prompt_cache_retention,
            "previous_response_id": control.previous_response_id, "user": control.user,
            "affinity": [list(pair) for pair in control.affinity]}
