"""Breaks at the head of a conversation: a request the prefix report starts a new conversation with (its system
or tool head is not the previous one's) although it is the same agent with one value changed — a clock or an id
near the top of the system prompt. The cache lost everything after that value all the same, so cost prices it.

Why here and not in the lineage: lineage must keep side calls (a title, a summary) apart from the main
conversation, and reads only how much of the head is shared from its start; a value changed near the start
leaves little shared from the start but nearly everything shared as a whole. Cost asks the second question:
heads at least `SIMILAR` alike (difflib's ratio over their text) are one agent, and the request is compared with
the previous request of its series through the prefix report's own functions (`first_difference`, the renderer).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from analyzer.errors import AnalyzerError

SIMILAR = 0.9


@dataclass(frozen=True)
class Comparison:
    """One request set against an earlier one: what the prefix report holds for it, or the head comparison."""

    row: int
    baseline_row: int | None
    structure: Any
    token_index: int | None
    tokens: int
    base_tokens: int
    attribution: Any = None
    how: str = "prefix report"


def _head_text(request: Any) -> str:
    from analyzer.cachemodel.lineage import head

    return "\n".join(head(request))


def from_prefix(prefix: Any) -> list[Comparison]:
    tokens = {r.row: r.prompt_tokens for r in prefix.requests}
    return [Comparison(r.row, r.baseline_row, r.structure, r.token_index, r.prompt_tokens,
                       tokens.get(r.baseline_row or -1, 0), r.attribution) for r in prefix.requests]


def head_breaks(rows: list[dict[str, Any]], prefix: Any, renderer: Any) -> list[Comparison]:
    """Requests without a baseline in `prefix` whose head is nearly the previous same-series request's."""
    from analyzer.cachemodel.fromlog import logged_requests
    from analyzer.prefix.structure import first_difference
    from analyzer.prefix.tokens import render_request

    logged = {e.row: e for e in logged_requests(rows)[0] if e.ok}
    reported = {r.row: r for r in prefix.requests}
    order = [r.row for r in prefix.requests]
    out = []
    for pos, row in enumerate(order):
        rep = reported[row]
        if rep.baseline_row is not None or row not in logged:
            continue
        series = rep.series
        previous = next((r for r in reversed(order[:pos]) if reported[r].series == series and r in logged), None)
        if previous is None:
            continue
        a, b = logged[previous], logged[row]
        matcher = difflib.SequenceMatcher(None, _head_text(a.request), _head_text(b.request), autojunk=False)
        if matcher.real_quick_ratio() < SIMILAR or matcher.quick_ratio() < SIMILAR:   # cheap upper bounds first
            continue
        ratio = matcher.ratio()
        if ratio < SIMILAR:
            continue
        try:
            ra, rb = render_request(renderer, a.request, a.body), render_request(renderer, b.request, b.body)
        except AnalyzerError:   # the engine could not render one: the prefix report fell back to estimates too
            continue
        t = 0
        while t < min(len(ra.tokens), len(rb.tokens)) and ra.tokens[t] == rb.tokens[t]:
            t += 1
        out.append(Comparison(row, previous, first_difference(a.request, b.request), t, len(rb.tokens),
                              len(ra.tokens), None, f"its head is {ratio:.0%} the previous request's"))
    return out
