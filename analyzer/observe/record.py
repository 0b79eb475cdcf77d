"""The research record of one observation run, in the route's 8-field template, in English or Chinese.

Every figure comes from the summary and the rows; layout, headings and the tool's own sentences come from the
shared `analyzer.records` module (sentences in `analyzer/records/sentences/observe.<lang>.toml`, and
`observe_app.<lang>.toml` for a run through a real app), so a translation never touches code. The experiment's
own question and an app's prompts are the user's text and are written as given.
"""

from __future__ import annotations

import json
from typing import Any

from analyzer import __version__
from analyzer.observe.experiment import Experiment
from analyzer.observe.summary import divergence_text
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
                 planned: int | None = None, interrupted: bool | None = None) -> Record:
    """The record (title + the 8 fields), every value taken from this run; `planned` and `interrupted` default
    to what the summary says."""
    if exp.mode == "app":
        s = sentences("observe_app", lang)
        fields = _app_fields(s, exp, summary, analyzer_git(lang))
    else:
        s = sentences("observe", lang)
        fields = _request_fields(s, exp, summary, rows, summary.get("planned") if planned is None else planned,
                                 bool(summary.get("interrupted")) if interrupted is None else interrupted,
                                 analyzer_git(lang))
    return Record(title=s.format("headings.title", name=exp.name), question=exp.question, **fields)


def _request_fields(s: Sentences, exp: Experiment, summary: dict[str, Any], rows: list[dict[str, Any]],
                    planned: int | None, interrupted: bool, git: str) -> dict[str, Any]:
    srv = summary.get("server") or {}
    nr = s["sources.not_reported"]
    first = rows[0] if rows else {}
    sources = [
        s.format("sources.endpoint", endpoint=exp.endpoint.base_url, model=exp.endpoint.model,
                 server_model=srv.get("model", nr), fingerprint=srv.get("system_fingerprint", nr),
                 server_version=srv.get("version") or srv.get("header") or nr),
        s.format("sources.tool", version=__version__, git=git, path=exp.path,
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
    return {"sources": sources, "inputs": inputs, "changed": changed,
            "observations": _observations(s, summary, planned, interrupted),
            "interpretation": _interpretation(s, summary), "not_ruled_out": _open_points(s, exp, summary),
            "next_check": s[f"next_check.{vary.factor}"]}


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


def session_cost_observations(s: Sentences, summary: dict[str, Any]) -> list[str]:
    """What the factor costs each new session (`analyzer.cost.session`), with the price's source and date."""
    from analyzer.cost.text import money

    finding = (summary.get("source") or {}).get("finding")
    from_turn = (summary.get("vary") or {}).get("from_turn")
    per = s["cost.per_session"] if from_turn is None else s.format("cost.per_change", turn=from_turn)
    out = []
    for c in summary.get("session_cost") or []:
        what = s.format("cost.finding", finding=finding) if finding else s.format("cost.value", series=c["series"])
        if not c["tokens"]:
            out.append(s.format("observations.session_cost_none", what=what, per=per, series=c["series"], row=c["row"]))
            continue
        out.append(s.format("observations.session_cost", what=what, per=per, tokens=_v(c["tokens"]),
                            money=money(c["money"], c["currency"]), family=c["family"],
                            period=(c["period"] or s["cost.flat"]).replace("_", "-"), source=c["price_source"],
                            series=c["series"], row=c["row"], where=c["where"], baseline=c["baseline_row"],
                            estimated=s["cost.estimated"] if c["estimated"] else "",
                            cached=_v(c["reported_cached"]), prompt=_v(c["prompt_tokens"])))
    if summary.get("session_cost_error"):
        out.append(s.format("observations.session_cost_missing", why=summary["session_cost_error"]))
    return out


def _app_fields(s: Sentences, exp: Experiment, summary: dict[str, Any], git: str) -> dict[str, Any]:
    app = summary["app"]
    srv = summary.get("server") or {}
    server = ", ".join(f"{k} {srv[k]}" for k in ("model", "version") if srv.get(k)) or s["sources.not_reported"]
    sources = [
        s.format("sources.app", app=app["profile"], version=app["version"], version_from=app["version_from"],
                 commit=(app["commit"] or "")[:12]),
        s.format("sources.endpoint", endpoint=summary.get("endpoint") or "–", model=exp.endpoint.model,
                 server=server),
        s.format("sources.tool", version=__version__, git=git, path=exp.path,
                 log=summary.get("log") or "–", proxy_log=summary.get("proxy_log") or "–"),
    ]
    if exp.source:
        sources.append(s.format("sources.hazard", source=", ".join(f"{k} {v}" for k, v in exp.source.items())))
    turns = exp.app.turns
    inputs = [s.format("inputs.turns", turns=len(turns), prompts="; ".join(_v(t) for t in turns)),
              s["inputs.private"]]
    vary = exp.vary
    changed = (s["changed.none"] if vary.factor == "none" else
               s.format("changed.factor", what=vary.describe(), first=_v(vary.values[0]),
                        values="; ".join(_v(v) for v in vary.values[1:])))
    observations = []
    if summary.get("cached_field"):
        observations.append(s.format("observations.field", field=summary["cached_field"]))
    disagree = 0
    for r in summary["app_requests"]:
        observations.append(s.format(
            "observations.request", series=r["series"], index=r["index"], turn=_v(r["turn"]),
            prompt=_v(r["raw_prompt"]), cached=_v(r["raw_cached"]), app_prompt=_v(r["app_prompt"]),
            app_cached=_v(r["app_cached"]), predicted=_v(r["predicted_cached"]),
            divergence=divergence_text(r["first_divergence"])))
        if r["app_cached"] is not None and r["raw_cached"] is not None and r["app_cached"] != r["raw_cached"]:
            disagree += 1
            observations.append(s.format("observations.disagree", series=r["series"], index=r["index"],
                                         app_cached=_v(r["app_cached"]), cached=_v(r["raw_cached"])))
        if (r["predicted_cached"] is not None and r["raw_cached"] is not None
                and r["predicted_cached"] != r["raw_cached"]):
            disagree += 1
        if r.get("other_keys"):
            observations.append(s.format("observations.other_keys", series=r["series"], index=r["index"],
                                         keys=", ".join(r["other_keys"])))
        for finding in r.get("findings") or []:
            observations.append(s.format("observations.attribution", series=r["series"], index=r["index"],
                                         attribution=finding))
        if r.get("attribution"):
            observations.append(s.format("observations.written_by", series=r["series"], index=r["index"],
                                         attribution=r["attribution"]))
    for t in summary["turns"]:
        errors = [e["error"] for e in t["reported"] if e.get("error")]
        if t["exit_code"] != 0 or errors:
            observations.append(s.format("observations.turn_failed", series=t["series"], turn=t["turn"],
                                         exit_code=t["exit_code"], error="; ".join(errors) or t["stderr_tail"]
                                         or "–"))
    observations += session_cost_observations(s, summary)
    if summary.get("prefix_error"):
        observations.append(s.format("observations.prefix_missing", why=summary["prefix_error"]))
    interpretation = (s.format("interpretation.disagree", n=disagree) if disagree else s["interpretation.agree"])
    return {"sources": sources, "inputs": inputs, "changed": changed, "observations": observations,
            "interpretation": interpretation,
            "not_ruled_out": [s["not_ruled_out.random_model"], s["not_ruled_out.one_slot"],
                              s["not_ruled_out.app_calls"]],
            "next_check": s["next_check"]}
