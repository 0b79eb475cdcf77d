"""Expectations written in the hazard fixtures' source, beside the code they are about.

`// hazard: RULE -> PART` on a line: the scan reports a finding whose source expression is on that line,
that names RULE (in its `rules`: source, sink, effect, granularity, control, the rules of its steps) and
lands in request part PART. `// ok: RULE` on a line: no finding whose source is on that line names RULE;
when RULE dismisses flows (a [[dismiss]], [[neutraliser]], [[wire]], [[unchanged_choice]] or [[history]]
rule), a near-miss on that line is dismissed by it or names it. Adding a line to a fixture moves its
markers with it, so no test keeps line numbers of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_MARK = re.compile(r"//\s*(hazard|ok):\s*([\w-]+)(?:\s*->\s*([a-z ]+?))?\s*(?=$|;|//)")
# rule tables whose rules leave a near-miss behind when they apply
DISMISSING = ("dismiss", "neutraliser", "wire", "unchanged_choice", "covered_choice", "history")


@dataclass(frozen=True)
class Marker:
    kind: str  # hazard | ok
    rule: str
    part: str | None
    repo: str
    path: str  # relative to the fixture repo
    line: int


def markers(folder: Path, repo: str) -> list[Marker]:
    """Every marker of the TypeScript files under `folder` (the fixture repo named `repo`)."""
    out = []
    for file in sorted(folder.rglob("*.ts")):
        rel = file.relative_to(folder).as_posix()
        for i, text in enumerate(file.read_text().splitlines(), start=1):
            for m in _MARK.finditer(text):
                out.append(Marker(m.group(1), m.group(2), (m.group(3) or "").strip() or None, repo, rel, i))
    return out


def _here(entries: list[dict[str, Any]], m: Marker) -> list[dict[str, Any]]:
    """Value findings whose source is on the marker's line, structural ones whose evidence (sink) is."""
    return [f for f in entries if (place := f["source"] if f.get("category") == "value" else f["sink"])
            and place["repo"] == m.repo and place["path"] == m.path and place["line"] == m.line]


def _rules(f: dict[str, Any]) -> list[str]:
    return list(f.get("rules") or [f.get("rule")])


def unmet(result: dict[str, Any], marks: list[Marker], tables: dict[str, str]) -> list[str]:
    """The markers the scan result does not satisfy, each as one line saying what was expected. `tables`:
    rule name → the rule table it belongs to (from the loaded rules' explanations)."""
    problems = []
    for m in marks:
        here = _here(result["findings"], m)
        naming = [f for f in here if m.rule in _rules(f)]
        where = f"{m.repo}:{m.path}:{m.line}"
        if m.rule not in tables:
            problems.append(f"{where}: no rule named {m.rule}")
        elif m.kind == "hazard" and not any(f["sink"]["part"] == m.part for f in naming):
            problems.append(f"{where}: expected hazard {m.rule} -> {m.part}; found "
                            f"{[(_rules(f), f['sink']['part']) for f in here]}")
        elif m.kind == "ok" and naming:
            problems.append(f"{where}: expected no finding of {m.rule}; found {[f['sink']['part'] for f in naming]}")
        elif m.kind == "ok" and tables[m.rule] in DISMISSING:
            near = _here(result["near_misses"], m)
            if not any(m.rule in _rules(n) for n in near):
                problems.append(f"{where}: expected a near-miss of {m.rule}; found "
                                f"{[n['dismissed_by'] for n in near]}")
    return problems
