"""The research record of an app experiment (the route's 8 fields), every figure from the app summary.

Sentences live in `analyzer/records/sentences/observe_app.{en,zh}.toml`; the experiment's question and prompts are
the user's text and are written as given.
"""

from __future__ import annotations

import json
from typing import Any

from analyzer import __version__
from analyzer.observe.appexperiment import AppExperiment
from analyzer.observe.appsummary import divergence_text
from analyzer.records import Record, sentences
from analyzer.records.provenance import analyzer_git


def _v(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def session_cost_observations(s: Any, summary: dict[str, Any]) -> list[str]:
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


def build_app_record(exp: AppExperiment, app: Any, summary: dict[str, Any], *, lang: str = "en") -> Record:
    s = sentences("observe_app", lang)
    srv = summary.get("server") or {}
    server = ", ".join(f"{k} {srv[k]}" for k in ("model", "version") if srv.get(k)) or s["sources.not_reported"]
    sources = [
        s.format("sources.app", app=app.profile.name, version=app.version, version_from=app.version_source,
                 commit=app.commit[:12]),
        s.format("sources.endpoint", endpoint=summary.get("endpoint") or "–", model=exp.model, server=server),
        s.format("sources.tool", version=__version__, git=analyzer_git(lang), path=exp.path,
                 log=summary.get("log") or "–", proxy_log=summary.get("proxy_log") or "–"),
    ]
    if exp.source:
        sources.append(s.format("sources.hazard", source=", ".join(f"{k} {v}" for k, v in exp.source.items())))
    inputs = [s.format("inputs.turns", turns=len(exp.turns), prompts="; ".join(_v(t) for t in exp.turns)),
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
    return Record(
        title=s.format("headings.title", name=exp.name), question=exp.question, sources=sources, inputs=inputs,
        changed=changed, observations=observations, interpretation=interpretation,
        not_ruled_out=[s["not_ruled_out.random_model"], s["not_ruled_out.one_slot"], s["not_ruled_out.app_calls"]],
        next_check=s["next_check"])
