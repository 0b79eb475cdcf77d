"""Compare the request path at two pin sets: what moved, what changed, where it broke.

Symbols are identified across pins by (repo, qualified name) — the same identity notes use — so a file
move or a line shift is reported as a move of the same hop, not as one hop removed and another added.

Result (`analyzer.recheck/1`, plain data; `exit_code` from the verdict `path_change` — see
`analyzer.recheck.verdict`: 0 unchanged, 1 changed bodies / rerouted / unchanged but noteworthy,
2 broken: FROM/TO gone or no path at the new pins; a hop that vanished while a path still exists is a
reroute, not a break):
{ "schema", "from", "to", "old": {"pins", "origin", "label"}, "new": {...},
  "endpoints": {"from": endpoint, "to": endpoint},
  "old_path": {"found", "hops": [node…], "mode", "anchor"}, "new_path": {...},
  "hops": [hop…], "edges": [edge check…], "broken": {"at_new": bool, "where": str|None, …},
  "path_change": "unchanged"|"changed bodies"|"rerouted"|"broken",
  "side_by_side": {"rows": [{"old", "new", "same"}…], "seam": {"parts_after", "rejoins_at", "old", "new"}}|None,
  "cause": {"kind", "text", …}|None,   # first proven cause (broken/rerouted): see analyzer.recheck.causes
  "old_break": str|None,   # where the path was already broken at the old pins (if it was)
  "rules_stopped": [...], "annotations": [...], "reconciliation": {...},
  "hazards": {"available", "reason", "old_count", "new_count", "new": [finding…], "gone": [finding…]},
  "notes": [str…],         # FROM/TO names with several definitions, and which one is compared
  "exit_code", "reasons": [str…] }

FROM and TO are resolved and traced by `analyzer.trace.search.trace_graph`, as `analyze trace` does: a
name with several definitions is compared as the definition the path uses (noted, not an error).
"""

from __future__ import annotations

from typing import Any

from analyzer.annotations import Note, anchor_note, body_diff, find_symbol, note_body_diff
from analyzer.graph.protocol import CallGraph
from analyzer.recheck.causes import first_cause, symbol_removed, unresolved_package_import
from analyzer.recheck.verdict import VERDICT_EXIT, membership, path_change, side_by_side
from analyzer.report.source import SourceReader
from analyzer.trace.defaults import DEFAULT_MAX_DEPTH
from analyzer.trace.search import SIDES, PathOptions, ambiguity_note, trace_graph

SCHEMA = "analyzer.recheck/1"
EXIT_OK, EXIT_CHANGED, EXIT_BROKEN = 0, 1, 2


def _loc(g: CallGraph, node: str | None) -> dict[str, Any] | None:
    if node is None or node not in g:
        return None
    a = g.nodes[node]
    return {"node": node, "repo": a["repo"], "symbol": a["qualname"], "path": a["path"], "line": a["line"],
            "end_line": a["end_line"], "body_hash": a.get("body_hash", ""), "kind": a.get("kind"),
            "signature": a.get("signature") or ""}


def trace_at(g: CallGraph, spec_from: str, spec_to: str, pins: dict[str, Any], *,
             max_depth: int = DEFAULT_MAX_DEPTH, allow_guesses: bool = False) -> dict[str, Any]:
    """The trace at one pin set (`trace_graph`, the function `analyze trace` calls), never raising for a
    symbol that is missing there. A name with several definitions stands for the one the path uses."""
    run = trace_graph(g, spec_from, spec_to, pins, PathOptions(max_depth=max_depth, allow_guesses=allow_guesses),
                      strict=False)
    out: dict[str, Any] = {"trace": run.document}
    for side in SIDES:
        out[f"{side}_node"] = run.used(side)
        out[f"{side}_error"] = run.errors.get(side)
        out[f"{side}_candidates"] = [m.node for m in run.matches.get(side, [])]
    return out


def _align_definitions(at_old: dict[str, Any], g_old: CallGraph, at_new: dict[str, Any], g_new: CallGraph) -> None:
    """A name with several definitions and a path at one pin set only: at the other, compare the
    counterpart of the definition the path uses, not whichever candidate comes first."""
    for here, g_here, there, g_there in ((at_new, g_new, at_old, g_old), (at_old, g_old, at_new, g_new)):
        if not (here["trace"] and here["trace"]["found"]) or (there["trace"] and there["trace"]["found"]):
            continue
        for side in SIDES:
            loc = _loc(g_here, here[f"{side}_node"])
            if loc is None or len(there[f"{side}_candidates"]) < 2:
                continue
            twin = _counterpart(g_there, loc)
            if twin in there[f"{side}_candidates"]:
                there[f"{side}_node"] = twin
        return


def _diff_hashes(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    if old is None or new is None:
        return []
    changes = []
    if old["path"] != new["path"]:
        changes.append("moved-file")
    elif old["line"] != new["line"]:
        changes.append("moved-line")
    if old["body_hash"] != new["body_hash"]:
        changes.append("body-changed")
    return changes


def _describe(old: dict[str, Any] | None, new: dict[str, Any] | None, changes: list[str]) -> str:
    if old is None and new is None:
        return "absent at both pins"
    if old is None:
        return f"new at the new pins ({new['path']}:{new['line']})"  # type: ignore[index]
    if new is None:
        return f"gone at the new pins (was {old['path']}:{old['line']})"
    parts = []
    if "moved-file" in changes:
        parts.append(f"moved from {old['path']}:{old['line']} to {new['path']}:{new['line']}")
    elif "moved-line" in changes:
        parts.append(f"moved from line {old['line']} to {new['line']} of {new['path']}")
    if "body-changed" in changes:
        parts.append("body changed")
    return "; ".join(parts) or f"unchanged at {new['path']}:{new['line']}"


def _body_diff(reader: SourceReader, old: dict[str, Any], new: dict[str, Any], old_commit: str,
               new_commit: str) -> list[str]:
    a = reader.lines(old["repo"], old_commit, old["path"], old["line"], old["end_line"])
    b = reader.lines(new["repo"], new_commit, new["path"], new["line"], new["end_line"])
    if a is None or b is None:
        return ["(body text unavailable from the cache; run 'analyze sync' for both pins)"]
    return body_diff(a, b, f"{old['repo']}@{old_commit[:10]}:{old['path']}:{old['line']}",
                     f"{new['repo']}@{new_commit[:10]}:{new['path']}:{new['line']}")


def _counterpart(g_other: CallGraph, loc: dict[str, Any]) -> str | None:
    return find_symbol(g_other, loc["repo"], loc["symbol"], loc["path"], loc["body_hash"], loc["signature"] or None)


def _symbol_report(reader: SourceReader, old: dict | None, new: dict | None, old_pins: dict, new_pins: dict,
                   ) -> dict[str, Any]:
    changes = _diff_hashes(old, new)
    out = {"old": old, "new": new, "changes": changes, "status": _describe(old, new, changes), "diff": []}
    if "body-changed" in changes and old and new:
        out["diff"] = _body_diff(reader, old, new, old_pins[old["repo"]]["commit"], new_pins[new["repo"]]["commit"])
    return out


def _endpoint(side: str, spec: str, at_old: dict, at_new: dict, g_old: CallGraph, g_new: CallGraph,
              reader: SourceReader, old_pins: dict, new_pins: dict) -> dict[str, Any]:
    old = _loc(g_old, at_old[f"{side}_node"])
    new = _loc(g_new, at_new[f"{side}_node"])
    rep = _symbol_report(reader, old, new, old_pins, new_pins)
    rep.update(spec=spec, old_error=at_old[f"{side}_error"], new_error=at_new[f"{side}_error"])
    if new is None:
        rep["status"] = f"gone at the new pins: {at_new[f'{side}_error']}"
    elif old is None:
        rep["status"] = f"not found at the old pins ({at_old[f'{side}_error']}); at the new pins " \
                        f"{new['path']}:{new['line']}"
    return rep


def _path_summary(at: dict) -> dict[str, Any]:
    t = at["trace"]
    if not t or not t["found"]:
        return {"found": False, "hops": [], "hop_list": [], "mode": None, "anchor": None, "confidence": None}
    keep = ("node", "repo", "symbol", "path", "line", "branch")
    return {"found": True, "hops": [h["node"] for h in t["hops"]], "mode": t["mode"], "anchor": t["anchor"],
            "hop_list": [{k: h[k] for k in keep} for h in t["hops"]], "confidence": t["confidence"]}


def _edge_checks(trace: dict | None, g_here: CallGraph, g_there: CallGraph) -> list[dict[str, Any]]:
    """Does every edge of `trace` (at these pins) still exist between the same symbols at the other pins?"""
    if not trace or not trace["found"]:
        return []
    out = []
    for i, e in enumerate(trace["edges"]):
        src, dst = _loc(g_here, e["source"]), _loc(g_here, e["target"])
        u = _counterpart(g_there, src) if src else None
        v = _counterpart(g_there, dst) if dst else None
        label = f"{src['symbol'] if src else e['source']} → {dst['symbol'] if dst else e['target']}"
        repo = src["repo"] if src else e["source"].split(":", 1)[0]
        check: dict[str, Any] = {"index": i + 1, "edge": label, "kind": e["kind"], "rule": e.get("rule"),
                                 "call": f"{repo}:{e.get('call_path')}:{e.get('call_line')}", "ok": False,
                                 "reason": "", "why": None, "source": e["source"], "target": e["target"],
                                 "source_symbol": src["symbol"] if src else e["source"],
                                 "target_symbol": dst["symbol"] if dst else e["target"],
                                 "source_new": u, "target_new": v,
                                 "attrs": {k: e.get(k) for k in ("kind", "rule", "call_text", "evidence")}}
        if u is None:
            check["reason"] = f"the caller {src['symbol'] if src else e['source']} is gone"
            check["why"] = "caller-gone"
        elif v is None:
            check["reason"] = f"the callee {dst['symbol'] if dst else e['target']} is gone"
            check["why"] = "callee-gone"
        else:
            there = [d for _, t, d in g_there.out_edges(u, data=True) if t == v]
            if not there:
                check["reason"] = f"{g_there.nodes[u]['qualname']} no longer calls {g_there.nodes[v]['qualname']}"
                check["why"] = "no-call"
            else:
                check["ok"] = True
                kinds = sorted({d["kind"] for d in there})
                rules = sorted({d.get("rule") or "" for d in there} - {""})
                if e["kind"] not in kinds or (e.get("rule") and e["rule"] not in rules):
                    check["changed"] = f"edge kind {e['kind']}{'/' + e['rule'] if e.get('rule') else ''} is now " \
                                       f"{', '.join(kinds)}{' / ' + ', '.join(rules) if rules else ''}"
                check["call_there"] = sorted({f"{d.get('path')}:{d.get('line')}" for d in there})
        out.append(check)
    return out


def _first_break(checks: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((c for c in checks if not c["ok"]), None)


def compare(g_old: CallGraph, g_new: CallGraph, old_pins: dict[str, Any], new_pins: dict[str, Any],
            spec_from: str, spec_to: str, reader: SourceReader, notes: list[Note] | None = None, *,
            max_depth: int = DEFAULT_MAX_DEPTH, allow_guesses: bool = False,
            aliases: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """The full comparison (see the module docstring); `old_pins`/`new_pins` are `Analysis.pins_json()`,
    `aliases` the lock's package aliases per repo (for the fix an unresolved import names)."""
    at_old = trace_at(g_old, spec_from, spec_to, old_pins, max_depth=max_depth, allow_guesses=allow_guesses)
    at_new = trace_at(g_new, spec_from, spec_to, new_pins, max_depth=max_depth, allow_guesses=allow_guesses)
    _align_definitions(at_old, g_old, at_new, g_new)
    endpoints = {side: _endpoint(side, spec, at_old, at_new, g_old, g_new, reader, old_pins, new_pins)
                 for side, spec in (("from", spec_from), ("to", spec_to))}
    old_path, new_path = _path_summary(at_old), _path_summary(at_new)
    hops = _hops(old_path, new_path, g_old, g_new, reader, old_pins, new_pins)

    checks = _edge_checks(at_old["trace"], g_old, g_new)
    brk = _first_break(checks)
    rules = _rules_stopped(g_old, g_new, at_old["trace"])
    broken: dict[str, Any] = {"at_new": False, "where": None, "edge": None}
    gone_ends = [s for s in ("from", "to") if at_new[f"{s}_node"] is None]
    if gone_ends:
        where = "; ".join(f"{s.upper()} not found at the new pins ({at_new[f'{s}_error']})" for s in gone_ends)
        if brk is not None:
            where += f"; first edge of the old path missing: edge {brk['index']} ({brk['edge']}, {brk['kind']} at " \
                     f"{brk['call']}): {brk['reason']}"
        broken.update(at_new=True, where=where, edge=brk)
    elif not new_path["found"]:
        broken["at_new"] = True
        if brk is not None:
            broken.update(where=f"edge {brk['index']} ({brk['edge']}, {brk['kind']} at {brk['call']}): "
                                f"{brk['reason']}", edge=brk)
        else:
            broken["where"] = ("no path at the new pins, although every edge of the old path still exists "
                               "(the call order in the anchor or the depth limit changed)" if old_path["found"]
                               else "no path at either pin set")
    old_break = None
    if not old_path["found"]:
        back = _first_break(_edge_checks(at_new["trace"], g_new, g_old))
        if at_old["from_node"] is None or at_old["to_node"] is None:
            gone = [s.upper() for s in ("from", "to") if at_old[f"{s}_node"] is None]
            old_break = f"{' and '.join(gone)} not found at the old pins"
        elif back is not None:
            old_break = (f"edge {back['index']} of the new path ({back['edge']}, {back['kind']} at {back['call']} in "
                         f"the new code) did not exist: {back['reason']} there")
        else:
            old_break = "no path at the old pins"

    ambiguity = _ambiguity_notes(at_old, at_new, {"from": spec_from, "to": spec_to})
    rules = _rules_stopped(g_old, g_new, at_old["trace"])
    annotations = _annotations(g_old, g_new, notes or [], reader, new_pins)
    result: dict[str, Any] = {
        "schema": SCHEMA, "from": spec_from, "to": spec_to,
        "endpoints": endpoints, "old_path": old_path, "new_path": new_path, "hops": hops, "edges": checks,
        "broken": broken, "old_break": old_break, "rules_stopped": rules, "annotations": annotations,
        "reconciliation": {"available": False, "deltas": [], "reason": "not computed"}, "notes": ambiguity,
    }
    result["path_change"] = path_change(result)
    result["side_by_side"] = side_by_side(old_path["hop_list"], new_path["hop_list"]) \
        if result["path_change"] == "rerouted" and old_path["found"] else None  # nothing to set beside a path
    result["cause"] = _cause(result, at_old, g_old, g_new, reader, old_pins, new_pins, aliases or {})
    result["reasons"], result["exit_code"] = _verdict(result)
    return result


def _hops(old_path: dict[str, Any], new_path: dict[str, Any], g_old: CallGraph, g_new: CallGraph,
          reader: SourceReader, old_pins: dict[str, Any], new_pins: dict[str, Any]) -> list[dict[str, Any]]:
    """Every hop of either path, old path order first; `membership` (kept/added/removed) and the status
    text come from the same two flags, so the summary counts and the list agree."""
    hops: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    found_old, found_new = old_path["found"], new_path["found"]
    for side, nodes, g_here, g_there in (("old", old_path["hops"], g_old, g_new),
                                         ("new", new_path["hops"], g_new, g_old)):
        for node in nodes:
            here = _loc(g_here, node)
            assert here is not None
            key = (here["repo"], here["symbol"])
            if key in seen:
                continue
            seen.add(key)
            there = _loc(g_there, _counterpart(g_there, here))
            old, new = (here, there) if side == "old" else (there, here)
            rep = _symbol_report(reader, old, new, old_pins, new_pins)
            on_old = old is not None and old["node"] in old_path["hops"]
            on_new = new is not None and new["node"] in new_path["hops"]
            rep.update(repo=key[0], symbol=key[1], on_old_path=on_old, on_new_path=on_new)
            rep["membership"] = membership(rep, found_old, found_new)
            if rep["membership"] == "removed":
                rep["status"] += "; no longer on the path"
            elif rep["membership"] == "added":
                rep["status"] += "; joined the path" if old is not None else "; on the new path"
            hops.append(rep)
    return hops


def _cause(r: dict[str, Any], at_old: dict[str, Any], g_old: CallGraph, g_new: CallGraph,
           reader: SourceReader, old_pins: dict[str, Any], new_pins: dict[str, Any],
           aliases: dict[str, list[str]]) -> dict[str, Any] | None:
    """The first cause the graphs prove, for a broken or rerouted path (None otherwise)."""
    if r["path_change"] not in ("broken", "rerouted"):
        return None
    for side in ("from", "to"):  # an endpoint that is gone explains everything after it
        ep = r["endpoints"][side]
        if ep["old"] is not None and ep["new"] is None:
            return dict(symbol_removed(g_old, g_new, ep["old"]["node"]), endpoint=side)
    brk = _first_break(r["edges"])
    if brk is not None:
        return dict(first_cause(brk, g_old, g_new, reader, old_pins, new_pins, aliases, r["rules_stopped"]),
                    edge=brk["index"])
    for label, path, g, pins in (("new", r["new_path"], g_new, new_pins), ("old", r["old_path"], g_old, old_pins)):
        to = r["endpoints"]["to"][label]
        if not path["found"] and to is not None:
            found = unresolved_package_import(g, reader, pins, to["repo"], to["path"], aliases, label)
            if found is not None:
                return found
    if not r["old_path"]["found"]:
        return {"kind": "no-old-path", "text": f"there was no path at the old pins ({r['old_break']})"}
    if r["path_change"] == "rerouted":
        return {"kind": "preferred-route",
                "text": f"every edge of the old path still exists at the new pins; the new path ranks higher "
                        f"(confidence {r['old_path']['confidence']:.2f} → {r['new_path']['confidence']:.2f}, "
                        f"{len(r['old_path']['hops'])} → {len(r['new_path']['hops'])} hops)"}
    return {"kind": "unknown", "text": "every edge of the old path still exists, yet no path was found (the call "
                                       "order in the anchor or the depth limit changed); run 'analyze trace' at "
                                       "both pin sets to compare"}


def _ambiguity_notes(at_old: dict[str, Any], at_new: dict[str, Any], specs: dict[str, str]) -> list[str]:
    """The trace's ambiguity note at each pin set (once when both say the same)."""
    said: dict[str, list[str]] = {}
    for label, at in (("old", at_old), ("new", at_new)):
        on_path = bool(at["trace"] and at["trace"]["found"])
        said[label] = [ambiguity_note(specs[side], at[f"{side}_candidates"], at[f"{side}_node"], on_path=on_path)
                       for side in SIDES if len(at[f"{side}_candidates"]) > 1]
    if said["old"] == said["new"]:
        return [f"at both pin sets: {x}" for x in said["new"]]
    return [f"at the {label} pins: {x}" for label in ("old", "new") for x in said[label]]


def _rules_stopped(g_old: CallGraph, g_new: CallGraph, trace: dict | None) -> list[dict[str, Any]]:
    old = (g_old.graph.get("stats") or {}).get("rule_matches") or {}
    new = (g_new.graph.get("stats") or {}).get("rule_matches") or {}
    on_path = {e.get("rule") for e in (trace or {}).get("edges", []) if e.get("rule")}
    return [{"rule": r, "old_matches": n, "new_matches": new.get(r, 0), "on_path": r in on_path}
            for r, n in sorted(old.items()) if n and not new.get(r)]


def _annotations(g_old: CallGraph, g_new: CallGraph, notes: list[Note], reader: SourceReader,
                 new_pins: dict) -> list[dict[str, Any]]:
    out = []
    for note in notes:
        before, after = anchor_note(g_old, note), anchor_note(g_new, note)
        if after.status == "stale" and note.repo in new_pins:
            note_body_diff(reader, after, new_pins[note.repo]["commit"])
        row = after.as_json()
        row["old_status"] = before.status
        row["newly"] = after.status in ("stale", "orphaned") and before.status != after.status
        out.append(row)
    return out


def _verdict(r: dict[str, Any]) -> tuple[list[str], int]:
    """The reasons a human should look, and the exit code: the verdict's (`VERDICT_EXIT`), raised to 1 when
    an unchanged path still has something noteworthy (a move, a stale note, a rule, a hazard, a value)."""
    reasons: list[str] = []
    verdict = r["path_change"]
    cause = r.get("cause")
    if verdict == "broken":
        reasons.append(f"path broken at the new pins: {r['broken']['where']}")
    elif verdict == "rerouted":
        seam = r.get("side_by_side") and r["side_by_side"]["seam"]
        where = f" after {seam['parts_after']}" if seam and seam["parts_after"] else ""
        reasons.append(f"the path is rerouted{where}" if r["old_path"]["found"] else
                       "a path exists at the new pins")
    if cause:
        reasons.append(f"cause: {cause['text']}")
    for side in ("from", "to"):
        ep = r["endpoints"][side]
        if ep["changes"]:
            reasons.append(f"{side.upper()} {ep['spec']}: {ep['status']}")
    ends = {(ep[x]["repo"], ep[x]["symbol"]) for ep in r["endpoints"].values() for x in ("old", "new") if ep[x]}
    for h in r["hops"]:
        if (h["repo"], h["symbol"]) in ends:
            continue
        if h["changes"] or h["membership"] in ("added", "removed") or (h["on_old_path"] and h["new"] is None):
            reasons.append(f"hop {h['repo']}:{h['symbol']}: {h['status']}")
    for c in r["edges"]:
        if c.get("changed"):
            reasons.append(f"edge {c['edge']}: {c['changed']}")
        elif not c["ok"] and verdict != "broken":
            reasons.append(f"edge {c['edge']}: {c['reason']} (the new path goes another way)")
    if not r["old_path"]["found"] and r["new_path"]["found"]:
        reasons.append(f"the path did not exist at the old pins ({r['old_break']})")
    for rule in r["rules_stopped"]:
        reasons.append(f"dispatch rule {rule['rule']} stopped matching ({rule['old_matches']} → 0)"
                       + (" — it was used on the path" if rule["on_path"] else ""))
    for a in r["annotations"]:
        if a["newly"]:
            reasons.append(f"note on {a['repo']}:{a['symbol']} is now {a['status']}")
    if r["reconciliation"]["deltas"]:
        reasons.append(f"{len(r['reconciliation']['deltas'])} reconciliation value(s) changed")
    for f in (r.get("hazards") or {}).get("new", []):
        from analyzer.hazards.compare import describe

        reasons.append(f"new hazard {f['id']}: {describe(f)}")
    code = VERDICT_EXIT[verdict]
    if code == EXIT_OK and reasons:
        code = EXIT_CHANGED
    return reasons, code


def refresh_verdict(result: dict[str, Any]) -> None:
    """Recompute reasons/exit code after filling in parts computed elsewhere (reconciliation deltas)."""
    result["reasons"], result["exit_code"] = _verdict(result)
