"""What-if of a fix on a recorded log: every request rewritten as the fix would write it (`fixes.py`), both
versions run through the SAME cache model `prefix` uses (`analyzer.cachemodel.simulate` under the endpoint's
rule: its minimum prefix, granularity, TTLs) at the recorded times, and both priced under the same prices at
each request's own time. The gain is what the fix buys: predicted cost as recorded − predicted cost fixed.

Tokens come from the renderer (`analyzer.prefix.tokens`): the engine's own template and tokenizer when a
llama.cpp server is given, else an estimate scaled to each request's reported prompt size, and said.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from analyzer.cost.bill import CostReport, price
from analyzer.cost.buckets import Buckets
from analyzer.cost.fixes import Fix, apply_fixes
from analyzer.errors import AnalyzerError


@dataclass(frozen=True)
class Predicted:
    tokens: int
    cached: int
    written: int
    money: float

    def as_json(self) -> dict[str, Any]:
        return {"prompt_tokens": self.tokens, "cached": self.cached, "written": self.written, "money": self.money}


@dataclass
class FixRow:
    row: int
    changed: list[str]
    recorded: Predicted
    fixed: Predicted
    reported_cached: int

    def as_json(self) -> dict[str, Any]:
        return {"row": self.row, "changed": self.changed, "as_recorded": self.recorded.as_json(),
                "fixed": self.fixed.as_json(), "reported_cached": self.reported_cached}


@dataclass
class FixWhatIf:
    fixes: list[str]
    rule: str
    rule_cite: str
    tokens: str
    rows: list[FixRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    render_errors: list[str] = field(default_factory=list)   # the engine's own error when it fell back to estimates

    def cached_gain(self) -> int:
        return sum(r.fixed.cached - r.recorded.cached for r in self.rows)

    def money_gain(self) -> float:
        return sum(r.recorded.money - r.fixed.money for r in self.rows)

    def as_json(self) -> dict[str, Any]:
        return {"fixes": self.fixes, "rule": self.rule, "rule_source": self.rule_cite, "tokens": self.tokens,
                "cached_tokens_gain": self.cached_gain(), "money_gain": self.money_gain(),
                "as_recorded": sum(r.recorded.money for r in self.rows),
                "fixed": sum(r.fixed.money for r in self.rows), "notes": self.notes,
                "render_errors": self.render_errors,
                "requests": [r.as_json() for r in self.rows]}


def fix_whatif(rows: list[dict[str, Any]], report: CostReport, fixes: list[Fix], *, renderer: Any,
               rule: str, settings: dict[str, Any] | None = None) -> FixWhatIf:
    """Both versions of the log through the cache model; `renderer` renders and tokenizes a request.
    `settings`: server settings the rows lack (an engine's slot count…), as the cache model names them.

    The rows become the cache model's arrivals exactly as `prefix` makes them (`analyzer.cachemodel.fromlog`:
    which rows the cache saw, their times, breakpoints and server settings); only the body differs."""
    from analyzer.cachemodel import provider_rule, simulate
    from analyzer.cachemodel.fromlog import LoggedRequest, logged_requests
    from analyzer.prefix.arrivals import log_arrivals, render_versions
    from analyzer.requests import parse_request

    cache_rule = provider_rule(rule)
    logged, _skipped = logged_requests(rows)
    by_row = {e.row: e for e in logged}
    priced = [r for r in report.requests if r.row in by_row]
    if not priced:
        raise AnalyzerError("no priced row carries its request body (`request_body`); the fix what-if rewrites "
                            "the recorded requests, so record them through `analyze proxy`")
    changed: dict[int, list[str]] = {}
    versions: dict[str, list[LoggedRequest]] = {"recorded": [], "fixed": []}
    for e in logged:
        fixed_body, said = apply_fixes(e.body, fixes)
        changed[e.row] = said
        request = parse_request(fixed_body, path=e.data.get("client_path")) or e.request
        versions["recorded"].append(e)
        versions["fixed"].append(LoggedRequest(e.row, e.data, fixed_body, request, e.ok, e.error))
    done = render_versions(versions, renderer)   # an engine that cannot render: both versions estimated, said
    renderer = done.renderer
    out = FixWhatIf([f.describe() for f in fixes], cache_rule.name, cache_rule.cite, renderer.describe,
                    render_errors=done.errors)
    out.notes.extend(done.errors)
    lengths = {(name, row): len(r.tokens) for name, rendered in done.rendered.items() for row, r in rendered.items()}
    matches = {name: {m.key: m for m in simulate(log_arrivals(entries, done.rendered[name], renderer, settings),
                                                   cache_rule)}
               for name, entries in versions.items()}
    if not any(changed.values()):
        out.notes.append("the fix changed no request of this log")
    exact = bool(getattr(renderer, "exact", False))
    for r in priced:
        recorded_len = lengths.get(("recorded", r.row), 0)
        scale = 1.0 if exact or not recorded_len else r.buckets.prompt / recorded_len
        pair = []
        for name in ("recorded", "fixed"):
            m = matches[name].get(r.row)
            n = round(lengths.get((name, r.row), 0) * scale)
            cached = round((m.cached if m else 0) * scale)
            written = round((m.written if m else 0) * scale)
            ttl = m.written_by_ttl[0][0] if m and m.written_by_ttl else None
            predicted = Buckets(max(0, n - cached - written), cached, ((ttl, written),) if written else (),
                                r.buckets.output, f"cache model {cache_rule.name}")
            pair.append(Predicted(n, cached, written, price(predicted, r.quote).total))
        out.rows.append(FixRow(r.row, changed.get(r.row, []), pair[0], pair[1], r.buckets.cache_read))
    if not exact:
        out.notes.append("token counts are estimates scaled to each request's reported prompt size; give "
                         "--engine-url for the engine's own tokenizer")
    return out


def fix_lines(data: dict[str, Any], currency: str) -> list[str]:
    from analyzer.cost.text import money

    out = ["", "what-if: " + "; ".join(data["fixes"])]
    out.append(f"  cache model: {data['rule']} ({data['rule_source']}); tokens: {data['tokens']}")
    out.append(f"  {'row':>4} {'cached as recorded':>19} {'cached fixed':>13} {'cost as recorded':>17} "
               f"{'cost fixed':>11}  changed")
    for r in data["requests"]:
        a, f = r["as_recorded"], r["fixed"]
        out.append(f"  {r['row']:>4} {a['cached']:>19,} {f['cached']:>13,} {money(a['money'], currency):>17} "
                   f"{money(f['money'], currency):>11}  {'; '.join(r['changed']) or '—'}")
    gain, cached = data["money_gain"], data["cached_tokens_gain"]
    out.append(f"  the fix would read {cached:,} more tokens from the cache and save {money(gain, currency)} "
               f"({money(data['as_recorded'], currency)} → {money(data['fixed'], currency)}, predicted both ways)")
    out.extend(f"  note: {n}" for n in data["notes"])
    return out
