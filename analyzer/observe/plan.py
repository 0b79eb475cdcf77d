"""Turn an experiment into the exact requests to send: control series, then treatment series, one factor apart.

Each planned request carries its three parts (system, tools, messages) already serialised the way they are sent,
so the digest written in a row is the digest of the bytes the server received, and the summary can name the part
whose digest changed when hits dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from analyzer.observe.experiment import Experiment

SUMMARY_LEAD = "Summary of the earlier conversation: "
PARTS = ("system", "tools", "messages")


@dataclass(frozen=True)
class PlannedRequest:
    series: str            # "control" or "treatment"
    index: int             # 1-based within the series; 0 for an unmeasured warm-up request
    value: Any             # the factor's value for this request (JSON-ready)
    measured: bool
    wait_s: float          # idle time before this request starts
    system: str | None
    tools: tuple[dict[str, Any], ...]
    messages: tuple[dict[str, Any], ...]

    def body(self, exp: Experiment) -> dict[str, Any]:
        """The JSON body sent to `/chat/completions`."""
        messages = ([{"role": "system", "content": self.system}] if self.system is not None else [])
        body: dict[str, Any] = {"model": exp.endpoint.model, "messages": messages + [dict(m) for m in self.messages],
                                "max_tokens": exp.run.max_tokens, "stream": exp.run.stream}
        if self.tools:
            body["tools"] = [dict(t) for t in self.tools]
        if exp.run.stream:
            body["stream_options"] = {"include_usage": True}
        if exp.run.temperature is not None:
            body["temperature"] = exp.run.temperature
        return body

    def parts(self) -> dict[str, dict[str, Any]]:
        """sha256 and size in bytes of each request part, as serialised (order matters: it is what is cached)."""
        return request_parts(self.system, self.tools, self.messages)


def request_parts(system: str | None, tools: Sequence[dict[str, Any]],
                  messages: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """sha256 and size in bytes of the system prompt, the tools (with their names in order) and the messages.

    Shared by planned requests and by requests a recording proxy saw, so both kinds of row compare alike.
    """
    texts = {"system": system if system is not None else "",
             "tools": _canonical(list(tools)) if tools else "",
             "messages": _canonical(list(messages))}
    out = {}
    for part in PARTS:
        data = texts[part].encode("utf-8")
        out[part] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    if tools:
        out["tools"]["names"] = [((t.get("function") or {}).get("name") if isinstance(t, dict) else None)
                                 for t in tools]
    return out


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _cycle(values: tuple[Any, ...], i: int) -> Any:
    return values[i % len(values)]


def plan(exp: Experiment) -> list[PlannedRequest]:
    """Every request of the run, in the order they are sent."""
    base, run, vary = exp.request, exp.run, exp.vary
    n, factor = run.requests, vary.factor

    def req(series: str, index: int, value: Any, *, wait: float | None = None, measured: bool = True,
            system: str | None = base.system, tools: tuple[dict[str, Any], ...] = base.tools,
            messages: tuple[dict[str, Any], ...] = base.messages) -> PlannedRequest:
        return PlannedRequest(series, index, value, measured, run.interval_s if wait is None else float(wait),
                              system, tools, messages)

    def variant(series: str, i: int, value: Any) -> PlannedRequest:
        if factor == "system-prefix":
            return req(series, i + 1, value, system=f"{value}\n{base.system}")
        if factor == "system-suffix":
            return req(series, i + 1, value, system=f"{base.system}\n{value}")
        if factor == "tools-order":
            by_name = {t["function"]["name"]: t for t in base.tools}
            return req(series, i + 1, list(value), tools=tuple(by_name[name] for name in value))
        if factor == "history-compacted":
            return req(series, i + 1, value, messages=_compacted(base.messages, value))
        if factor == "interval":
            return req(series, i + 1, value, wait=value)
        return req(series, i + 1, value)

    out: list[PlannedRequest] = []
    if factor == "none":
        out = [req("control", i + 1, None) for i in range(n)]
    elif factor == "tool-added":
        assert vary.tool is not None
        added = vary.tool["function"]["name"]
        out = [req("control", i + 1, None) for i in range(n)]
        out += [req("treatment", i + 1, added if i else None, tools=base.tools + ((vary.tool,) if i else ()))
                for i in range(n)]
    elif factor == "warmup":
        out = [req("control", i + 1, None) for i in range(n)]
        out.append(req("treatment", 0, "warmup", measured=False))
        out += [req("treatment", i + 1, None) for i in range(n)]
    else:
        first = vary.values[0]
        out = [variant("control", i, first) for i in range(n)]
        out += [variant("treatment", i, _cycle(vary.values, i)) for i in range(n)]
    if out:  # nothing to wait for before the very first request
        out[0] = replace(out[0], wait_s=0.0)
    return out


def _compacted(messages: tuple[dict[str, Any], ...], summary: str) -> tuple[dict[str, Any], ...]:
    """Earlier messages replaced by the summary, folded into the last message; an empty summary keeps them all."""
    if not summary:
        return messages
    last = messages[-1]
    return ({"role": last["role"], "content": f"{SUMMARY_LEAD}{summary}\n\n{last['content']}"},)
