"""Observation → reconciliation: turn an `analyze observe` log into a usage scenario, one request per observed row.

The provider's raw usage from each row is replayed verbatim through the pinned upstream usage code, so the ledger
shows what Pi and dsh would report for what the server really returned. Rows that failed, warm-ups and usage
shapes Pi's OpenAI-compatible parser does not take (no `prompt_tokens`, e.g. Anthropic-style) are skipped, each
with a note that says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from analyzer.errors import AnalyzerError
from analyzer.observe.jsonl import read_rows
from analyzer.usage.scenarios import Prices, Request, Scenario

NO_PRICES = Prices(cache_hit=0.0, cache_miss=0.0, output=0.0, as_of="not applicable",
                   source="no prices in an observation log: cost is computed at 0 per token, so the cost check only "
                          "shows that zero rates give zero")


def scenario_from_log(path: Path) -> tuple[Scenario, list[str]]:
    """The scenario (turn = row order) and notes about rows that were left out."""
    rows = read_rows(path)
    requests: list[Request] = []
    notes: list[str] = []
    for n, row in enumerate(rows, 1):
        where = f"{path.name} row {n} ({row.get('series', '?')} {row.get('index', '?')})"
        usage = row.get("usage")
        if row.get("measured") is False:
            notes.append(f"{where}: warm-up request, not replayed")
        elif row.get("outcome") != "ok" or not isinstance(usage, dict):
            notes.append(f"{where}: {row.get('outcome', 'no outcome')} without usage, not replayed")
        elif not isinstance(usage.get("prompt_tokens"), int | float):
            notes.append(f"{where}: usage has no prompt_tokens (not an OpenAI-compatible report), not replayed")
        else:
            requests.append(Request(turn=len(requests) + 1, step=0, usage=usage))
    if not requests:
        raise AnalyzerError(f"{path}: no row with an OpenAI-compatible usage to replay ({len(rows)} rows); pass a "
                            "log written by `analyze observe` with at least one successful request")
    first = next(r for r in rows if isinstance(r.get("usage"), dict))
    config: dict[str, Any] = first.get("config") or {}
    base_url = str(config.get("endpoint", ""))
    model = str(config.get("model", "")) or str((first.get("server") or {}).get("model", "unknown"))
    host = urlparse(base_url).hostname or ""
    provider = "deepseek" if host.endswith("deepseek.com") else "openai-compatible"
    scenario = Scenario(
        name=f"log:{path.name}",
        title=f"{first.get('experiment', '?')} observed at {base_url or '?'} — {len(requests)} of {len(rows)} rows "
              "replayed, raw usage verbatim",
        provider=provider, model=model, base_url=base_url, prices=NO_PRICES, requests=tuple(requests),
        registry=(provider, model) if provider == "deepseek" else None, path=str(path))
    return scenario, notes


# ---- the third witness: what the app itself reported -------------------------------------------------------

# Which ledger value stands beside which app field: Pi's own usage is the pi-ai route's parsed Usage, dsh's is
# its TokenUsage (the native DeepSeek adapter's, or the llm-pi-ai mapping's when only that route ran).
_APP_FIELDS = {
    "input": ("pi-ai", "pi_usage"), "cacheRead": ("pi-ai", "pi_usage"), "output": ("pi-ai", "pi_usage"),
    "cacheWrite": ("pi-ai", "pi_usage"),
    "inputTokens": ("deepseek-native", "dsh_usage"), "cacheReadTokens": ("deepseek-native", "dsh_usage"),
    "outputTokens": ("deepseek-native", "dsh_usage"), "cacheWriteTokens": ("deepseek-native", "dsh_usage"),
}


def _replayed_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows `scenario_from_log` turned into requests, in the same order."""
    return [r for r in rows if r.get("measured") is not False and r.get("outcome") == "ok"
            and isinstance(r.get("usage"), dict) and isinstance(r["usage"].get("prompt_tokens"), int | float)]


def _ledger_value(doc: dict[str, Any], route: str, key: str, n: int, name: str) -> tuple[Any, str | None, str]:
    routes = doc.get("routes") or {}
    order = [route] + [r for r in routes if r != route]
    for rname in order:
        reqs = (routes.get(rname) or {}).get("requests") or []
        if n < len(reqs):
            for f in reqs[n].get(key) or []:
                if f.get("name") == name:
                    return f.get("value"), f.get("site"), rname
    return None, None, route


def three_witnesses(path: Path, doc: dict[str, Any]) -> dict[str, Any] | None:
    """Per replayed row: the server's raw usage, the pinned code's ledger replayed on it, what the app reported.

    None when no row carries the app's own usage (a log written by a raw experiment). Each app field is set beside
    the ledger value of the same meaning; a difference is listed, never averaged away.
    """
    from analyzer.requests.usage import read_usage

    rows = _replayed_rows(read_rows(path))
    if not any(isinstance(r.get("app_reported"), dict) for r in rows):
        return None
    entries = []
    disagreements = []
    for n, row in enumerate(rows):
        app = row.get("app_reported") if isinstance(row.get("app_reported"), dict) else None
        c = read_usage(row.get("usage"), row.get("timings"))
        fields = []
        for name, value in ((app or {}).get("fields") or {}).items():
            if name not in _APP_FIELDS or value is None:
                continue
            route, key = _APP_FIELDS[name]
            ledger, site, used_route = _ledger_value(doc, route, key, n, name)
            agree = None if ledger is None else ledger == value
            fields.append({"name": name, "app": value, "ledger": ledger, "ledger_route": used_route, "site": site,
                           "agree": agree})
            if agree is False:
                disagreements.append(f"request {n + 1} ({row.get('series')} {row.get('index')}): the app reported "
                                     f"{name} = {value}, the pinned code gives {ledger} ({site or used_route})")
        if app is not None and c.cached is not None and app.get("cached") is not None and app["cached"] != c.cached:
            disagreements.append(f"request {n + 1} ({row.get('series')} {row.get('index')}): the app counted "
                                 f"{app['cached']} cached tokens, the server reported {c.cached} ({c.cached_field})")
        entries.append({"request": n + 1, "series": row.get("series"), "index": row.get("index"),
                        "server": {"prompt": c.prompt, "cached": c.cached, "cached_field": c.cached_field},
                        "app": None if app is None else {"prompt": app.get("prompt"), "cached": app.get("cached"),
                                                         "source": app.get("source")},
                        "fields": fields})
    return {"requests": entries, "disagreements": disagreements,
            "app": next((r.get("app") for r in rows if r.get("app")), None)}


def witness_lines(w: dict[str, Any]) -> list[str]:
    """The three witnesses as plain lines (server raw · pinned ledger · app)."""
    app = w.get("app") or {}
    lines = [f"three witnesses — server raw usage · the pinned code's ledger replayed on it · what "
             f"{app.get('profile', 'the app')} {app.get('version', '')} reported itself".replace("  ", " ")]
    for e in w["requests"]:
        srv = e["server"]
        appr = e["app"] or {}
        head = (f"  request {e['request']} ({e['series']} {e['index']}): server prompt {srv['prompt']}, cached "
                f"{srv['cached']} · app prompt {appr.get('prompt', '–')}, cached {appr.get('cached', '–')}")
        lines.append(head)
        for f in e["fields"]:
            mark = "=" if f["agree"] else ("?" if f["agree"] is None else "≠")
            lines.append(f"    {mark} {f['name']}: ledger {f['ledger']} ({f['ledger_route']}) · app {f['app']}")
    if w["disagreements"]:
        lines.append("where they disagree:")
        lines += [f"  ≠ {d}" for d in w["disagreements"]]
    else:
        lines.append("the three witnesses agree on every request")
    return lines
