"""Trace the first differing text to the code that writes it at the pinned commits.

Two witnesses, in this order:
1. a finding of `analyze hazards --json` whose sink part is the divergence's request part and whose source
   kind fits the shape of the value that differs (a path → environment/filesystem, a clock → time, another
   tool at a position → ordering …; the mapping is `analyzer/rules/prefix/attribution.toml`);
2. the pinned file and line whose literal text stands next to the divergence: the text just before it on
   its line (or the new text after it), looked up among the index's string facts (call arguments, object
   property values) and then among the literal texts the index records (string and template literals as
   written, see `analyzer.prefix.literals`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from analyzer.prefix.structure import StructureDiff


@dataclass(frozen=True)
class LiteralSite:
    repo: str
    commit: str
    path: str
    line: int
    literal: str       # the literal's text (shortened)
    needle: str        # the text of the request that was found in it
    side: str          # "before": the text just before the divergence; "new"/"old": the text after it
    via: str           # "index facts" (a string argument or property value) | "index literals" (a literal's text)
    full: str = ""     # the literal's whole source text (for ranking, not printed)
    candidates: int = 1  # how many literals held the needle
    first_line: int = 0  # the literal's span (a template literal runs over many lines); 0: just `line`
    last_line: int = 0

    def place(self) -> str:
        return f"{self.path}:{self.line}"

    def as_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("repo", "commit", "path", "line", "literal", "needle", "side", "via",
                                              "candidates")}


LiteralLookup = Callable[[str], list[LiteralSite]]


@dataclass(frozen=True)
class Attribution:
    hazard: dict[str, Any] | None
    hazard_why: str
    other_hazards: int
    literal: LiteralSite | None
    shape: str | None

    def as_json(self) -> dict[str, Any]:
        h = self.hazard
        return {"hazard": None if h is None else {"id": h["id"], "kind": h.get("kind"), "rule": h.get("rule") or
                                                  (h.get("source") or {}).get("rule"),
                                                  "source": h.get("source"), "sink": h.get("sink")},
                "hazard_why": self.hazard_why, "other_matching_hazards": self.other_hazards,
                "literal": None if self.literal is None else self.literal.as_json(), "value_shape": self.shape}


@cache
def _rules() -> dict[str, Any]:
    text = resources.files("analyzer.rules.prefix").joinpath("attribution.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def literal_settings() -> dict[str, Any]:
    """The [literals] table of the attribution rules (needle lengths, paths listed last)."""
    return dict(_rules()["literals"])


def value_at(text: str, offset: int) -> str:
    """The whitespace-delimited word of `text` that holds `offset` (the differing value, whole)."""
    start = offset
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    end = offset
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[start:end]


def value_shape(diff: StructureDiff) -> tuple[str | None, list[str]]:
    """(shape name, hazard kinds it allows) of the value that differs, by the rules file's [[shape]] list."""
    value = value_at(diff.field_text, diff.offset or 0) if diff.field_text else diff.new
    for shape in _rules().get("shape", []):
        if "field_suffix" in shape and (diff.path or "").endswith(shape["field_suffix"]):
            return shape["name"], list(shape["kinds"])
        if "pattern" in shape and re.search(shape["pattern"], value):
            return shape["name"], list(shape["kinds"])
    return None, []


def match_hazard(diff: StructureDiff, findings: Iterable[dict[str, Any]]) -> tuple[dict[str, Any] | None, str, int]:
    """The hazard finding for this divergence: (finding, why it matches, how many others match as well)."""
    parts = set(_rules()["parts"].get(diff.part or "", []))
    shape, kinds = value_shape(diff)
    by_part = [f for f in findings if (f.get("sink") or {}).get("part") in parts]
    if not by_part:
        return None, f"no hazard finding reaches the {diff.part} part", 0
    if kinds:
        fitting = [f for f in by_part if f.get("kind") in kinds]
        if fitting:
            why = (f"sink part {fitting[0]['sink']['part']!r} and kind {fitting[0].get('kind')!r} fit a {shape} "
                   "value")
            return fitting[0], why, len(fitting) - 1
        return None, f"{len(by_part)} finding(s) reach the {diff.part} part, none of a kind a {shape} value has", 0
    return None, (f"{len(by_part)} finding(s) reach the {diff.part} part; the differing value has no shape that "
                  "names a kind, so none is picked"), 0


def needles(diff: StructureDiff) -> list[tuple[str, str]]:
    """(side, text) to look for in the pinned literals: the text before the divergence on its line (the whole
    line before when the divergence starts a line), shortened word by word; then the new text and the
    baseline's text from the divergence on (to the end of their first non-empty line)."""
    cfg = _rules()["literals"]
    most, least = int(cfg["max_chars"]), int(cfg["min_chars"])
    text, k = diff.field_text, diff.offset or 0
    out: list[tuple[str, str]] = []
    line_start = text.rfind("\n", 0, k) + 1
    before = text[max(line_start, k - most):k]
    if len(before.strip()) < least and line_start > 0:  # the divergence starts a line: the line before it
        prev_start = text.rfind("\n", 0, line_start - 1) + 1
        before = text[max(prev_start, line_start - 1 - most):line_start - 1]
    while len(before.strip()) >= least:
        out.append(("before", before))
        cut = before.rstrip().rfind(" ")
        if cut <= 0:
            break
        before = before[:cut + 1]
    for side, tail in (("new", text[k:]), ("old", diff.old)):
        first = tail.lstrip("\n").split("\n", 1)[0][:most]
        if len(first.strip()) >= least:
            out.append((side, first))
    return out


def attribute(diff: StructureDiff, findings: Iterable[dict[str, Any]] = (),
              lookup: LiteralLookup | None = None) -> Attribution:
    """The literal next to the divergence, then the hazard finding that wrote it.

    With a literal found, a finding matches only when its chain passes that literal's line (the finding's
    value is written into *that* text); without one, part and value shape must do, and the reason says so."""
    findings = list(findings)
    hazard, why, others = match_hazard(diff, findings)
    literal = None
    if lookup is not None and diff.field_text:
        for side, needle in needles(diff):
            hits = lookup(needle)
            if hits:
                h = _best(hits, diff.field_text, hazard)
                literal = LiteralSite(h.repo, h.commit, h.path, h.line, h.literal, needle, side, h.via,
                                      candidates=len(hits), first_line=h.first_line, last_line=h.last_line)
                break
    if literal is not None and hazard is not None:
        fitting = [f for f in _fitting(diff, findings) if _passes(f, literal)]
        if fitting:
            hazard, others = fitting[0], len(fitting) - 1
            why += f"; its chain passes {literal.place()}"
        else:
            lines = sorted({f"{st.get('path')}:{st.get('line')}" for f in _fitting(diff, findings)
                            for st in f.get("steps") or [] if st.get("path") == literal.path})
            seen = f" (in that file they pass {', '.join(lines)})" if lines else ""
            why = (f"{others + 1} finding(s) of a fitting part and kind exist, but none passes {literal.place()}, "
                   f"the literal that holds the divergence{seen}: the value written there is not among the "
                   "findings")
            hazard, others = None, 0
    elif hazard is not None:
        why += " (no pinned literal found to check its chain against)"
    return Attribution(hazard, why, others, literal, value_shape(diff)[0])


def _fitting(diff: StructureDiff, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    parts = set(_rules()["parts"].get(diff.part or "", []))
    _shape, kinds = value_shape(diff)
    return [f for f in findings if (f.get("sink") or {}).get("part") in parts and (not kinds or f.get("kind") in kinds)]


def _passes(finding: dict[str, Any], literal: LiteralSite) -> bool:
    """The finding's chain has a step inside the literal (its span: a template literal holds the value)."""
    places = [(st.get("repo"), st.get("path"), st.get("line")) for st in finding.get("steps") or []]
    sink = finding.get("sink") or {}
    places.append((sink.get("repo"), sink.get("path"), sink.get("line")))
    first, last = literal.first_line or literal.line, literal.last_line or literal.line
    return any(repo == literal.repo and path == literal.path and isinstance(line, int) and first <= line <= last
               for repo, path, line in places)


def _best(hits: list[LiteralSite], field_text: str, hazard: dict[str, Any] | None) -> LiteralSite:
    """The literal most likely to have written the text: application code before tests and examples (the
    lookup's order), then one in a file the matched hazard's chain passes, then the one whose static text
    covers most of the request's field."""
    chain = set()
    if hazard is not None:
        chain = {(s.get("repo"), s.get("path")) for s in hazard.get("steps") or []}
        chain.add(((hazard.get("sink") or {}).get("repo"), (hazard.get("sink") or {}).get("path")))
    first_rank = {id(h): i for i, h in enumerate(hits)}
    later = tuple(literal_settings().get("later_paths", []))

    def key(h: LiteralSite) -> tuple[int, int, int, int]:
        static = re.split(r"\$\{[^}]*\}", h.full or h.literal)
        covered = sum(len(p) for p in static if len(p.strip()) >= 4 and p in field_text)
        return (int(any(m in f"/{h.path}" for m in later)), int((h.repo, h.path) not in chain), -covered,
                first_rank[id(h)])

    return min(hits, key=key)
