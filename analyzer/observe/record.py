"""The research record of one observation run, in the route's 8-field template, in English or Chinese.

Every figure comes from the summary and the rows; layout, headings and the tool's own sentences come from the
shared `analyzer.records` module (sentences in `analyzer/records/sentences/observe.<lang>.toml`), so a
translation never touches code. The experiment's own question is the user's text and is written as given.
"""

from __future__ import annotations

import json
from typing import Any

from analyzer import __version__
from analyzer.observe.experiment import Experiment
from analyzer.records import Record, Sentences, sentences
from analyzer.records.provenance import analyzer_git


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
                 planned: int | None = None, interrupted: bool = False) -> Record:
    """The record (title + the 8 fields), every value taken from this run."""
    s = sentences("observe", lang)
    srv = summary.get("server") or {}
    nr = s["sources.not_reported"]
    first = rows[0] if rows else {}
    sources = [
        s.format("sources.endpoint", endpoint=exp.endpoint.base_url, model=exp.endpoint.model,
                 server_model=srv.get("model", nr), fingerprint=srv.get("system_fingerprint", nr),
                 server_version=srv.get("version") or srv.get("header") or nr),
        s.format("sources.tool", version=__version__, git=analyzer_git(lang), path=exp.path,
                 started=first.get("started_at", "–"), log=summary.get("log") or "–"),
    ]
    parts = first.get("parts") or {}
    system, tools, messages = (parts.get(k) or {} for k in ("system", "tools", "messages"))
    inputs = [
        s.format("inputs.run", requests=exp.run.requests, interval=exp.run.interval_s, max_tokens=exp.run.max_tokens,
                 stream=str(exp.run.stream).lower(), temperature=_v(exp.run.temperature)),
        s.format("inputs.parts", system_bytes=_v(system.get("bytes")), system_sha=(system.get("sha256") or "–")[:12],
                 tools_bytes=_v(tools.get("bytes")),
                 tool_names=", ".join(tools.get("names", [])) or s["inputs.no_tools"],
                 messages_bytes=_v(messages.get("bytes")), messages_sha=(messages.get("sha256") or "–")[:12]),
    ]
    if exp.overrides:
        inputs.append(s.format("inputs.overrides",
                               overrides=", ".join(f"{k} = {v}" for k, v in sorted(exp.overrides.items()))))
    vary = exp.vary
    changed = s.format(f"changed.{vary.factor}", requests=exp.run.requests,
                       first=_v(vary.values[0]) if vary.values else "–",
                       values="; ".join(_v(v) for v in vary.values),
                       tool=_v((vary.tool or {}).get("function", {}).get("name")))
    return Record(
        title=s.format("headings.title", name=exp.name),
        question=exp.question,
        sources=sources,
        inputs=inputs,
        changed=changed,
        observations=_observations(s, summary, planned, interrupted),
        interpretation=_interpretation(s, summary),
        not_ruled_out=_open_points(s, exp, summary),
        next_check=s[f"next_check.{vary.factor}"],
    )


def _observations(s: Sentences, summary: dict[str, Any], planned: int | None, interrupted: bool) -> list[str]:
    field = summary.get("cached_field")
    lines = [s.format("observations.field", field=field) if field else s["observations.no_field"]]
    for se in summary["series"]:
        lines.append(s.format("observations.series", series=_label(s, se["name"]), ok=se["ok"], requests=se["requests"],
                              prompt=_v(se["prompt_tokens"]), cached=_v(se["cached_tokens"]),
                              hit=_v(se["hit_percent"]), hit_later=_v(se["hit_percent_after_first"]),
                              ttft=_median(se["ttft_s"]), total=_median(se["total_s"])))
    for r in summary["requests"]:
        status = r["status"] if r["outcome"] == "ok" else f"{r['outcome']} {r['status'] or ''}".strip()
        lines.append(s.format("observations.request", series=_label(s, r["series"]),
                              index=r["index"] if r["measured"] else s["label.warmup"], value=_v(r["value"]),
                              status=status,
                              prompt=_v(r["prompt_tokens"]), cached=_v(r["cached_tokens"]),
                              gap=_t(r["since_previous_s"]), ttft=_t(r["ttft_s"]), total=_t(r["total_s"])))
    d = summary.get("drop")
    if d:
        lines.append(s.format("observations.drop", index=d["index"], cached=_v(d["cached_tokens"]),
                              control=_v(d["control_cached_tokens"]), parts=", ".join(d["changed_parts"]) or "–"))
    elif any(se["name"] == "treatment" for se in summary["series"]):
        lines.append(s["observations.no_drop"])
    failed = sum(se["failed"] for se in summary["series"])
    if failed:
        lines.append(s.format("observations.failed", failed=failed))
    if interrupted:
        lines.append(s.format("observations.interrupted", done=len(summary["requests"]), planned=planned or "?"))
    return lines


def _label(s: Sentences, series: str) -> str:
    """The series name in the record's language (the rows keep the identifiers `control` / `treatment`)."""
    return s[f"label.{series}"] if series in ("control", "treatment") else series


def _interpretation(s: Sentences, summary: dict[str, Any]) -> str:
    if not summary.get("cached_field"):
        return s["interpretation.unknown"]
    d = summary.get("drop")
    if d:
        if not d["changed_parts"]:
            return s["interpretation.drop_timing"]
        return s.format("interpretation.drop", parts=", ".join(d["changed_parts"]))
    if any(se["name"] == "treatment" for se in summary["series"]):
        return s["interpretation.no_drop"]
    later = summary["series"][0]["hit_percent_after_first"] if summary["series"] else None
    key = "natural" if later and later >= 50 else "natural_none"
    return s.format(f"interpretation.{key}", hit_later=_v(later))


def _open_points(s: Sentences, exp: Experiment, summary: dict[str, Any]) -> list[str]:
    points = [s["not_ruled_out.eviction"], s["not_ruled_out.replicas"],
              s.format("not_ruled_out.samples", n=exp.run.requests), s["not_ruled_out.tokenizer"]]
    if exp.vary.factor == "warmup":
        points.append(s["not_ruled_out.warm_control"])
    failed = sum(se["failed"] for se in summary["series"])
    if failed:
        points.append(s.format("not_ruled_out.failed", failed=failed))
    return points
