"""Prefix forensics over a log of real requests: per request, where it stopped sharing a prefix with its
baseline (request structure, rendered prompt, tokens), the cached tokens predicted under the endpoint's rule,
the cached tokens the server reported, and the code that wrote the first differing text.

Works on rows alone (a proxy log, or any observe-schema rows that carry `request_body`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.prefix.attribute import Attribution, LiteralLookup, attribute
from analyzer.prefix.predict import Prediction, RuleSet, common_prefix, detect_rule, load_rules, predict
from analyzer.prefix.structure import CONTEXT_CHARS, StructureDiff, common_chars, first_difference, visible
from analyzer.prefix.tokens import PlainRenderer, Rendered, Renderer
from analyzer.requests.usage import read_usage

SCHEMA = "analyzer.prefix/1"
TOKEN_CONTEXT = 3


@dataclass
class RequestReport:
    row: int                      # 1-based line of the log
    series: str
    index: int
    baseline_row: int | None
    baseline: str                 # how the baseline was chosen
    structure: StructureDiff | None
    prompt_tokens: int            # as rendered and tokenized here
    prompt_offset: int | None = None   # first differing character of the rendered prompt
    prompt_context: dict[str, str] = field(default_factory=dict)
    token_index: int | None = None     # first differing token vs the baseline
    token_context: dict[str, list[str]] = field(default_factory=dict)
    lost: int | None = None            # tokens from the divergence to the end of the prompt
    slot_row: int | None = None        # the request the server processed just before this one
    prediction: Prediction | None = None
    any_earlier: int = 0               # longest common prefix with any earlier prompt (what a prompt cache could give)
    reported: int | None = None
    reported_field: str | None = None
    usage_prompt_tokens: int | None = None
    findings: list[str] = field(default_factory=list)
    attribution: Attribution | None = None

    @property
    def difference(self) -> int | None:
        if self.reported is None or self.prediction is None:
            return None
        return self.reported - self.prediction.cached

    def as_json(self) -> dict[str, Any]:
        p = self.prediction
        return {
            "row": self.row, "series": self.series, "index": self.index, "baseline_row": self.baseline_row,
            "baseline": self.baseline, "structure": self.structure.as_json() if self.structure else None,
            "prompt_tokens": self.prompt_tokens, "usage_prompt_tokens": self.usage_prompt_tokens,
            "prompt_offset": self.prompt_offset, "prompt_context": self.prompt_context,
            "token_index": self.token_index, "token_context": self.token_context, "lost": self.lost,
            "slot_row": self.slot_row,
            "predicted": None if p is None else {"rule": p.rule, "cached": p.cached, "basis": p.basis},
            "any_earlier_prefix": self.any_earlier,
            "reported": self.reported, "reported_field": self.reported_field, "difference": self.difference,
            "findings": self.findings,
            "attribution": self.attribution.as_json() if self.attribution else None,
        }


@dataclass
class PrefixReport:
    log: str | None
    rule: str
    rule_why: str
    renderer: str
    exact: bool
    caveats: list[str]
    requests: list[RequestReport]
    skipped: list[str]
    attribution_note: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "log": self.log, "rule": self.rule, "rule_why": self.rule_why,
                "tokenizer": self.renderer, "exact": self.exact, "caveats": self.caveats,
                "attribution_note": self.attribution_note, "skipped": self.skipped,
                "requests": [r.as_json() for r in self.requests]}


def chat_rows(rows: Iterable[dict[str, Any]]) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    """(1-based line, row, request body) of every row that carries a chat request body."""
    out = []
    for n, row in enumerate(rows, 1):
        text = row.get("request_body")
        if not isinstance(text, str):
            continue
        try:
            body = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(body, dict) and isinstance(body.get("messages"), list):
            out.append((n, row, body))
    return out


def analyse(rows: list[dict[str, Any]], *, against: int | str | None = None, renderer: Renderer | None = None,
            engine_url: str | None = None, rule: str | None = None, findings: Iterable[dict[str, Any]] = (),
            lookup: LiteralLookup | None = None, log: str | None = None,
            rules: RuleSet | None = None) -> PrefixReport:
    """The prefix report of `rows` (a log's rows, in log order).

    `against`: None — each request vs the one before it in its series; an int — every request vs that row
    (1-based line of the log); "control" — each request vs the control request at the same index.
    `renderer` (or `engine_url`, a llama.cpp server) gives prompts and tokens; without either they are
    estimated and the report says so. `findings`: `analyze hazards --json` findings; `lookup`: a literal
    lookup on the index (`analyzer.prefix.literals.IndexLiterals`).
    """
    rules = rules or load_rules()
    if renderer is None and engine_url:
        from analyzer.prefix.tokens import LlamaServerRenderer
        renderer = LlamaServerRenderer(engine_url)
    renderer = renderer or PlainRenderer()
    chats = chat_rows(rows)
    if not chats:
        raise AnalyzerError("no row carries a chat request body (`request_body`); record the application through "
                            "`analyze proxy` and pass that log")
    by_line = {n: (row, body) for n, row, body in chats}
    if isinstance(against, int) and against not in by_line:
        raise AnalyzerError(f"--against {against}: row {against} of the log is not a chat request; pass the "
                            f"line number of one ({', '.join(map(str, list(by_line)[:8]))}…)")
    if rule is None:
        rule, why = detect_rule(chats[0][1], rules)
    else:
        why = "chosen with --rule"
    if rule not in rules.params:
        raise AnalyzerError(f"--rule {rule}: unknown; known rules: {', '.join(sorted(rules.params))}")
    findings = list(findings)
    describe, exact = renderer.describe, renderer.exact
    if exact and rule != "llama.cpp":  # a llama.cpp server's template and tokenizer, standing in for another's
        describe, exact = f"assumed: {describe}, standing in for the {rule} endpoint's own", False
    rendered: dict[int, Rendered] = {}
    for n, _row, body in chats:
        try:
            rendered[n] = renderer.render(body)
        except AnalyzerError as exc:
            raise AnalyzerError(f"row {n}: {exc}") from None
    reports = []
    for pos, (n, row, body) in enumerate(chats):
        base = _baseline(chats, pos, against)
        rep = RequestReport(row=n, series=str(row.get("series")), index=int(row.get("index") or 0),
                            baseline_row=base[0] if base else None, baseline=base[1] if base else
                            "none (first request of its series)", structure=None,
                            prompt_tokens=len(rendered[n].tokens))
        c = read_usage(row.get("usage"), row.get("timings"))
        rep.reported, rep.reported_field, rep.usage_prompt_tokens = c.cached, c.cached_field, c.prompt
        earlier = [rendered[m].tokens for m, _r, _b in chats[:pos]]
        rep.slot_row = chats[pos - 1][0] if pos else None
        rep.prediction = predict(rule, earlier, rendered[n].tokens, rules)
        rep.any_earlier = max((min(common_prefix(e, rendered[n].tokens), len(rendered[n].tokens) - 1)
                               for e in earlier), default=0)
        if base is not None:
            b_row, _how = base
            _compare(rep, by_line[b_row][1], body, rendered[b_row], rendered[n])
            if rep.structure is not None and rep.structure.kind not in ("identical", "appended"):
                rep.attribution = attribute(rep.structure, findings, lookup)
        rep.findings = _findings(rep, rule, chats, pos, exact)
        reports.append(rep)
    skipped = [f"row {n}: no chat request body" for n in range(1, len(rows) + 1) if n not in by_line]
    return PrefixReport(log=log, rule=rule, rule_why=why, renderer=describe, exact=exact,
                        caveats=list(rules.params[rule].get("caveats", [])), requests=reports, skipped=skipped)


def _baseline(chats: list[tuple[int, dict[str, Any], dict[str, Any]]], pos: int,
              against: int | str | None) -> tuple[int, str] | None:
    n, row, _body = chats[pos]
    if isinstance(against, int):
        return None if n == against else (against, f"row {against} (--against)")
    if against == "control" and row.get("series") != "control":
        for m, other, _b in chats:
            if other.get("series") == "control" and other.get("index") == row.get("index"):
                return m, f"control request {row.get('index')} (--against control)"
        return None
    for m, other, _b in reversed(chats[:pos]):
        if other.get("series") == row.get("series"):
            return m, f"the request before it in series {row.get('series')}"
    return None


def _compare(rep: RequestReport, base_body: dict[str, Any], body: dict[str, Any], base: Rendered,
             cur: Rendered) -> None:
    rep.structure = first_difference(base_body, body)
    k = common_chars(base.prompt, cur.prompt)
    if k < len(base.prompt) or k < len(cur.prompt):
        rep.prompt_offset = k
        rep.prompt_context = {"before": visible(cur.prompt[max(0, k - CONTEXT_CHARS):k]),
                              "old": visible(base.prompt[k:k + CONTEXT_CHARS]),
                              "new": visible(cur.prompt[k:k + CONTEXT_CHARS])}
    t = common_prefix(base.tokens, cur.tokens)
    if t < len(base.tokens) or t < len(cur.tokens):
        rep.token_index = t
        rep.token_context = {"before": [visible(p) for p in cur.pieces[max(0, t - TOKEN_CONTEXT):t]],
                             "old": [visible(p) for p in base.pieces[t:t + TOKEN_CONTEXT]],
                             "new": [visible(p) for p in cur.pieces[t:t + TOKEN_CONTEXT]]}
    rep.lost = len(cur.tokens) - t


def _findings(rep: RequestReport, rule: str, chats: list[tuple[int, dict[str, Any], dict[str, Any]]], pos: int,
              exact: bool) -> list[str]:
    """What in the figures needs explaining: tokenization vs usage, predicted vs reported."""
    out = []
    if exact and rep.usage_prompt_tokens is not None and rep.usage_prompt_tokens != rep.prompt_tokens:
        out.append(f"tokenized here {rep.prompt_tokens:,} tokens, the server's usage says "
                   f"{rep.usage_prompt_tokens:,}: the request was rendered differently than the server rendered it")
    diff = rep.difference
    if diff is None or diff == 0 or rep.prediction is None:
        if rep.reported is None:
            out.append("the server reported no cached-token count: nothing to check the prediction against")
        return out
    predicted, reported = rep.prediction.cached, rep.reported or 0
    if diff > 0:
        why = f"reported {reported:,} cached tokens, {diff:,} more than predicted ({predicted:,})"
        if rule == "llama.cpp":
            previous_out = _completion_tokens(chats[pos - 1][1]) if pos else None
            if rep.any_earlier >= reported > predicted:
                why += (f": an earlier prompt shares {rep.any_earlier:,} tokens with this one — the server's host "
                        "prompt cache (--cache-ram) or another slot restored it")
            elif previous_out is not None and diff <= previous_out + 1:
                why += (f": the slot also held the previous answer's {previous_out:,} generated tokens and this "
                        "prompt repeats them")
            else:
                why += (": no prompt in the log explains it (requests the log does not show: another client, "
                        "an earlier run)")
        else:
            why += ": a cache unit the log does not show (an earlier run, another client with the same key)"
        out.append(why)
    else:
        why = f"reported {reported:,} cached tokens, {-diff:,} fewer than predicted ({predicted:,})"
        if rule == "llama.cpp":
            why += (": the slot did not hold the previous prompt (several slots, another client in between, a "
                    "restart) or the cache was cleared")
        elif rule == "deepseek":
            why += ": DeepSeek's cache is best-effort (a unit is usable only some seconds after it is written and "
            why += "is dropped after a while unused)"
        else:
            why += ": blocks evicted, or the server's block size differs from the rules file's"
        if not exact:
            why += "; the tokens here are estimates, so the prediction is too"
        out.append(why)
    return out


def _completion_tokens(row: dict[str, Any]) -> int | None:
    usage: dict[str, Any] = row["usage"] if isinstance(row.get("usage"), dict) else {}
    value = usage.get("completion_tokens")
    return value if isinstance(value, int) else None
