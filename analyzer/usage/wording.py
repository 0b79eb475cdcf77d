"""Reconcile's words in either language (from `analyzer/records/sentences/reconcile.<lang>.toml`).

Shared by the terminal ledger and the research record, so a comparison reads the same in both places.
"""

from __future__ import annotations

import math
from typing import Any

from analyzer.records import sentences
from analyzer.usage.values import number_to_string

FEATURE = "reconcile"


SHOWN_DIGITS = 12  # significant digits of a float in text: a cost sum's binary noise (…20000000000003) goes


def value_text(v: Any) -> str:
    """Numbers for people, spelled as JavaScript prints them (ints stay ints, 1e-05 is 0.00001), a float
    rounded to `SHOWN_DIGITS` significant digits — the precision its inputs have; JSON keeps the raw value."""
    if isinstance(v, float):
        if math.isfinite(v) and v != 0:
            v = float(f"{v:.{SHOWN_DIGITS}g}")
        return number_to_string(v)
    return "null" if v is None else (f"{v!r}" if isinstance(v, str) else str(v))


def row_value(v: Any, lang: str, scope: str = "") -> str:
    if v is None:
        return sentences(FEATURE, lang)["absent"]
    return v if scope == "reads" else value_text(v)


def why(row: dict[str, Any], lang: str = "en") -> str:
    """The reason sentence for one disagreeing comparison row."""
    s = sentences(FEATURE, lang)
    facts = row.get("facts", {})
    reason = row["reason"]
    if reason == "cache_source":
        reads = s["sep"].join(f"{route}: {', '.join(fields) or s['none']}" for route, fields in facts["reads"].items())
        return s.format("why.cache_source", reads=reads)
    if reason == "cost_only_pi":
        return s.format("why.cost_only_pi", route=facts["route"], other=facts["other"],
                        dropped=s["why.cost_dropped"] if facts.get("dropped") else "")
    if reason in ("reasoning_kept", "only_in"):
        return s.format(f"why.{reason}", route=facts.get("route"), other=facts.get("other"),
                        site=facts.get("site") or s["none"])
    if reason == "follows":
        causes = facts.get("causes") or []
        return s.format("why.follows", causes=s["sep"].join(causes)) if causes else s["why.follows_none"]
    return s[f"why.{reason}"]


def comparison_lines(comparison: dict[str, Any], lang: str = "en", *,
                     all_rows: bool = True) -> list[tuple[bool | None, str]]:
    """(agree, line) per compared number (`all_rows=False`: only the disagreeing ones)."""
    s = sentences(FEATURE, lang)
    a, b = comparison["routes"]
    lines: list[tuple[bool | None, str]] = []
    for row in comparison["rows"]:
        if row["agree"]:
            if all_rows:
                lines.append((True, s.format("compare.same", number=row["number"],
                                             value=row_value(row["values"][a], lang, row["scope"]))))
            continue
        lines.append((row["agree"], s.format("compare.row", number=row["number"], a=a, b=b,
                                      va=row_value(row["values"][a], lang, row["scope"]),
                                      vb=row_value(row["values"][b], lang, row["scope"]),
                                      why=why(row, lang))))
    return lines


def missing_line(m: dict[str, Any], lang: str = "en") -> str:
    s = sentences(FEATURE, lang)
    return s.format("missing.line", name=m["name"], role=s[f"role.{m['hop']}"], repo=m["repo"],
                                           commit=m["commit"][:10], looked_in=", ".join(m["looked_in"]) or "/",
                                           reason=m["reason"])


def comparison_summary(comparison: dict[str, Any], lang: str = "en") -> str:
    """"n numbers differ" / "agree on every number", plus how many could not be compared."""
    s = sentences(FEATURE, lang)
    n = comparison["differences"]
    text = s.format("compare.count", n=n) if n else s["compare.agree"]
    unknown = comparison.get("unknown", 0)
    return text + (s.format("compare.unknown", n=unknown) if unknown else "")
