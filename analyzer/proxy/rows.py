"""Turn one proxied exchange into a row of observe's schema (`analyzer.observe/1`) plus what only a proxy sees.

The common fields come from `analyzer.observe.runner.observation_row` and the part digests from
`analyzer.observe.plan.request_parts`, so proxied rows and planned rows summarise and compare alike. Added:
the request body verbatim, the client's path and the upstream URL, the method, the exchange number, the label
the caller set, and the size and sha256 of the response bytes passed back.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any

from analyzer.observe.client import Outcome
from analyzer.observe.plan import request_parts
from analyzer.observe.runner import observation_row

SYSTEM_ROLES = ("system", "developer")
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


def chat_body(body: bytes) -> dict[str, Any] | None:
    """The request as a chat-completions object, or None for anything else (a GET, a non-JSON body…)."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return data
    return None


def split_parts(chat: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]], list[dict[str, Any]]]:
    """(system, tools, other messages): the leading system/developer messages are the system prompt."""
    messages = [m for m in chat.get("messages") or [] if isinstance(m, dict)]
    lead = 0
    while lead < len(messages) and messages[lead].get("role") in SYSTEM_ROLES:
        lead += 1
    system = None
    if lead:
        system = "\n".join(c if isinstance(c := m.get("content"), str) else json.dumps(c, ensure_ascii=False,
                                                                                     separators=(",", ":"))
                           for m in messages[:lead])
    tools = [t for t in chat.get("tools") or [] if isinstance(t, dict)]
    return system, tools, messages[lead:]


def exchange_row(ex: Exchange, label: Label, index: int, *, log_name: str, upstream: str, base_url: str,
                 api_key_env: str | None, server_version: str | None,
                 server_settings: dict[str, Any] | None = None) -> dict[str, Any]:
    chat = chat_body(ex.body)
    if chat is not None:
        system, tools, messages = split_parts(chat)
        parts = request_parts(system, tools, messages)
    else:
        parts = {}
    config: dict[str, Any] = {
        "endpoint": upstream,
        "url": ex.upstream_url,
        "model": chat.get("model") if chat else None,
        "max_tokens": (chat.get("max_tokens", chat.get("max_completion_tokens")) if chat else None),
        "stream": bool(chat.get("stream")) if chat else None,
        "temperature": chat.get("temperature") if chat else None,
        "api_key_env": api_key_env,
        "overrides": {},
        "experiment_file": None,
        "proxy": base_url,
    }
    row = observation_row(experiment=log_name, factor=label.extra.get("factor"), series=label.series,
                          index=index if chat is not None else 0, measured=chat is not None,
                          value=label.extra.get("value"), started_at=ex.started_at, wait_s=None,
                          since_previous_s=ex.since_previous_s, outcome=ex.outcome, config=config, parts=parts,
                          server_version=server_version, server_settings=server_settings)
    row.update({
        "source": "proxy",
        "exchange": ex.number,
        "label": dict(label.extra),
        "method": ex.method,
        "client_path": ex.client_path,
        "upstream_url": ex.upstream_url,
        "response": {"bytes": ex.response_bytes, "sha256": ex.response_sha256, "content_type": ex.content_type},
    })
    try:
        row["request_body"] = ex.body.decode("utf-8")
    except UnicodeDecodeError:
        import base64
        row["request_body_base64"] = base64.b64encode(ex.body).decode("ascii")
    return row
