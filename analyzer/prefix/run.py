"""Prefix forensics over a log of real requests of any shape (chat completions, Responses, Anthropic Messages):
the cache model's state as each request arrives and the tokens it predicts cached, what the server reported
and the likely cause when they differ, the conversation each request belongs to and the earlier request it
is compared with, where they first differ (request segment, rendered prompt, tokens), and the code that wrote
the first differing text.

Works on rows alone (a proxy log, or any observe-schema rows that carry `request_body`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from analyzer.cachemodel import Cause, Match, explain, provider_rule, simulate, within
from analyzer.cachemodel.fromlog import LoggedRequest, logged_requests
from analyzer.cachemodel.lineage import group
from analyzer.cachemodel.simulate import arrival_order
from analyzer.errors import AnalyzerError
from analyzer.prefix.arrivals import log_arrivals, render_versions
from analyzer.prefix.attribute import Attribution, LiteralLookup, attribute
from analyzer.prefix.endpoint_rule import RuleSet, detect_rule, load_rules
from analyzer.prefix.structure import CONTEXT_CHARS, StructureDiff, common_chars, first_difference, visible
from analyzer.prefix.tokens import PlainRenderer, Rendered, Renderer
from analyzer.requests import Request, read_usage

SCHEMA = "analyzer.prefix/2"
TOKEN_CONTEXT = 3


@dataclass
class RequestReport:
    row: int                      # 1-based line of the log
    series: str
    index: int
    shape: str
    conversation: int
    baseline_row: int | None
    baseline: str                 # how the baseline was chosen
    structure: StructureDiff | None
    prompt_tokens: int            # as rendered and tokenized here
    prompt_offset: int | None = None   # first differing character of the rendered prompt
    prompt_context: dict[str, str] = field(default_factory=dict)
    token_index: int | None = None     # first differing token vs the baseline
    token_context: dict[str, list[str]] = field(default_factory=dict)
    lost: int | None = None            # tokens from the divergence to the end of the prompt
    match: Match | None = None
    reported: int | None = None
    reported_field: str | None = None
    usage_prompt_tokens: int | None = None
    cause: Cause | None = None
    closest: tuple[int, int, StructureDiff] | None = None   # (row, tokens shared, first difference) when an
    #                                                         earlier request shares more than the baseline
    findings: list[str] = field(default_factory=list)
    attribution: Attribution | None = None
    closest_attribution: Attribution | None = None   # who wrote the text where the closest request differs

    @property
    def predicted(self) -> int | None:
        return None if self.match is None else self.match.cached

    @property
    def prediction(self) -> Match | None:
        """The cache model's match (`.cached`, `.rule`, `.basis`), under the name earlier callers read."""
        return self.match

    @property
    def difference(self) -> int | None:
        if self.reported is None or self.match is None:
            return None
        return self.reported - self.match.cached

    def as_json(self) -> dict[str, Any]:
        return {
            "row": self.row, "series": self.series, "index": self.index, "shape": self.shape,
            "conversation": self.conversation, "baseline_row": self.baseline_row, "baseline": self.baseline,
            "structure": self.structure.as_json() if self.structure else None,
            "prompt_tokens": self.prompt_tokens, "usage_prompt_tokens": self.usage_prompt_tokens,
            "prompt_offset": self.prompt_offset, "prompt_context": self.prompt_context,
            "token_index": self.token_index, "token_context": self.token_context, "lost": self.lost,
            "predicted": None if self.match is None else self.match.as_json(),
            "reported": self.reported, "reported_field": self.reported_field, "difference": self.difference,
            "cause": None if self.cause is None else {"kind": self.cause.kind, "text": self.cause.text},
            "closest": None if self.closest is None else {
                "row": self.closest[0], "shared_tokens": self.closest[1], "structure": self.closest[2].as_json(),
                "attribution": self.closest_attribution.as_json() if self.closest_attribution else None},
            "findings": self.findings,
            "attribution": self.attribution.as_json() if self.attribution else None,
        }


@dataclass
class PrefixReport:
    log: str | None
    rule: str
    rule_why: str
    rule_source: str
    settings: str | None
    renderer: str
    exact: bool
    caveats: list[str]
    requests: list[RequestReport]
    skipped: list[str]
    render_errors: list[str] = field(default_factory=list)
    attribution_note: str | None = None

    def agreement(self) -> dict[str, Any]:
        """How the model fared on this log: requests with a reported count, within max(8 tokens, 2%), and the
        causes named for the others."""
        reported = [r for r in self.requests if r.reported is not None and r.match is not None]
        close = [r for r in reported if within(r.match.cached, r.reported)]  # type: ignore[union-attr,arg-type]
        causes: dict[str, int] = {}
        for r in reported:
            if r.cause is not None:
                causes[r.cause.kind] = causes.get(r.cause.kind, 0) + 1
        return {"requests": len(self.requests), "reported": len(reported), "within": len(close),
                "causes": causes}

    def as_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "log": self.log, "rule": self.rule, "rule_why": self.rule_why,
                "agreement": self.agreement(),
                "rule_source": self.rule_source, "settings": self.settings, "tokenizer": self.renderer,
                "exact": self.exact, "caveats": self.caveats, "render_errors": self.render_errors,
                "attribution_note": self.attribution_note, "skipped": self.skipped,
                "requests": [r.as_json() for r in self.requests]}


def analyse(rows: list[dict[str, Any]], *, against: int | str | None = None, renderer: Renderer | None = None,
            engine_url: str | None = None, rule: str | None = None, findings: Iterable[dict[str, Any]] = (),
            lookup: LiteralLookup | None = None, log: str | None = None, rules: RuleSet | None = None,
            settings: dict[str, Any] | None = None) -> PrefixReport:
    """The prefix report of `rows` (a log's rows, in log order).

    `against`: None — each request vs the earlier request of its lineage (the cache entry it matched, else the
    one before it in its conversation); an int — every request vs that row (1-based line of the log);
    "control" — each request vs the control request at the same index. `renderer` (or `engine_url`, a
    llama.cpp server) gives prompts and tokens; without either, or when the engine cannot render a request,
    they are estimated and the report says so (with the engine's own error). `settings`: the server's cache
    settings (slots, cache_ram_mib, cache_reuse, slot_similarity…) when the rows do not record them; a value
    given here wins over a row's.
    """
    rules = rules or load_rules()
    if renderer is None and engine_url:
        from analyzer.prefix.tokens import LlamaServerRenderer
        renderer = LlamaServerRenderer(engine_url)
    renderer = renderer or PlainRenderer()
    logged, skipped = logged_requests(rows)
    if not logged:
        raise AnalyzerError("no row carries a request body of a known shape (chat completions, Responses, "
                            "Anthropic Messages) in `request_body`; record the application through `analyze proxy` "
                            "and pass that log")
    good = [e for e in logged if e.ok]
    by_row = {e.row: e for e in logged}
    if isinstance(against, int) and (against not in by_row or not by_row[against].ok):
        rows_ok = ", ".join(str(e.row) for e in good[:8]) + ("…" if len(good) > 8 else "")
        raise AnalyzerError(f"--against {against}: row {against} of the log is not a successful request; "
                            + (f"pass the line number of one ({rows_ok})" if good else
                               "the log has none (every request was rejected or unanswered)"))
    if rule is None:
        rule, why = detect_rule((good or logged)[0].data, rules)
    else:
        why = "chosen with --rule"
    try:
        cache_rule = provider_rule(rule)
    except AnalyzerError as exc:
        raise AnalyzerError(f"--rule {rule}: {exc}") from None
    versions = render_versions({"log": good}, renderer)
    rendered, render_errors, renderer = versions.rendered["log"], versions.errors, versions.renderer
    describe, exact = renderer.describe, renderer.exact
    if exact and rule != "llama.cpp":  # a llama.cpp server's template and tokenizer, standing in for another's
        describe, exact = f"assumed: {describe}, standing in for the {rule} endpoint's own", False
    log_model, rendering = _served_model(good), getattr(renderer, "model", lambda: None)()
    if exact and log_model and rendering and log_model != rendering:
        describe, exact = (f"assumed: {describe}, whose model ({rendering}) is not the one that served the log "
                           f"({log_model}): its counts stand in for the server's"), False
    arrivals = log_arrivals(logged, rendered, renderer, settings)
    matches = {m.key: m for m in simulate(arrivals, cache_rule)}
    served = [a.key for a in arrival_order([a for a in arrivals if a.ok])]   # lineage follows what the server saw
    lineage = group([(row, by_row[row].request) for row in served], matches,
                    min_head_share=float(rules.lineage.get("min_head_share", 0.5)),
                    tokens={row: len(r.tokens) for row, r in rendered.items()})
    described = None
    if rule == "llama.cpp":
        from analyzer.cachemodel.llamacpp import settings_from
        first = dict(good[0].data.get("server") or {}) if good else {}
        described = settings_from({**first, **(settings or {})}, cache_rule).describe()
    reports = []
    for pos, e in enumerate(good):
        base = _baseline(good, pos, against, lineage.baseline.get(e.row))
        cur = rendered[e.row]
        rep = RequestReport(row=e.row, series=str(e.data.get("series")), index=int(e.data.get("index") or 0),
                            shape=e.request.shape, conversation=lineage.conversation.get(e.row, 0),
                            baseline_row=base[0] if base else None,
                            baseline=base[1] if base else "none (first request of its conversation)", structure=None,
                            prompt_tokens=len(cur.tokens), match=matches.get(e.row))
        usage = read_usage(e.data.get("usage"), e.data.get("timings"))
        rep.reported, rep.reported_field, rep.usage_prompt_tokens = usage.cached, usage.cached_field, usage.prompt
        if base is not None:
            b = by_row[base[0]]
            _compare(rep, b.request, e.request, rendered[b.row], cur)
            if rep.structure is not None and rep.structure.kind not in ("identical", "appended"):
                rep.attribution = attribute(rep.structure, list(findings), lookup)
        m = rep.match
        if m is not None and m.best_key is not None and m.best_key in by_row and m.best_key != rep.baseline_row \
                and m.best_shared > m.shared:
            rep.closest = (m.best_key, m.best_shared, first_difference(by_row[m.best_key].request, e.request))
            if lookup is not None and rep.closest[2].kind not in ("identical", "appended"):
                # like with like: the one factor that changed since that request, traced as the baseline's is
                rep.closest_attribution = attribute(rep.closest[2], list(findings), lookup)
        if rep.match is not None:
            previous_output = None
            if rep.match.entry is not None and rep.match.entry in by_row:
                previous_output = read_usage(by_row[rep.match.entry].data.get("usage")).output
            rep.cause = explain(rep.match, rep.reported, previous_output=previous_output, exact=exact,
                                engine=cache_rule.kind == "engine", step=cache_rule.granularity,
                                minimum=cache_rule.min_prefix_for(e.request.model))
        rep.findings = _findings(rep, exact)
        reports.append(rep)
    skipped += [f"row {e.row}: {e.error} — not in the cache state" for e in logged if not e.ok]
    skipped.sort(key=lambda s: int(s.split()[1].rstrip(":")))
    return PrefixReport(log=log, rule=rule, rule_why=why, rule_source=cache_rule.cite, settings=described,
                        renderer=describe, exact=exact, caveats=list(cache_rule.caveats), requests=reports,
                        skipped=skipped, render_errors=render_errors)


def _served_model(good: list[LoggedRequest]) -> str | None:
    """The model file the log's server ran, when its rows recorded the server's settings."""
    for e in good:
        server = e.data.get("server")
        settings = server.get("settings") if isinstance(server, dict) else None
        model = settings.get("model") if isinstance(settings, dict) else None
        if isinstance(model, str) and model:
            return model
    return None


def _baseline(good: list[LoggedRequest], pos: int, against: int | str | None,
              lineage: tuple[int, str] | None) -> tuple[int, str] | None:
    e = good[pos]
    if isinstance(against, int):
        return None if e.row == against else (against, f"row {against} (--against)")
    if against == "control" and e.data.get("series") != "control":
        for other in good:
            if other.data.get("series") == "control" and other.data.get("index") == e.data.get("index"):
                return other.row, f"control request {e.data.get('index')} (--against control)"
        return None
    return lineage


def _compare(rep: RequestReport, base_request: Request, request: Request, base: Rendered, cur: Rendered) -> None:
    rep.structure = first_difference(base_request, request)
    k = common_chars(base.prompt, cur.prompt)
    if k < len(base.prompt) or k < len(cur.prompt):
        rep.prompt_offset = k
        rep.prompt_context = {"before": visible(cur.prompt[max(0, k - CONTEXT_CHARS):k]),
                              "old": visible(base.prompt[k:k + CONTEXT_CHARS]),
                              "new": visible(cur.prompt[k:k + CONTEXT_CHARS])}
    t = 0
    while t < min(len(base.tokens), len(cur.tokens)) and base.tokens[t] == cur.tokens[t]:
        t += 1
    if t < len(base.tokens) or t < len(cur.tokens):
        rep.token_index = t
        rep.token_context = {"before": [visible(p) for p in cur.pieces[max(0, t - TOKEN_CONTEXT):t]],
                             "old": [visible(p) for p in base.pieces[t:t + TOKEN_CONTEXT]],
                             "new": [visible(p) for p in cur.pieces[t:t + TOKEN_CONTEXT]]}
    rep.lost = len(cur.tokens) - t


def _findings(rep: RequestReport, exact: bool) -> list[str]:
    """What in the figures needs explaining: tokenization vs usage, predicted vs reported."""
    out = []
    if exact and rep.usage_prompt_tokens is not None and rep.usage_prompt_tokens != rep.prompt_tokens:
        out.append(f"tokenized here {rep.prompt_tokens:,} tokens, the server's usage says "
                   f"{rep.usage_prompt_tokens:,}: the request was rendered differently than the server rendered it")
    if rep.reported is None:
        out.append("the server reported no cached-token count: nothing to check the prediction against")
    elif rep.cause is not None and rep.match is not None:
        diff = rep.reported - rep.match.cached
        more = "more" if diff > 0 else "fewer"
        out.append(f"reported {rep.reported:,} cached tokens, {abs(diff):,} {more} than predicted "
                   f"({rep.match.cached:,}): {rep.cause.kind} — {rep.cause.text}")
    return out
