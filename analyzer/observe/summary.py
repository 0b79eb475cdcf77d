"""Summarise observation rows: per series prompt/cached tokens, hit %, TTFT and total time, and where hits dropped.

Works on rows alone (from a run or a log file), so a summary can always be recomputed from what was written.
Cached tokens are normalised from whichever usage field the provider used, and the summary names that field.
"""

from __future__ import annotations

import statistics
from typing import Any

from analyzer.observe.plan import PARTS
from analyzer.requests.usage import read_usage


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
