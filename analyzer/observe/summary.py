"""Summarise observation rows: per series prompt/cached tokens, hit %, TTFT and total time, and where hits dropped.

Works on rows alone (from a run or a log file), so a summary can always be recomputed from what was written.
Cached tokens are normalised from whichever usage field the provider used, and the summary names that field.
A run through a real app adds, per request, what the app itself reported, where the prefix broke and the
predicted cached tokens — every figure from a row, the app's turns or the prefix report.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analyzer.observe.plan import PARTS
from analyzer.observe.runner import APP_ROW_KEY
from analyzer.requests.usage import read_usage

if TYPE_CHECKING:
    from analyzer.observe.experiment import Experiment
    from analyzer.observe.runner import AppRun, RunResult
    from analyzer.prefix.run import PrefixReport


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"median": round(statistics.median(values), 6), "min": round(min(values), 6), "max": round(max(values), 6),
            "n": len(values)}


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def summarise(rows: list[dict[str, Any]], log: str | None = None) -> dict[str, Any]:
    """JSON-ready summary (schema `analyzer.observe.summary/1`)."""
    requests = []
    fields: dict[str, set[str]] = {"prompt": set(), "cached": set()}
    for row in rows:
        c = read_usage(row.get("usage"), row.get("timings"))
        if c.prompt_field:
            fields["prompt"].add(c.prompt_field)
        if c.cached_field:
            fields["cached"].add(c.cached_field)
        requests.append({
            "series": row.get("series"), "index": row.get("index"), "measured": row.get("measured", True),
            "value": row.get("value"), "outcome": row.get("outcome"), "status": row.get("status"),
            "prompt_tokens": c.prompt, "cached_tokens": c.cached,
            "hit_percent": _pct(c.cached, c.prompt) if c.cached is not None and c.prompt else None,
            "ttft_s": row.get("ttft_s"), "total_s": row.get("total_s"), "since_previous_s": row.get("since_previous_s"),
            "parts": {p: (row.get("parts") or {}).get(p, {}).get("sha256") for p in PARTS},
            "error": row.get("error"),
        })
    series = []
    for name in dict.fromkeys(r["series"] for r in requests):
        mine = [r for r in requests if r["series"] == name and r["measured"]]
        ok = [r for r in mine if r["outcome"] == "ok"]
        counted = [r for r in ok if r["prompt_tokens"] is not None and r["cached_tokens"] is not None]
        later = [r for r in counted if r["index"] > 1]  # "requests 2+": the first one is cold by design
        prompt = sum(r["prompt_tokens"] for r in counted)
        cached = sum(r["cached_tokens"] for r in counted)
        series.append({
            "name": name, "requests": len(mine), "ok": len(ok), "failed": len(mine) - len(ok),
            "prompt_tokens": prompt, "cached_tokens": cached, "hit_percent": _pct(cached, prompt),
            "hit_percent_after_first": _pct(sum(r["cached_tokens"] for r in later),
                                            sum(r["prompt_tokens"] for r in later)),
            "ttft_s": _stats([r["ttft_s"] for r in ok if r["ttft_s"] is not None]),
            "total_s": _stats([r["total_s"] for r in ok if r["total_s"] is not None]),
        })
    first = rows[0] if rows else {}
    answered = next((r for r in rows if r.get("server")), first)
    return {
        "schema": "analyzer.observe.summary/1",
        "experiment": first.get("experiment"), "factor": first.get("factor"), "log": log,
        "endpoint": (first.get("config") or {}).get("endpoint"), "model": (first.get("config") or {}).get("model"),
        "server": answered.get("server") or {},
        "prompt_field": " / ".join(sorted(fields["prompt"])) or None,
        "cached_field": " / ".join(sorted(fields["cached"])) or None,
        "series": series, "requests": requests, "drop": find_drop(requests),
    }


def summarise_run(exp: Experiment, result: RunResult) -> dict[str, Any]:
    """The summary of one run: `summarise`'s, plus how a direct run ended or what an app run adds."""
    summary = summarise(result.rows, log=str(result.log))
    if result.app is None:
        summary.update({"planned": result.planned, "written": len(result.rows), "interrupted": result.interrupted,
                        "stopped_on_error": result.stopped_on_error})
        return summary
    return _with_app(summary, exp, result.rows, result.app)


def find_drop(requests: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first treatment request whose cached tokens fell below the control request at the same index."""
    control = {r["index"]: r for r in requests if r["series"] == "control" and r["measured"]}
    for r in requests:
        if r["series"] != "treatment" or not r["measured"] or r["cached_tokens"] is None:
            continue
        ref = control.get(r["index"])
        if ref is None or ref["cached_tokens"] is None or r["cached_tokens"] >= ref["cached_tokens"]:
            continue
        changed = [p for p in PARTS if r["parts"].get(p) != ref["parts"].get(p)]
        return {"series": "treatment", "index": r["index"], "value": r["value"], "cached_tokens": r["cached_tokens"],
                "control_cached_tokens": ref["cached_tokens"], "prompt_tokens": r["prompt_tokens"],
                "changed_parts": changed}
    return None


def _fmt_stats(s: dict[str, float] | None) -> str:
    if not s:
        return "–"
    return f"{s['median']:.3f} s (min {s['min']:.3f}, max {s['max']:.3f}, n={s['n']})"


def _num(v: Any) -> str:
    return "–" if v is None else (f"{v:,}" if isinstance(v, int) else str(v))


def _short(v: Any, width: int = 28) -> str:
    text = "–" if v is None else (",".join(map(str, v)) if isinstance(v, list) else str(v) or '""')
    return text if len(text) <= width else text[: width - 1] + "…"


def summary_lines(s: dict[str, Any]) -> list[str]:
    """The summary as plain text lines (no markup), the way `analyze observe` prints it."""
    return _app_lines(s) if s.get("app") else _request_lines(s)


def _request_lines(s: dict[str, Any]) -> list[str]:
    lines = [f"experiment {s['experiment']} (factor {s['factor']}) — {s['endpoint']} model {s['model']}"]
    if s.get("server"):
        srv = s["server"]
        seen = ", ".join(f"{k} {srv[k]}" for k in ("model", "system_fingerprint", "version", "header") if srv.get(k))
        if seen:
            lines.append(f"server reported: {seen}")
    if s.get("log"):
        lines.append(f"log: {s['log']}")
    lines.append(f"cached tokens from: {s['cached_field'] or 'no cache field in any usage (the server reports none)'}"
                 f"; prompt tokens from: {s['prompt_field'] or 'none'}")
    lines.append("")
    lines.append(f"{'series':<10} {'#':>2}  {'value':<28} {'prompt':>7} {'cached':>7} {'hit%':>6} {'ttft s':>7} "
                 f"{'total s':>7}  status")
    for r in s["requests"]:
        idx = str(r["index"]) if r["measured"] else "w"
        ttft = "–" if r["ttft_s"] is None else f"{r['ttft_s']:.3f}"
        total = "–" if r["total_s"] is None else f"{r['total_s']:.3f}"
        status = r["outcome"] if r["outcome"] != "ok" else str(r["status"])
        if r["error"]:
            status += f" ({_short(r['error'], 60)})"
        lines.append(f"{r['series']:<10} {idx:>2}  {_short(r['value']):<28} {_num(r['prompt_tokens']):>7} "
                     f"{_num(r['cached_tokens']):>7} {_num(r['hit_percent']):>6} {ttft:>7} {total:>7}  {status}")
    lines.append("")
    for se in s["series"]:
        lines.append(f"{se['name']}: {se['ok']}/{se['requests']} ok; prompt {se['prompt_tokens']:,}, cached "
                     f"{se['cached_tokens']:,} → hit {_num(se['hit_percent'])}% (requests 2+: "
                     f"{_num(se['hit_percent_after_first'])}%)")
        lines.append(f"  TTFT {_fmt_stats(se['ttft_s'])}; total {_fmt_stats(se['total_s'])}")
    d = s["drop"]
    if d:
        parts = ", ".join(d["changed_parts"]) or "none (no request part differs; the factor is timing or state)"
        lines.append(f"hits dropped at treatment request {d['index']} (value {_short(d['value'], 60)}): cached "
                     f"{d['cached_tokens']:,} vs {d['control_cached_tokens']:,} in control request {d['index']}; "
                     f"part whose digest changed: {parts}")
    elif any(r["series"] == "treatment" for r in s["requests"]):
        lines.append("hits did not drop: no treatment request had fewer cached tokens than the control request at "
                     "the same index")
    return lines


# ---- a run through a real app ------------------------------------------------------------------------


def _with_app(base: dict[str, Any], exp: Experiment, rows: list[dict[str, Any]], run: AppRun) -> dict[str, Any]:
    """Schema `analyzer.observe.app-summary/1`: the summary plus the app, its turns and the prefix analysis."""
    app = run.app
    for req in base["requests"]:  # a config file's text as a value: one line in the table
        if isinstance(req.get("value"), str):
            req["value"] = req["value"].replace("\n", "↵")
    prefix = prefix_entries(run.prefix)
    controls = {r.get("index"): r for r in rows if r.get("series") == "control"}
    per_request = []
    for row in rows:
        c = read_usage(row.get("usage"), row.get("timings"))
        reported = row.get(APP_ROW_KEY) or {}
        entry = prefix.get((str(row.get("series")), int(row.get("index") or 0)))
        per_request.append({
            "series": row.get("series"), "index": row.get("index"), "turn": (row.get("app") or {}).get("turn"),
            "raw_prompt": c.prompt, "raw_cached": c.cached,
            "app_prompt": reported.get("prompt"), "app_cached": reported.get("cached"),
            "app_fields": reported.get("fields"), "app_source": reported.get("source"),
            "predicted_cached": entry.predicted_cached if entry else None,
            "reported_cached": entry.reported_cached if entry else c.cached,
            "first_divergence": entry.divergence if entry else None,
            "attribution": entry.attribution if entry else None,
            "findings": entry.findings if entry else [],
            "other_keys": other_keys(controls.get(row.get("index")), row) if row.get("series") != "control" else [],
        })
    base.update({
        "schema": "analyzer.observe.app-summary/1", "app": {"profile": app.profile.name, "version": app.version,
                                                            "version_from": app.version_source, "commit": app.commit},
        "question": exp.question, "vary": {"factor": exp.vary.factor, "name": exp.vary.name, "path": exp.vary.path,
                                           "values": list(exp.vary.values), "from_turn": exp.vary.from_turn},
        "turns": [t.as_json() for t in run.turns], "app_requests": per_request, "proxy_log": str(run.proxy_log),
        "run_dir": str(run.run_dir), "prefix_file": str(run.prefix_path) if run.prefix_path else None,
        "prefix_error": run.prefix_error, "source": dict(exp.source), "lookup_note": run.lookup_note,
        "prefix": run.prefix.as_json() if run.prefix is not None else None,
    })
    base["session_cost"], base["session_cost_error"] = session_costs(rows, run.prefix)
    return base


def session_costs(rows: list[dict[str, Any]], prefix: PrefixReport | None) -> tuple[list[dict[str, Any]], str | None]:
    """What the treatment's value costs each new session at DeepSeek's prices (`analyzer.cost.session`), from
    the run's rows and its prefix report; why not, when it cannot be priced."""
    from analyzer.errors import AnalyzerError

    if prefix is None or not any(r.get("series") == "control" for r in rows):
        return [], None
    from analyzer.cost.session import new_session_costs

    try:
        return [c.as_json() for c in new_session_costs(rows, prefix)], None
    except AnalyzerError as exc:
        return [], f"not priced: {exc}"


@dataclass(frozen=True)
class PrefixEntry:
    """One request of the prefix report in the app summary's terms: the cache model's prediction, what the
    server reported, where the request first differs from its baseline (whitespace made visible) and who
    wrote that text."""

    predicted_cached: int | None
    reported_cached: int | None
    divergence: dict[str, Any] | None  # kind, part (the field's path), offset, old, new, token, lost
    attribution: str | None
    findings: list[str]
    row: int
    baseline_row: int | None


def prefix_entries(report: PrefixReport | None) -> dict[tuple[str, int], PrefixEntry]:
    """The prefix report's per-request entries, by (series, index)."""
    from analyzer.prefix.structure import visible

    out: dict[tuple[str, int], PrefixEntry] = {}
    for r in report.requests if report is not None else []:
        if r.series is None or r.index is None:  # a row the log did not label: no entry, as in the report's JSON
            continue
        st = r.structure
        divergence = None
        if st is not None and st.kind not in (None, "identical"):
            divergence = {"kind": st.kind, "part": st.path or st.part, "offset": st.offset, "old": visible(st.old),
                          "new": visible(st.new), "token": r.token_index, "lost": r.lost}
        out[(str(r.series), int(r.index))] = PrefixEntry(
            r.predicted, r.reported, divergence,
            attribution_line(r.attribution.as_json() if r.attribution else None), list(r.findings), r.row,
            r.baseline_row)
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


def divergence_text(d: Any) -> str:
    """The first divergence in one phrase: where (path, char, token) and the new text."""
    if not d:
        return "–"
    token = d.get("token")
    if d.get("kind") == "appended":
        return f"appended from {d.get('part')} (token {token}): {d.get('new')!r}"
    where = f"{d.get('part')} char {d.get('offset')}" if d.get("offset") is not None else str(d.get("part"))
    return where + (f", token {token}" if token is not None else "") + f": {d.get('new')!r}"


def cost_lines(s: dict[str, Any]) -> list[str]:
    """The cost of the factor per new session, one line per treatment series."""
    from analyzer.cost.session import session_cost_line

    finding = (s.get("source") or {}).get("finding") or None
    from_turn = (s.get("vary") or {}).get("from_turn")
    lines = [session_cost_line(c, finding=finding, from_turn=from_turn) for c in s.get("session_cost") or []]
    if s.get("session_cost_error"):
        lines.append(f"cost: {s['session_cost_error']}")
    return lines


def turn_lines(turns: list[dict[str, Any]]) -> list[str]:
    """One line per app turn: exit code, time and what the app reported."""
    lines = []
    for t in turns:
        calls = "; ".join(
            (f"error: {e['error']}" if e.get("error") else f"prompt {e['prompt']:,} cached {e['cached']:,}")
            for e in t["reported"]) or "no usage reported"
        lines.append(f"{t['series']:<10} turn {t['turn']}: exit {t['exit_code']} in {t['seconds']:.1f} s — app "
                     f"reported {calls}")
    return lines


def _app_lines(s: dict[str, Any]) -> list[str]:
    app = s["app"]
    lines = [f"app {app['profile']} {app['version']} ({app['version_from']}); question: {s['question']}"]
    lines += _request_lines(s)
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
    lines += cost_lines(s)
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
