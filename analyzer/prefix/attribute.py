"""Trace the first differing text to the code that writes it at the pinned commits.

Two witnesses, in this order:
1. a finding of `analyze hazards --json` whose sink part is the divergence's request part and whose source
   kind fits the shape of the value that differs (a path → environment/filesystem, a clock → time, another
   tool at a position → ordering …; the mapping is `analyzer/rules/prefix/attribution.toml`);
2. the pinned file and line whose literal text stands next to the divergence: the text just before it on
   its line (the words nearest to it first), the line before when it starts a line, or the new text after
   it, looked up by `analyzer.prefix.source_lookup` (the index's string facts and literal texts, the repo's
   data files).

Several literals often hold the same words (an example extension, an error message, the prompt itself). They
are ranked by where they stand, each with the reason: the writer of the request part (a function whose
return value is the part, or one it calls) first, then a function on the request path (it reaches the send
in the call graph, `analyzer.prefix.request_path`), then other code; a literal that is a message's argument
(`throw new Error(…)`, `console.*`) after one that is not; tests, examples and docs last. When more than one
literal is ranked first, all of them are listed as writers that fit, and the report says so.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Protocol

from analyzer.prefix.structure import StructureDiff, visible


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
    node: str = ""       # the graph node of the function that holds it (`repo:path:qualname`); "": unknown
    message: str = ""    # the message call it is an argument of (`Error`, `console.warn`), if any

    def place(self) -> str:
        return f"{self.path}:{self.line}"

    def as_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("repo", "commit", "path", "line", "literal", "needle", "side", "via",
                                              "candidates")}


LiteralLookup = Callable[[str], list[LiteralSite]]


class Placed(Protocol):
    """Where a literal's function stands (`analyzer.prefix.request_path.Place`)."""

    @property
    def rank(self) -> int: ...

    @property
    def why(self) -> str: ...


class RequestPath(Protocol):
    """What the ranking asks of `analyzer.prefix.request_path.RequestPath` (stated here: that module imports
    this one)."""

    def place(self, node: str, parts: Iterable[str]) -> Placed: ...

    def message_producer(self, node: str) -> str | None: ...

# the place ranks of `analyzer.prefix.request_path` (writer of the part 0, on the request path 1, other code 2,
# outside the graph 3): stated here too because that module imports this one
ON_PATH_RANK, OTHER_CODE_RANK = 1, 2


@dataclass(frozen=True)
class RankedSite:
    """One literal that holds the text, with where it was ranked and why."""

    site: LiteralSite
    rank: int            # 1 = listed first
    why: str             # where it stands: the writer of the part, on the request path, a message, an example …
    fits: bool           # ranked as high as the first one: a writer that fits as well as it does
    key: tuple[int, ...] = ()  # the ranking key (see `rank_sites`), compared across needles; not printed

    def as_json(self) -> dict[str, Any]:
        s = self.site
        return {"repo": s.repo, "commit": s.commit, "path": s.path, "line": s.line, "literal": s.literal,
                "via": s.via, "function": s.node or None, "message_call": s.message or None, "rank": self.rank,
                "why": self.why, "fits": self.fits}


@dataclass(frozen=True)
class Attribution:
    hazard: dict[str, Any] | None
    hazard_why: str
    other_hazards: int
    literal: LiteralSite | None
    shape: str | None
    writers: tuple[RankedSite, ...] = ()   # the ranked literals (at most `[literals] listed`), best first
    placed: bool = False                   # ranked against the call graph's request path

    @property
    def only_later(self) -> bool:
        """Every literal that holds the text is in a test, example or documentation path: none of them wrote
        the request (a user's own words that a test happens to hold too), so no writer is named."""
        return bool(self.writers) and all(w.key[:1] == (1,) for w in self.writers)

    @property
    def fitting(self) -> int:
        """How many literals are ranked as high as the first (several writers fit when > 1)."""
        return sum(1 for w in self.writers if w.fits)

    def as_json(self) -> dict[str, Any]:
        h = self.hazard
        return {"hazard": None if h is None else {"id": h["id"], "kind": h.get("kind"), "rule": h.get("rule") or
                                                  (h.get("source") or {}).get("rule"),
                                                  "source": h.get("source"), "sink": h.get("sink")},
                "hazard_why": self.hazard_why, "other_matching_hazards": self.other_hazards,
                "literal": None if self.literal is None else self.literal.as_json(), "value_shape": self.shape,
                "writers": [w.as_json() for w in self.writers], "writers_that_fit": self.fitting,
                "ranked_by_request_path": self.placed, "only_tests_or_examples": self.only_later}

    def source_lines(self) -> list[str]:
        """The report's `source:` line, and when several literals hold the text, the ranked list with why."""
        lit = self.literal
        if lit is None:
            return ["  source:  no pinned literal holds the text next to the divergence"]
        among = f", the likeliest of {lit.candidates} literals holding it" if lit.candidates > 1 else ""
        if lit.first_line and lit.last_line > lit.first_line:
            among += f"; the literal spans lines {lit.first_line}–{lit.last_line}"
        needle = visible(lit.needle.strip())
        if self.only_later:
            where = ", ".join(f"{w.site.repo} {w.site.place()}" for w in self.writers[:3])
            more = f" and {lit.candidates - 3} more" if lit.candidates > 3 else ""
            return [f"  source:  no application code holds «{needle}»: only tests, examples or documentation "
                    f"({where}{more}), which never wrote a request — the text is not from the pinned code "
                    "(a user's own words, a file's content)"]
        out = [f"  source:  «{needle}» is in the literal «{lit.literal}» at {lit.repo} {lit.place()} @ "
               f"{lit.commit[:12]} ({lit.via}{among})"]
        if len(self.writers) > 1:
            fit = self.fitting
            head = (f"{fit} writers fit equally; they and the others, ranked" if fit > 1 else
                    "the literals holding it, ranked")
            if not self.placed:
                head += " (no call graph at these pins: not placed on the request path)"
            out.append(f"  writers: {head}:")
            for w in self.writers:
                mark = "=" if w.fits else " "
                out.append(f"    {w.rank}.{mark}{w.site.repo} {w.site.place()} — {w.why}")
            if lit.candidates > len(self.writers):
                out.append(f"    … {lit.candidates - len(self.writers)} more, ranked lower")
        return out


@cache
def _rules() -> dict[str, Any]:
    text = resources.files("analyzer.rules.prefix").joinpath("attribution.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def literal_settings() -> dict[str, Any]:
    """The [literals] table of the attribution rules (needle lengths, paths listed last)."""
    return dict(_rules()["literals"])


def rules_table(name: str) -> dict[str, Any]:
    """One table of `analyzer/rules/prefix/attribution.toml` (empty when the file has none)."""
    return dict(_rules().get(name, {}))


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
    """(side, text) to look for in the pinned literals, most specific first (`ranked_needles` without the
    distances)."""
    return [(side, text) for side, text, _up in ranked_needles(diff)]


def ranked_needles(diff: StructureDiff) -> list[tuple[str, str, int]]:
    """(side, text, lines up) to look for in the pinned literals, most specific first: the text before the divergence on
    its line (up to `max_chars`); the same text without the differing value's shared start, shortened word by
    word from the left (the words next to the value are the ones the code writes around it: `…model. Your
    working directory is ` when the model's name is a placeholder too); the same shortened from the right;
    the earlier lines with text, nearest first (up to `lookback_lines` of them: a file's content — an AGENTS.md —
    lands under a heading line the app writes, a few lines up past the file's own title, and its own words are in
    no code); then the new text and the baseline's text
    from the divergence on (their first line). `lines up` is 0 but for the earlier lines: the how-manieth line
    with text above the divergence's own line."""
    cfg = _rules()["literals"]
    most, least = int(cfg["max_chars"]), int(cfg["min_chars"])
    text, k = diff.field_text, diff.offset or 0
    out: list[tuple[str, str, int]] = []
    up = 0

    def add(side: str, needle: str) -> None:
        if len(needle.strip()) >= least and all((side, needle) != (s, n) for s, n, _u in out):
            out.append((side, needle, up))

    line_start = text.rfind("\n", 0, k) + 1
    lead = max(line_start, k - most)
    if lead > line_start and not text[lead - 1].isspace():  # cut mid-word: start at the next whole word
        space = text.find(" ", lead, k)
        lead = space + 1 if space >= 0 else k        # no whole word in reach: only the words before the value
    before = text[lead:k]
    add("before", before)
    value_start = k  # where the differing value's word starts (its shared start is not in the code)
    while value_start > line_start and not text[value_start - 1].isspace():
        value_start -= 1
    words_start = max(line_start, value_start - most)  # the words before the value, up to `most` of them
    if words_start > line_start and not text[words_start - 1].isspace():
        space = text.find(" ", words_start, value_start)
        words_start = space + 1 if space >= 0 else words_start
    words = text[words_start:value_start]
    while len(words.strip()) >= least:
        add("before", words)
        cut = words.find(" ", 1)
        if cut < 0:
            break
        words = words[cut:] if words[cut + 1:cut + 2] == " " else words[cut + 1:]
    while len(before.strip()) >= least:
        add("before", before)
        cut = before.rstrip().rfind(" ")
        if cut <= 0:
            break
        before = before[:cut + 1]
    # the earlier lines with text, nearest first: a heading the code writes above a file's content, which may
    # stand a few lines up (the file's own title line and blank lines come between)
    end, tried = line_start - 1, 0
    while end > 0 and tried < int(cfg.get("lookback_lines", 1)):
        start = text.rfind("\n", 0, end) + 1
        line = text[start:min(end, start + most)]  # a heading's words open its line; a long value may follow
        if line.strip():
            tried += 1
            up = tried
        if len(line.strip()) >= least:
            add("before", line)
            cut = line.rstrip().rfind(" ")
            while cut > 0 and len(line[:cut + 1].strip()) >= least:
                line = line[:cut + 1]
                add("before", line)
                cut = line.rstrip().rfind(" ")
        end = start - 1
    up = 0
    for side, tail in (("new", text[k:]), ("old", diff.old)):
        first = tail.lstrip("\n").split("\n", 1)[0][:most]
        add(side, first)
    return out


def attribute(diff: StructureDiff, findings: Iterable[dict[str, Any]] = (),
              lookup: LiteralLookup | None = None, *, request_path: RequestPath | None = None) -> Attribution:
    """The literal next to the divergence, then the hazard finding that wrote it.

    `request_path` places the literals on the call graph's request path (default: the lookup's own
    `request_path`, when it has one). With a literal found, a finding matches only when its chain passes that
    literal's line (the finding's value is written into *that* text); without one, part and value shape must
    do, and the reason says so."""
    findings = list(findings)
    hazard, why, others = match_hazard(diff, findings)
    if request_path is None:
        request_path = getattr(lookup, "request_path", None)
    literal: LiteralSite | None = None
    writers: tuple[RankedSite, ...] = ()
    if lookup is not None and diff.field_text:
        # the most specific needle that any literal holds decides, unless its best literal is not a writer (a
        # message, an example, code off the request path): then a shorter needle whose best literal ranks
        # higher and covers at least as much of the field takes over (a short needle alone, `a coding agent`,
        # must not pull in another app's prompt that merely shares the words)
        # Of two earlier lines, the nearer one's literal is the heading right above the text: a farther line
        # takes over only when its literal is better placed (not merely longer or with more written before it)
        chosen: tuple[tuple[int, ...], str, str, list[RankedSite]] | None = None
        chosen_up = 0
        before = getattr(lookup, "written_before", None)
        for side, needle, up in ranked_needles(diff):
            hits = lookup(needle)
            if not hits:
                continue
            ranked = rank_sites(hits, diff, hazard, request_path, before)
            key = ranked[0].key
            farther = chosen is not None and chosen_up > 0 and up > chosen_up
            if chosen is None or (key < chosen[0] and key[-1] <= chosen[0][-1]
                                  and (not farther or key[:3] < chosen[0][:3])):
                chosen, chosen_up = (key, side, needle, ranked), up
            if chosen[0][:3] <= (0, 0, ON_PATH_RANK):
                break
        if chosen is not None:
            _key, side, needle, ranked = chosen
            h = ranked[0].site
            literal = LiteralSite(h.repo, h.commit, h.path, h.line, h.literal, needle, side, h.via,
                                  candidates=len(ranked), first_line=h.first_line, last_line=h.last_line,
                                  node=h.node, message=h.message)
            writers = tuple(ranked[:int(literal_settings().get("listed", 6))])
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
    return Attribution(hazard, why, others, literal, value_shape(diff)[0], writers, request_path is not None)


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


def rank_sites(hits: list[LiteralSite], diff: StructureDiff, hazard: dict[str, Any] | None = None,
               request_path: RequestPath | None = None,
               written_before: Callable[[LiteralSite, int], list[str]] | None = None) -> list[RankedSite]:
    """The literals holding the text, the likeliest writer first, each with why it stands where it does.

    Keys, in order (the first that separates two literals is the reason one ranks above the other):
    1. tests, examples, docs (`later_paths`) last;
    2. a message's argument (thrown, logged, or returned by a function whose every caller hands it to one)
       after the rest;
    3. the place on the request path: the writer of the divergence's part, then on the path, then other code
       (and data files), then outside the graph;
    4. how much of what the same function writes in the `branch_lines` lines before the literal is in the
       request too (`written_before`): of two branches that write the same line, the one whose earlier text
       the request holds;
    5. in a file the matched hazard's chain passes;
    6. how much of the literal's static text is in the request's field; then the lookup's order."""
    chain = set()
    if hazard is not None:
        chain = {(s.get("repo"), s.get("path")) for s in hazard.get("steps") or []}
        chain.add(((hazard.get("sink") or {}).get("repo"), (hazard.get("sink") or {}).get("path")))
    later = tuple(literal_settings().get("later_paths", []))
    window = int(literal_settings().get("branch_lines", 60))
    parts = list(_rules()["parts"].get(diff.part or "", []))
    rows = []
    for order, h in enumerate(hits):
        reasons = []
        late = next((m for m in later if m in f"/{h.path}"), None)
        if late:
            reasons.append(f"a test, example or documentation path ({late.strip('/')})")
        message = h.message
        place_rank, place_why = OTHER_CODE_RANK, ""
        if request_path is not None and h.node:
            place = request_path.place(h.node, parts)
            place_rank, place_why = place.rank, place.why
            if not message:
                producer = request_path.message_producer(h.node)
                if producer:
                    message = f"{producer}, at every call site of the function that returns it"
        elif h.via == "data file":
            place_why = "a data file of the pinned repo (not code: no place on the request path)"
        if message:
            reasons.append(f"a message's argument ({message}), not a prompt piece")
        if place_why:
            reasons.append(place_why)
        covered = _covered(h.full or h.literal, diff.field_text, 4)
        support = 0
        if written_before is not None:
            support = sum(_covered(t, diff.field_text, 12) for t in written_before(h, window))
            if support:
                reasons.append(f"{support:,} characters of what its function writes just before it are in the "
                               "request too")
        in_chain = (h.repo, h.path) in chain
        if in_chain:
            reasons.append("in a file the matched hazard's chain passes")
        if covered:
            reasons.append(f"{covered:,} characters of its text are in the request's {diff.path or 'field'}")
        key = (int(bool(late)), int(bool(message)), place_rank, -support, int(not in_chain), -covered)
        rows.append((key, order, h, "; ".join(reasons) or "holds the words"))
    rows.sort(key=lambda r: (r[0], r[1]))
    best = rows[0][0] if rows else None
    return [RankedSite(h, i, why, key == best, key) for i, (key, _order, h, why) in enumerate(rows, 1)]


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "`": "`", "$": "$"}


def _unescape(text: str) -> str:
    """A literal's text as written → the text it makes, for the common escapes (`\\n` → newline)."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), text)


def _covered(text: str, field_text: str, least: int) -> int:
    """Characters of the literal's static pieces (between `${…}` / `{{…}}`) of `least` characters or more
    that stand in the request's field."""
    static = re.split(r"\$\{[^}]*\}|\{\{[^}]*\}\}", _unescape(text))
    return sum(len(p) for p in static if len(p.strip()) >= least and p in field_text)
