"""The research record of one observation run, in the route's 8-field template, in English or Chinese.

Every figure comes from the summary and the rows; the tool's own sentences live in
`analyzer/observe/sentences/observe.<lang>.toml`, so a translation never touches code. The experiment's own
question is the user's text and is written as given.
"""

from __future__ import annotations

import json
import tomllib
from functools import cache
from importlib import resources
from typing import Any

from analyzer import __version__
from analyzer.observe.experiment import Experiment

LANGS = ("en", "zh")
FIELDS = ("question", "sources", "inputs", "changed", "observations", "interpretation", "not_ruled_out",
          "next_check")


@cache
def sentences(lang: str) -> dict[str, dict[str, str]]:
    text = (resources.files("analyzer.observe") / "sentences" / f"observe.{lang}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _v(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _t(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _median(stats: dict[str, float] | None) -> str:
    return "–" if not stats else f"{stats['median']:.3f} s"


def build_record(exp: Experiment, summary: dict[str, Any], rows: list[dict[str, Any]], *, lang: str = "en",
                 planned: int | None = None, interrupted: bool = False) -> dict[str, Any]:
    """The record as data: field → text or list of lines (JSON-ready)."""
    s = sentences(lang)
    srv = summary.get("server") or {}
    nr = s["sources"]["not_reported"]
    first = rows[0] if rows else {}
    sources = [
        s["sources"]["endpoint"].format(endpoint=exp.endpoint.base_url, model=exp.endpoint.model,
                                        server_model=srv.get("model", nr),
                                        fingerprint=srv.get("system_fingerprint", nr),
                                        server_version=srv.get("version") or srv.get("header") or nr),
        s["sources"]["tool"].format(version=__version__, path=exp.path, started=first.get("started_at", "–"),
                                    log=summary.get("log") or "–"),
    ]
    parts = first.get("parts") or {}
    tool_names = ", ".join((parts.get("tools") or {}).get("names", [])) or s["inputs"]["no_tools"]
    inputs = [
        s["inputs"]["run"].format(requests=exp.run.requests, interval=exp.run.interval_s, max_tokens=exp.run.max_tokens,
                                  stream=str(exp.run.stream).lower(), temperature=_v(exp.run.temperature)),
        s["inputs"]["parts"].format(
            system_bytes=_v((parts.get("system") or {}).get("bytes")),
            system_sha=((parts.get("system") or {}).get("sha256") or "–")[:12],
            tools_bytes=_v((parts.get("tools") or {}).get("bytes")), tool_names=tool_names,
            messages_bytes=_v((parts.get("messages") or {}).get("bytes")),
            messages_sha=((parts.get("messages") or {}).get("sha256") or "–")[:12]),
    ]
    if exp.overrides:
        inputs.append(s["inputs"]["overrides"].format(
            overrides=", ".join(f"{k} = {v}" for k, v in sorted(exp.overrides.items()))))
    vary = exp.vary
    values = "; ".join(_v(v) for v in vary.values)
    changed = s["changed"][vary.factor].format(
        requests=exp.run.requests, first=_v(vary.values[0]) if vary.values else "–", values=values,
        tool=_v((vary.tool or {}).get("function", {}).get("name")))
    return {
        "title": s["headings"]["title"].format(name=exp.name),
        "lang": lang,
        "question": exp.question,
        "sources": sources,
        "inputs": inputs,
        "changed": changed,
        "observations": _observations(s, summary, planned, interrupted),
        "interpretation": _interpretation(s, summary),
        "not_ruled_out": _open_points(s, exp, summary),
        "next_check": s["next_check"][vary.factor],
    }


def _observations(s: dict[str, Any], summary: dict[str, Any], planned: int | None, interrupted: bool) -> list[str]:
    o = s["observations"]
    lines = [o["field"].format(field=summary["cached_field"]) if summary.get("cached_field") else o["no_field"]]
    for se in summary["series"]:
        lines.append(o["series"].format(series=se["name"], ok=se["ok"], requests=se["requests"],
                                        prompt=_v(se["prompt_tokens"]), cached=_v(se["cached_tokens"]),
                                        hit=_v(se["hit_percent"]), hit_later=_v(se["hit_percent_after_first"]),
                                        ttft=_median(se["ttft_s"]), total=_median(se["total_s"])))
    for r in summary["requests"]:
        status = r["status"] if r["outcome"] == "ok" else f"{r['outcome']} {r['status'] or ''}".strip()
        lines.append(o["request"].format(series=r["series"], index=r["index"] if r["measured"] else "warm-up",
                                         value=_v(r["value"]), status=status, prompt=_v(r["prompt_tokens"]),
                                         cached=_v(r["cached_tokens"]), gap=_t(r["since_previous_s"]),
                                         ttft=_t(r["ttft_s"]), total=_t(r["total_s"])))
    d = summary.get("drop")
    if d:
        lines.append(o["drop"].format(index=d["index"], cached=_v(d["cached_tokens"]),
                                      control=_v(d["control_cached_tokens"]),
                                      parts=", ".join(d["changed_parts"]) or "–"))
    elif any(se["name"] == "treatment" for se in summary["series"]):
        lines.append(o["no_drop"])
    failed = sum(se["failed"] for se in summary["series"])
    if failed:
        lines.append(o["failed"].format(failed=failed))
    if interrupted:
        lines.append(o["interrupted"].format(done=len(summary["requests"]), planned=planned or "?"))
    return lines


def _interpretation(s: dict[str, Any], summary: dict[str, Any]) -> str:
    i = s["interpretation"]
    if not summary.get("cached_field"):
        return i["unknown"]
    d = summary.get("drop")
    if d:
        return i["drop"].format(parts=", ".join(d["changed_parts"])) if d["changed_parts"] else i["drop_timing"]
    treatment = any(se["name"] == "treatment" for se in summary["series"])
    if treatment:
        return i["no_drop"]
    later = summary["series"][0]["hit_percent_after_first"] if summary["series"] else None
    key = "natural" if later and later >= 50 else "natural_none"
    return i[key].format(hit_later=_v(later))


def _open_points(s: dict[str, Any], exp: Experiment, summary: dict[str, Any]) -> list[str]:
    n = s["not_ruled_out"]
    points = [n["eviction"], n["replicas"], n["samples"].format(n=exp.run.requests), n["tokenizer"]]
    if exp.vary.factor == "warmup":
        points.append(n["warm_control"])
    failed = sum(se["failed"] for se in summary["series"])
    if failed:
        points.append(n["failed"].format(failed=failed))
    return points


def record_markdown(record: dict[str, Any]) -> str:
    """Markdown with the headings of the record's language."""
    h = sentences(record["lang"])["headings"]
    lines = [f"## {record['title']}", ""]
    for key in FIELDS:
        value = record[key]
        lines.append(f"**{h[key]}**" + ("" if record["lang"] == "zh" else ":"))
        lines.append("")
        if isinstance(value, list):
            lines.extend(f"- {item}" for item in value)
        else:
            lines.append(str(value))
        lines.append("")
    return "\n".join(lines)
