"""Trace the first differing text to the code that writes it at the pinned commits.

Two witnesses, in this order:
1. a finding of `analyze hazards --json` whose sink part is the divergence's request part and whose source
   kind fits the shape of the value that differs (a path → environment/filesystem, a clock → time, another
   tool at a position → ordering …; the mapping is `analyzer/rules/prefix/attribution.toml`);
2. the pinned file and line whose literal text stands next to the divergence: the text just before it on
   its line (or the new text after it), looked up among the index's string facts (call arguments, object
   property values) and then among the string and template literals of the indexed files that hold it,
   each hit confirmed on the file's syntax tree at the pinned commit.
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
    side: str          # "before": the text just before the divergence; "new": the new text after it
    via: str           # "index facts" | "syntax tree"

    def place(self) -> str:
        return f"{self.path}:{self.line}"

    def as_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("repo", "commit", "path", "line", "literal", "needle", "side", "via")}


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
    """(side, text) to look for in the pinned literals: the text before the divergence on its line, shortened
    word by word, then the new text from the divergence to the end of its line."""
    cfg = _rules()["literals"]
    text, k = diff.field_text, diff.offset or 0
    out: list[tuple[str, str]] = []
    line_start = text.rfind("\n", 0, k) + 1
    before = text[max(line_start, k - int(cfg["max_chars"])):k]
    while len(before.strip()) >= int(cfg["min_chars"]):
        out.append(("before", before))
        cut = before.rstrip().rfind(" ")
        if cut <= 0:
            break
        before = before[:cut + 1]
    after = text[k:].split("\n", 1)[0][: int(cfg["max_chars"])]
    if len(after.strip()) >= int(cfg["min_chars"]):
        out.append(("new", after))
    return out


def attribute(diff: StructureDiff, findings: Iterable[dict[str, Any]] = (),
              lookup: LiteralLookup | None = None) -> Attribution:
    hazard, why, others = match_hazard(diff, list(findings))
    literal = None
    if lookup is not None and diff.field_text:
        for side, needle in needles(diff):
            hits = lookup(needle)
            if hits:
                h = hits[0]
                literal = LiteralSite(h.repo, h.commit, h.path, h.line, h.literal, needle, side, h.via)
                break
    return Attribution(hazard, why, others, literal, value_shape(diff)[0])
