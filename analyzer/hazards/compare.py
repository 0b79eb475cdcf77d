"""Hazards at two pin sets: which findings are new and which are gone (for `analyze recheck`).

Findings are matched by id — rule, source symbol and expression, request part — so a hazard that only
moved lines is neither new nor gone.
"""

from __future__ import annotations

from typing import Any


def hazard_deltas(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """{"available": True, "old_count", "new_count", "new": [finding…], "gone": [finding…]}."""
    old_ids = {f["id"] for f in old["findings"]}
    new_ids = {f["id"] for f in new["findings"]}
    return {"available": True, "reason": None, "old_count": len(old_ids), "new_count": len(new_ids),
            "new": [f for f in new["findings"] if f["id"] not in old_ids],
            "gone": [f for f in old["findings"] if f["id"] not in new_ids]}


def unavailable(reason: str) -> dict[str, Any]:
    return {"available": False, "reason": reason, "old_count": 0, "new_count": 0, "new": [], "gone": []}


def describe(f: dict[str, Any]) -> str:
    """One line for a finding: what, where it starts, where it lands."""
    if f["category"] == "structural":
        s = f["sink"]
        return f"structural {f['rule']} at {s['repo']}:{s['path']}:{s['line']}"
    src, sink = f["source"], f["sink"]
    return (f"{f['kind']} → {sink['part']}: {src['text']} at {src['repo']}:{src['path']}:{src['line']} "
            f"reaches {sink['repo']}:{sink['path']}:{sink['line']}")


def hop_marks(hops: list[dict[str, Any]], result: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """For `analyze report`: per hop node, the hazards that *enter the path* there — the first step of a
    finding's chain (or a structural hazard's evidence line) that lies inside that hop's body."""
    marks: dict[str, list[dict[str, Any]]] = {}
    for f in result["findings"]:
        places = f.get("steps") or [f["sink"]]
        for step in places:
            hop = next((h for h in hops if h["repo"] == step["repo"] and h["path"] == step["path"]
                        and h["line"] <= step["line"] <= (h.get("end_line") or h["line"])), None)
            if hop is not None:
                marks.setdefault(hop["node"], []).append({
                    "id": f["id"], "category": f["category"], "line": step["line"],
                    "why": step.get("why") or f.get("description", ""), "summary": describe(f)})
                break
    return marks
