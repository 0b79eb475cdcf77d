"""The hazards result as plain data: the one structure text, JSON, re-checks and reports read.

JSON schema `analyzer.hazards/1` (stable; additions only):
{
  "schema": "analyzer.hazards/1",
  "pins": {repo: {"commit": sha, "ref": ref|null, "url": url}},
  "rules": {"files": [path, …], "hash": str},
  "max_depth": int,
  "findings": [finding, …],          # value flows that reach a request part and structural hazards,
                                     # ranked by effect (breaks-prefix first)
  "hazards": [hazard, …],            # the findings grouped: one per sink and template, with its branches
  "near_misses": [near_miss, …],     # only with --all (else []): flows dismissed, with the reason
  "near_miss_count": int,
  "cut_flows": {"total": int, "by_reason": {rule: int}, "reasons": {rule: str},   # flows the analysis lost:
                "places": [{"reason", "repo", "path", "line", "text", "flows"}, …]},  # where most were cut
  "stats": {"roots": int, "functions": int, "files_parsed": int, "truncated": int, "unmapped": int},
  "limits": [str, …]                 # what the analysis cannot see (always printed with -v)
}
finding   = {"id": str,                                  # stable across line shifts (rule, symbols, part)
             "category": "value" | "structural",
             "kind": str, "neutralised_by": str,                      # from the source rule (value)
             "granularity": "request"|"session"|"day"|"machine"|"install", "granularity_rule": str,
             "effect": "breaks-prefix"|"cross-session"|"cache-routing"|"frozen-in-history"|"tail-append"|"out-of-band",
             "effect_rule": str, "effect_reason": str,                 # the [[effect]] rule that decided it
             "possible": bool,                           # the chain passes a one-of-several edge, or
                                                         # the value differs only under `condition`
             "condition": str|null,                      # e.g. "only when the user has written SYSTEM.md"
             "source": place + {"rule": str},
             "steps": [{"repo", "path", "line", "why", "rule"?}, …],   # in order, source first; "rule"
                                                                      # when a rule made the step
             "rules": [str, …],                         # every rule that decided something about it
             "wire_rule": str?,                         # the [[wire]] rule that let the value's field through
             "sink": place + {"rule": str, "part": str},
             "rule", "description", "evidence": [str, …],             # structural only
             "control": {"rule", "tested": str|null, "test": place,   # kind "control" only: the volatile
                         "branches": [{"repo", "path", "line", "text"}, …]},  # test and the alternatives
                                                                      # it selects between
             "writers_of": "Record.field"?,               # the stored record field the source reads, and
             "writers": [{"repo", "path", "line", "text",   # the source reads a stored record's field: every
                          "via": ["path:line", …]}, …]}?    # place that writes it, and the calls down to the
                                                            # record's write (entry point first)
near_miss = finding (category "value") + {"reason": str, "dismissed_by": str}   # effect may be null
hazard    = {"id", "category", "kinds": [str], "effect", "effect_rule", "granularity", "part",
             "sink": place, "template": {"repo", "path", "line"} | null, "branches": [finding id, …]}
place     = {"repo", "path", "line", "text", "function"}   # function: the graph node id
                                                           # sink also: "rule", "part", "position":
                                                           # {"name", "order"} as the code states them, or null;
                                                           # message history sinks also "message": "new" (put
                                                           # into a message built for this request) or
                                                           # "replayed" (read back from the stored history) or
                                                           # "appended" (a tool result appended after it)
                                                           # or "re-rendered" (a session log's replay computes
                                                           # it anew for every request; then also "replay":
                                                           # {"rule", "function", "appends": ["path:line", …]})
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import networkx as nx

from analyzer.hazards.driver import EngineResult, effective_neutraliser
from analyzer.hazards.grouping import group_findings
from analyzer.hazards.rules import EFFECTS, GRANULARITIES, Effect, HazardRules, UnchangedChoice, glob_match
from analyzer.hazards.taints import Hit

SCHEMA = "analyzer.hazards/1"
LIMITS = [
    "values that travel through storage or the network (a file, a cache) are not followed; a stored value "
    "is treated as replayed unchanged, except an append to a session log whose replay method (sinks.toml "
    "session-log-replay) is read: replayed as stored, or re-rendered from what the replay computes. The "
    "writers of a stored record field are named from the object literals of its declared type, the "
    "assignments to it on a value declared as that type and the callers' arguments, not through named "
    "events. Named events are followed "
    "from emitter to listener and back "
    "(the listener's return value, what it adds to an argument with push/set/add), but not what a listener "
    "assigns into an argument (`payload.x = v`)",
    "calls without a call-graph edge stop a flow (listed with --all as 'not followed'); dynamic dispatch the "
    "graph does not resolve is invisible",
    "objects are tracked one field path deep (`{ timestamp: … }` read as `.content` drops it); arrays are "
    "element-insensitive; class fields are tracked per class, not per instance",
    "structural hazards are matched by shape (rewrite of history-named lists, tool collections changed "
    "by connect/refresh functions) inside request-side functions; aliasing of the history is not followed",
    "ordering hazards are seen only for Map/Set iteration, directory listings and globs; Object.keys of a "
    "run-time-filled plain object and Promise.race/async completion order are not",
    "a value appended to the stored history (through a session or log store) is a near-miss (frozen, or "
    "its replay's own value is the finding); a value put into messages while the request is built is "
    "reported, even when it lands at the end where it costs only its own tokens",
    "control dependence is reported for the volatile tests of control.toml (a comparison with a source, a "
    "catch of a network call, a machine probe) selecting what a local variable, a ternary or the function's "
    "return value holds; a choice stored in an object field or made through a parameter of another "
    "function (`if (now > t)` with `now` passed in) is not",
    "a class field that gains a value after the first pass is read again in at most three rounds, and a "
    "member that writes the field is not summarised again for it even when it also reads it (through its "
    "own closure or a method it calls): such a finding can come and go with the rest of the code scanned",
]


def _place(g: nx.MultiDiGraph, repo: str, path: str, line: int, text: str, function: str) -> dict[str, Any]:
    return {"repo": repo, "path": path, "line": line, "text": text, "function": function}


def _qual(g: nx.MultiDiGraph, node: str) -> str:
    return g.nodes[node].get("qualname", node) if node in g else node.rsplit(":", 1)[-1]


def finding_id(*parts: str) -> str:
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:12]


def _value_entry(g: nx.MultiDiGraph, rules: HazardRules, hit: Hit) -> dict[str, Any]:
    o, site = hit.flow.origin, hit.site
    src = rules.source(o.rule)
    granularity, granularity_rule = rules.granularity(o.rule, hit.flow.neutralisers, o.tested)
    message = message_origin(rules, hit) if site.part == "message history" else None
    effect = rules.effect(site.part, granularity, message=message)
    chosen = {"control": {"rule": o.rule, "tested": o.tested or None,
                          "test": _place(g, o.repo, o.path, o.line, o.text, o.function),
                          "branches": [{"repo": o.repo, "path": o.path, "line": line, "text": text}
                                       for line, text in o.branches]}} if o.branches else {}
    return {
        "id": finding_id(o.rule, o.repo, _qual(g, o.function), o.text, site.part),
        "category": "value", "kind": src.kind, "neutralised_by": src.neutralised,
        "granularity": granularity, "granularity_rule": granularity_rule,
        **_effect_fields(effect),
        "possible": hit.flow.possible or bool(o.condition),
        "condition": o.condition or None,
        "source": {**_place(g, o.repo, o.path, o.line, o.text, o.function), "rule": o.rule},
        "steps": [{"repo": s.repo, "path": s.path, "line": s.line, "why": s.why, **({"rule": s.rule} if s.rule else {})}
                  for s in hit.flow.steps],
        "sink": {**_place(g, site.repo, site.path, site.line, site.text, site.function), "rule": site.rule,
                 "part": site.part, "position": dict(site.position) or None,
                 **({"message": message} if message is not None else {})},
        **chosen,
    }


_READ_STEP = re.compile(r"^(?:read from this\.([\w$]+)|returned by ([\w$.]+) )")


def message_origin(rules: HazardRules, hit: Hit) -> str:
    """`appended` when the value comes out of a function whose result is a new message appended after the
    history (a tool's `execute`, the `[[history]]` rule's `appended_by`); `replayed` when the chain reads the
    stored history on its way (a field or getter the `[[history]]` rule names); else `new`: the value is put
    into a message built for this request."""
    for step in hit.flow.steps:
        m = _READ_STEP.match(step.why)
        if m and m.group(2) and glob_match(m.group(2).rsplit(".", 1)[-1], rules.appended_by):
            return "appended"
    for step in hit.flow.steps:
        m = _READ_STEP.match(step.why)
        name = (m.group(1) or m.group(2).rsplit(".", 1)[-1]) if m else ""
        if name and glob_match(name, rules.history_reads):
            return "replayed"
    return "new"


def _effect_fields(effect: Effect | None) -> dict[str, Any]:
    if effect is None:
        return {"effect": None, "effect_rule": None, "effect_reason": None}
    return {"effect": effect.effect, "effect_rule": effect.name, "effect_reason": effect.reason}


def build_result(g: nx.MultiDiGraph, rules: HazardRules, res: EngineResult, structural: list[dict[str, Any]],
                 pins: dict[str, dict[str, Any]], *, max_depth: int, files_parsed: int,
                 include_near_misses: bool) -> dict[str, Any]:
    findings: dict[str, dict[str, Any]] = {}
    misses: dict[str, dict[str, Any]] = {}
    for hit in res.sinks:
        entry = _value_entry(g, rules, hit)
        neutral = effective_neutraliser(rules, hit.flow)
        off_wire = _off_wire(rules, hit)
        unchanged = _unchanged_choice(rules, entry)
        if unchanged is not None and neutral is None:
            entry.update(reason=unchanged.reason, dismissed_by=unchanged.name)
            entry["id"] = finding_id(entry["id"], unchanged.name)
            _keep(misses, entry)
        elif off_wire is not None and neutral is None:
            entry.update(reason=off_wire, dismissed_by=rules.wire_rules.get(hit.site.part, "wire-fields"))
            entry["id"] = finding_id(entry["id"], "wire")
            _keep(misses, entry)
        elif neutral is not None:
            n = next(x for x in rules.neutralisers if x.name == neutral)
            entry.update(reason=n.reason, dismissed_by=neutral)
            _keep(misses, entry)
        else:
            if hit.flow.path:  # a field the [[wire]] rule of its part lets through
                entry["wire_rule"] = rules.wire_rules.get(hit.site.part)
            written = res.writers.get((hit.flow.origin.repo, hit.flow.origin.path, hit.flow.origin.line))
            if written:  # the source reads a stored record's field: who writes it
                entry["writers_of"] = written[0]
                entry["writers"] = [w.to_json() for w in written[1]]
            _keep(findings, entry)
            continue
        entry.update(_effect_fields(rules.effect(None, entry["granularity"], entry["dismissed_by"])))
    replays = res.replays
    for hit in res.misses:
        entry = _value_entry(g, rules, hit)
        entry["sink"]["part"] = None
        # an append to a session log whose replay renders it unchanged (replay.py): decided, not assumed
        replayed = replays.unchanged.get(hit) if replays.rule is not None else None
        dismissed_by = replays.rule.name if replays.rule is not None and replayed else hit.site.rule
        entry.update(reason=replayed or replays.rerendering.get(hit) or hit.site.part, dismissed_by=dismissed_by)
        entry.update(_effect_fields(rules.effect(None, entry["granularity"], dismissed_by)))
        entry["id"] = finding_id(entry["id"], dismissed_by)
        _keep(misses, entry)
    _rerendered(rules, res, findings)
    _covered_choices(rules, findings, misses)
    for entry in (*findings.values(), *misses.values()):
        entry["rules"] = rules_of(rules, entry)
    cut = cut_flows(res)
    # a flow that is a finding somewhere is not also a near-miss for the same source
    found_sources = {(f["source"]["repo"], f["source"]["path"], f["source"]["line"]) for f in findings.values()}
    near = [m for m in misses.values()
            if (m["source"]["repo"], m["source"]["path"], m["source"]["line"]) not in found_sources]
    ordered = sorted([*findings.values(), *structural], key=_order)
    return {
        "schema": SCHEMA, "pins": pins, "rules": {"files": rules.files, "hash": rules.text_hash},
        "max_depth": max_depth, "findings": ordered, "hazards": group_findings(g, ordered),
        "near_misses": sorted(near, key=_order) if include_near_misses else [], "near_miss_count": len(near),
        "cut_flows": cut,
        "stats": {"roots": res.roots, "functions": res.functions, "files_parsed": files_parsed,
                  "truncated": res.truncated, "unmapped": len(res.unmapped)},
        "limits": LIMITS,
    }


# Where a flow stops without an answer (the rule names of `flow.py`'s misses and the store dismissal).
CUT_REASONS = {
    "not-followed": "a call without a call-graph edge",
    "unknown-callee": "an edge to a function whose body could not be read",
    "depth-limit": "a callee beyond --max-depth",
    "stored": "a store (session log, file): treated as replayed unchanged",
}


def cut_flows(res: EngineResult, top: int = 15) -> dict[str, Any]:
    """How many volatile flows stopped where the analysis could not follow them, by reason, and the
    places that cut most (each flow counted once per place: source expression × cut site)."""
    seen: set[tuple[Any, ...]] = set()
    places: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    for hit in res.misses:
        o, site = hit.flow.origin, hit.site
        if o.kind != "source" or site.rule not in CUT_REASONS:
            continue
        key = (o.repo, o.path, o.line, o.text, site.rule, site.repo, site.path, site.line)
        if key in seen:
            continue
        seen.add(key)
        where = (site.rule, site.repo, site.path, site.line)
        entry = places.setdefault(where, {"reason": site.rule, "repo": site.repo, "path": site.path,
                                          "line": site.line, "text": site.text, "flows": 0})
        entry["flows"] += 1
    by_reason = {r: sum(p["flows"] for p in places.values() if p["reason"] == r) for r in CUT_REASONS}
    ranked = sorted(places.values(), key=lambda p: (-p["flows"], p["repo"], p["path"], p["line"]))
    return {"total": sum(by_reason.values()), "by_reason": by_reason, "reasons": CUT_REASONS,
            "places": ranked[:top]}


def _off_wire(rules: HazardRules, hit: Hit) -> str | None:
    """Why a flow that reached a sink inside a field is not sent, or None when it is (see [[wire]])."""
    path = hit.flow.path
    if not path:
        return None
    sent = rules.wire_fields.get(hit.site.part, set())
    off = [] if "*" in sent else [p for p in path if p not in sent]
    if not off:
        return None
    return (f"only inside field {'.'.join(path)} of the value; {off[0]!r} is not among the fields sent for "
            f"{hit.site.part} (rule [[wire]])")


def _rerendered(rules: HazardRules, res: EngineResult, findings: dict[str, dict[str, Any]]) -> None:
    """Message-history findings whose value a session log's replay computes itself while it re-renders the
    stored entries (replay.py): their message is `re-rendered`, and the effect rule says what that costs."""
    replays = res.replays
    if replays.rule is None or not replays.sources:
        return
    for f in findings.values():
        src = f["source"]
        found = replays.sources.get((src["repo"], src["path"], src["line"]))
        if found is None or f["sink"]["part"] != "message history" \
                or not any(s["why"].startswith(f"returned by {found[0]} ") for s in f["steps"]):
            continue
        f["sink"]["message"] = "re-rendered"
        f["sink"]["replay"] = {"rule": replays.rule.name, "function": found[0], "appends": list(found[1])}
        f.update(_effect_fields(rules.effect("message history", f["granularity"], message="re-rendered")))


def rules_of(rules: HazardRules, entry: dict[str, Any]) -> list[str]:
    """Every rule that decided something about this entry: its source, sink, effect, granularity, dismissal,
    the history rule of a replayed message, and the rules of its steps (carriers, seams, neutralisers)."""
    named = {entry["source"].get("rule"), entry["sink"].get("rule"), entry.get("effect_rule"),
             entry.get("granularity_rule"), entry.get("dismissed_by")}
    named |= {r for s in entry["steps"] for r in str(s.get("rule", "")).split()}
    named.add(entry.get("wire_rule"))
    named.add((entry["sink"].get("replay") or {}).get("rule"))
    if entry["sink"].get("message") == "replayed":
        named |= {rules.history_rule}
    if entry["sink"].get("message") == "appended":
        named |= {rules.appended_rule}
    return sorted(n for n in named if n)


def _covered_choices(rules: HazardRules, findings: dict[str, dict[str, Any]],
                     misses: dict[str, dict[str, Any]]) -> None:
    """Move to the near-misses the control findings whose test sits in a function whose own (non-control)
    volatile value reaches the same sink ([[covered_choice]])."""
    if rules.covered_choice is None:
        return
    name, reason = rules.covered_choice
    valued = {(f["source"]["function"], _sink_key(f)) for f in findings.values() if "control" not in f}
    for key, f in list(findings.items()):
        if "control" in f and (f["source"]["function"], _sink_key(f)) in valued:
            del findings[key]
            f.update(reason=reason, dismissed_by=name, effect=None, effect_rule=None, effect_reason=None)
            f["id"] = finding_id(f["id"], name)
            _keep(misses, f)


def _sink_key(f: dict[str, Any]) -> tuple[Any, ...]:
    s = f["sink"]
    return (s["repo"], s["path"], s["line"], s["part"])


def _unchanged_choice(rules: HazardRules, entry: dict[str, Any]) -> UnchangedChoice | None:
    """The [[unchanged_choice]] rule a control finding matches (its alternatives send the same text)."""
    if "control" not in entry:
        return None
    sink = entry["sink"]
    return next((u for u in rules.unchanged_choices
                 if sink["part"] in u.parts and (not u.message or sink.get("message") == u.message)), None)


def _keep(into: dict[str, dict[str, Any]], entry: dict[str, Any]) -> None:
    """One entry per id: the shortest chain explains it best."""
    old = into.get(entry["id"])
    if old is None or len(entry["steps"]) < len(old["steps"]):
        into[entry["id"]] = entry


def _order(e: dict[str, Any]) -> tuple[Any, ...]:
    place = e.get("source") or e.get("sink") or {}
    return (_effect_rank(e.get("effect")), e["category"], place.get("repo", ""), place.get("path", ""),
            place.get("line", 0), e["id"])


def _effect_rank(effect: str | None) -> int:
    return EFFECTS.index(effect) if effect in EFFECTS else len(EFFECTS)


def validate_hazards_json(data: dict[str, Any]) -> list[str]:
    """Structural check of a hazards document (used by tests and by readers of saved JSON)."""
    problems = []
    for key, kind in (("schema", str), ("pins", dict), ("findings", list), ("hazards", list), ("near_misses", list),
                      ("stats", dict), ("limits", list), ("near_miss_count", int)):
        if not isinstance(data.get(key), kind):
            problems.append(f"{key}: expected {kind.__name__}")
    if data.get("schema") != SCHEMA:
        problems.append(f"schema: expected {SCHEMA}")
    for group in ("findings", "near_misses"):
        for i, f in enumerate(data.get(group, [])):
            for key in ("id", "category"):
                if key not in f:
                    problems.append(f"{group}[{i}].{key}: missing")
            if f.get("category") == "value":
                for key in ("kind", "granularity", "source", "steps", "sink"):
                    if key not in f:
                        problems.append(f"{group}[{i}].{key}: missing")
                if f.get("kind") == "control" and len((f.get("control") or {}).get("branches", [])) < 2:
                    problems.append(f"{group}[{i}].control: expected the test and two or more branches")
                for key in ("repo", "path", "line", "rule"):
                    if key not in f.get("source", {}):
                        problems.append(f"{group}[{i}].source.{key}: missing")
            elif f.get("category") == "structural":
                for key in ("rule", "description", "evidence", "sink"):
                    if key not in f:
                        problems.append(f"{group}[{i}].{key}: missing")
            else:
                problems.append(f"{group}[{i}].category: expected value or structural")
            if group == "findings" and f.get("effect") not in EFFECTS:
                problems.append(f"{group}[{i}].effect: expected one of the effects")
            if group == "findings" and f.get("granularity") not in GRANULARITIES:
                problems.append(f"{group}[{i}].granularity: expected one of the granularities")
            if group == "near_misses" and "reason" not in f:
                problems.append(f"{group}[{i}].reason: missing")
    return problems
