"""Expectations written in the hazard fixtures' source, beside the code they are about.

`// hazard: RULE -> PART` on a line: the scan reports a finding whose source expression is on that line,
that names RULE (its source, sink, effect, granularity or control rule) and lands in request part PART.
`// ok: RULE` on a line: no finding whose source is on that line names RULE. Adding a line to a fixture
moves its markers with it, so no test keeps line numbers of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_MARK = re.compile(r"//\s*(hazard|ok):\s*([\w-]+)(?:\s*->\s*([a-z ]+?))?\s*(?:$|;)")


@dataclass(frozen=True)
class Marker:
    kind: str  # hazard | ok
    rule: str
    part: str | None
    path: str  # relative to the fixture repo
    line: int


def markers(folder: Path) -> list[Marker]:
    """Every marker of the TypeScript files under `folder`."""
    out = []
    for file in sorted(folder.rglob("*.ts")):
        rel = file.relative_to(folder).as_posix()
        for i, text in enumerate(file.read_text().splitlines(), start=1):
            m = _MARK.search(text)
            if m:
                out.append(Marker(m.group(1), m.group(2), (m.group(3) or "").strip() or None, rel, i))
    return out


def rules_named(finding: dict[str, Any]) -> set[str]:
    names = {finding["source"].get("rule"), finding["sink"].get("rule"), finding.get("effect_rule"),
             finding.get("granularity_rule"), finding.get("dismissed_by")}
    return {n for n in names if n}


def unmet(result: dict[str, Any], marks: list[Marker]) -> list[str]:
    """The markers the scan result does not satisfy, each as one line saying what was expected."""
    problems = []
    for m in marks:
        here = [f for f in result["findings"] if f.get("category") == "value"
                and f["source"]["path"] == m.path and f["source"]["line"] == m.line]
        naming = [f for f in here if m.rule in rules_named(f)]
        if m.kind == "hazard" and not any(f["sink"]["part"] == m.part for f in naming):
            problems.append(f"{m.path}:{m.line}: expected hazard {m.rule} -> {m.part}; found "
                            f"{[(sorted(rules_named(f)), f['sink']['part']) for f in here]}")
        if m.kind == "ok" and naming:
            problems.append(f"{m.path}:{m.line}: expected no finding of {m.rule}; found "
                            f"{[f['sink']['part'] for f in naming]}")
    return problems
