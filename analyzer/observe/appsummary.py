"""The summary of an app experiment: observe's per-request table plus, per request, what the app itself reported,
where the prefix broke, and predicted vs reported cached tokens.

Works on what the run wrote (rows, turns, the prefix report), so every figure has a row or a file behind it.
"""

from __future__ import annotations

from typing import Any

from analyzer.observe.apprunner import APP_ROW_KEY, AppRunResult, turn_lines
from analyzer.observe.summary import _num, _short, summarise, summary_lines
from analyzer.requests.usage import read_usage


def prefix_entries(report: Any) -> dict[tuple[str, int], dict[str, Any]]:
    """The prefix report's per-request entries, by (series, index), in the summary's terms."""
    if report is None:
        return {}
    data = report.as_json() if hasattr(report, "as_json") else report
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for e in (data or {}).get("requests", []) if isinstance(data, dict) else []:
        if not isinstance(e, dict) or e.get("series") is None or e.get("index") is None:
            continue
        st = e.get("structure") or {}
        divergence = None
        if st and st.get("kind") not in (None, "identical"):
            divergence = {"kind": st.get("kind"), "part": st.get("path") or st.get("part"), "offset": st.get("offset"),
                          "old": st.get("old"), "new": st.get("new"), "token": e.get("token_index"),
                          "lost": e.get("lost")}
        out[(str(e["series"]), int(e["index"]))] = {
            "predicted_cached": (e.get("predicted") or {}).get("cached"), "reported_cached": e.get("reported"),
            "divergence": divergence, "attribution": attribution_line(e.get("attribution")),
            "findings": list(e.get("findings") or []), "row": e.get("row"), "baseline_row": e.get("baseline_row")}
    return out


def other_keys(control: dict[str, Any] | None, row: dict[str, Any]) -> list[str]:
    """Request keys besides system, tools and messages whose values differ from the control request's (e.g. a
    `thinking` option): they change the request without changing the rendered prompt's parts."""
    import json

    if control is None:
        return []
    try:
        a, b = json.loads(control.get("request_body") or "{}"), json.loads(row.get("request_body") or "{}")
    except ValueError:
        return []
    if not isinstance(a, dict) or not isinstance(b, dict):
        return []
    return sorted(k for k in set(a) | set(b) if k not in ("messages", "tools") and a.get(k) != b.get(k))


def attribution_line(a: dict[str, Any] | None) -> str | None:
    """Where the first differing text comes from: the hazard finding, else the pinned file and line."""
    if not a:
        return None
    bits = []
    lit = a.get("literal")
    if lit and not a.get("only_tests_or_examples"):  # a test holding the words never wrote the request
        bits.append(f"{lit['repo']}@{str(lit['commit'])[:12]} {lit['path']}:{lit['line']} ({lit['via']}, "
                    f"{lit['side']} text {lit['needle']!r})")
    hz = a.get("hazard")
    if hz:
        bits.append(f"hazard {hz['id']} ({a.get('hazard_why')})")
    return "; ".join(bits) or None


def app_summary(exp: Any, app: Any, result: AppRunResult) -> dict[str, Any]:
    base = summarise(result.rows, log=str(result.log))
    for req in base["requests"]:  # a config file's text as a value: one line in the table
        if isinstance(req.get("value"), str):
            req["value"] = req["value"].replace("\n", "↵")
    prefix = prefix_entries(result.prefix)
    controls = {r.get("index"): r for r in result.rows if r.get("series") == "control"}
    per_request = []
    for row in result.rows:
        c = read_usage(row.get("usage"), row.get("timings"))
        reported = row.get(APP_ROW_KEY) or {}
        entry = prefix.get((str(row.get("series")), int(row.get("index") or 0)), {})
        per_request.append({
            "series": row.get("series"), "index": row.get("index"), "turn": (row.get("app") or {}).get("turn"),
            "raw_prompt": c.prompt, "raw_cached": c.cached,
            "app_prompt": reported.get("prompt"), "app_cached": reported.get("cached"),
            "app_fields": reported.get("fields"), "app_source": reported.get("source"),
            "predicted_cached": entry.get("predicted_cached"),
            "reported_cached": entry.get("reported_cached", c.cached),
            "first_divergence": entry.get("divergence"), "attribution": entry.get("attribution"),
            "findings": entry.get("findings", []),
            "other_keys": other_keys(controls.get(row.get("index")), row) if row.get("series") != "control" else [],
        })
    base.update({
        "schema": "analyzer.observe.app-summary/1", "app": {"profile": app.profile.name, "version": app.version,
                                                            "version_from": app.version_source, "commit": app.commit},
        "question": exp.question, "vary": {"factor": exp.vary.factor, "name": exp.vary.name, "path": exp.vary.path,
                                           "values": list(exp.vary.values)},
        "turns": result.turns, "app_requests": per_request, "proxy_log": str(result.proxy_log),
        "run_dir": str(result.run_dir), "prefix_file": str(result.prefix_path) if result.prefix_path else None,
        "prefix_error": result.prefix_error, "source": dict(exp.source), "lookup_note": result.lookup_note,
        "prefix": result.prefix.as_json() if result.prefix is not None else None,
    })
    return base


def divergence_text(d: Any) -> str:
    """The first divergence in one phrase: where (path, char, token) and the new text."""
    if not d:
        return "–"
    token = d.get("token")
    if d.get("kind") == "appended":
        return f"appended from {d.get('part')} (token {token}): {d.get('new')!r}"
    where = f"{d.get('part')} char {d.get('offset')}" if d.get("offset") is not None else str(d.get("part"))
    return where + (f", token {token}" if token is not None else "") + f": {d.get('new')!r}"


def app_summary_lines(s: dict[str, Any]) -> list[str]:
    app = s["app"]
    lines = [f"app {app['profile']} {app['version']} ({app['version_from']}); question: {s['question']}"]
    lines += summary_lines(s)
    lines.append("")
    lines += turn_lines(s["turns"])
    lines.append("")
    lines.append(f"{'series':<10} {'#':>2} {'turn':>4} {'raw prompt':>10} {'raw cached':>10} {'app prompt':>10} "
                 f"{'app cached':>10} {'predicted':>9}  first divergence")
    for r in s["app_requests"]:
        lines.append(f"{r['series']:<10} {r['index']!s:>2} {r['turn']!s:>4} {_num(r['raw_prompt']):>10} "
                     f"{_num(r['raw_cached']):>10} {_num(r['app_prompt']):>10} {_num(r['app_cached']):>10} "
                     f"{_num(r['predicted_cached']):>9}  {_short(divergence_text(r['first_divergence']), 60)}")
    disagree = [r for r in s["app_requests"] if r["app_cached"] is not None and r["raw_cached"] is not None
                and r["app_cached"] != r["raw_cached"]]
    for r in disagree:
        lines.append(f"  {r['series']} {r['index']}: the app reported {r['app_cached']:,} cached tokens, the server "
                     f"{r['raw_cached']:,} ({r['app_source']})")
    for r in s["app_requests"]:
        if r.get("other_keys"):
            lines.append(f"  {r['series']} {r['index']}: request keys that differ from control {r['index']}: "
                         f"{', '.join(r['other_keys'])}")
        for finding in r.get("findings") or []:
            lines.append(f"  {r['series']} {r['index']}: {finding}")
        if r.get("attribution"):
            lines.append(f"  {r['series']} {r['index']}: written by {r['attribution']}")
    if s.get("prefix_error"):
        lines.append(f"prefix: {s['prefix_error']}")
    elif s.get("prefix_file"):
        p = s.get("prefix") or {}
        lines.append(f"prefix analysis: {s['prefix_file']} (rule {p.get('rule')}: {p.get('rule_why')}; tokens from "
                     f"{p.get('tokenizer')}{'' if p.get('exact') else ', estimated'})")
    if s.get("lookup_note"):
        lines.append(f"attribution: {s['lookup_note']}")
    lines.append(f"proxy log: {s['proxy_log']}; app outputs and private homes: {s['run_dir']}")
    return lines
