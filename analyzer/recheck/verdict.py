"""The verdict of a re-check: how the path changed, the hops side by side, and counts that match them.

Verdicts (`path_change`):
- `unchanged`: the same hops in the same order, no body changed (exit 0, or 1 when something else is
  noteworthy: a move, a stale note, a rule that stopped matching, a new hazard, a changed value);
- `changed bodies`: the same hops, and the body of at least one changed (exit 1);
- `rerouted`: a path still exists but through other hops (exit 1); `seam` says where old and new part;
- `broken`: no path at the new pins, or FROM/TO gone (exit 2).

Hops are compared by identity (repo, qualified name), as everywhere in the re-check.
"""

from __future__ import annotations

import difflib
from typing import Any

VERDICT_EXIT = {"unchanged": 0, "changed bodies": 1, "rerouted": 1, "broken": 2}


def _key(h: dict[str, Any] | None) -> tuple[str, str] | None:
    return None if h is None else (h["repo"], h["symbol"])


def side_by_side(old_hops: list[dict[str, Any]], new_hops: list[dict[str, Any]]) -> dict[str, Any]:
    """Rows `{"old", "new", "same"}` aligning the two hop lists (longest common run first), and the seam:
    the last shared hop before they part (`parts_after`) and the first shared hop after (`rejoins_at`)."""
    a = [(h["repo"], h["symbol"]) for h in old_hops]
    b = [(h["repo"], h["symbol"]) for h in new_hops]
    rows: list[dict[str, Any]] = []
    seam: dict[str, Any] | None = None
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [{"old": old_hops[i], "new": new_hops[j], "same": True}
                     for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
            if seam is not None and seam.get("rejoins_at") is None:
                seam["rejoins_at"] = _label(old_hops[i1])
            continue
        if seam is None:
            seam = {"parts_after": _label(old_hops[i1 - 1]) if i1 > 0 else None, "rejoins_at": None,
                    "old": [_label(h) for h in old_hops[i1:i2]], "new": [_label(h) for h in new_hops[j1:j2]]}
        width = max(i2 - i1, j2 - j1)
        for k in range(width):
            rows.append({"old": old_hops[i1 + k] if i1 + k < i2 else None,
                         "new": new_hops[j1 + k] if j1 + k < j2 else None, "same": False})
    return {"rows": rows, "seam": seam}


def _label(h: dict[str, Any]) -> str:
    return f"{h['repo']}:{h['symbol']} ({h['path']}:{h['line']})"


def membership(h: dict[str, Any], found_old: bool, found_new: bool) -> str | None:
    """`kept`, `added` (only on the new path), `removed` (only on the old one), or None (on neither, or
    one side has no path: then nothing joined or left a path)."""
    if not (found_old and found_new):
        return None
    if h["on_old_path"] and h["on_new_path"]:
        return "kept"
    if h["on_new_path"]:
        return "added"
    if h["on_old_path"]:
        return "removed"
    return None


def counts(r: dict[str, Any]) -> dict[str, Any]:
    """The summary numbers, each computed from the same per-hop fields the hop list prints."""
    hops = r["hops"]
    return {
        "added": sum(1 for h in hops if h.get("membership") == "added"),
        "removed": sum(1 for h in hops if h.get("membership") == "removed"),
        "moved": sum(1 for h in hops if {"moved-file", "moved-line"} & set(h["changes"])),
        "bodies changed": sum(1 for h in hops if "body-changed" in h["changes"]),
        "rules stopped": len(r["rules_stopped"]),
        "notes stale/orphaned": sum(1 for a in r["annotations"] if a["status"] in ("stale", "orphaned")),
        "hazards new/gone": "{}/{}".format(len((r.get("hazards") or {}).get("new", [])),
                                           len((r.get("hazards") or {}).get("gone", []))),
    }


def path_change(r: dict[str, Any]) -> str:
    if r["broken"]["at_new"]:
        return "broken"
    if not r["old_path"]["found"]:
        return "rerouted"  # no path before, one now: the new route is all there is to read
    if [_key(h) for h in r["old_path"]["hop_list"]] != [_key(h) for h in r["new_path"]["hop_list"]]:
        return "rerouted"
    ends = [ep for ep in r["endpoints"].values()]
    if any("body-changed" in h["changes"] for h in r["hops"]) or any("body-changed" in e["changes"] for e in ends):
        return "changed bodies"
    return "unchanged"
