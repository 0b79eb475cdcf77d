"""Extension point: reconciliation deltas between two pin sets.

The usage package (`analyzer.usage`) replays the pinned upstream usage code. When it exposes
`ledger_for_pins(ctx, pins) -> dict` (a JSON-able ledger), a re-check diffs the two ledgers here, with
`analyzer.usage.delta.ledger_deltas` when present (else a generic leaf diff); until then
`reconciliation_deltas` reports `available: false` and the re-check report says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analyzer.lock import RepoPin

if TYPE_CHECKING:
    from analyzer.analysis import Workspace

LEDGER_FUNCTION = "ledger_for_pins"


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def diff_ledgers(old: Any, new: Any) -> list[dict[str, Any]]:
    """Every leaf that differs: {"key", "old", "new"} (None for a missing side)."""
    a, b = _flatten(old), _flatten(new)
    return [{"key": k, "old": a.get(k), "new": b.get(k)} for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def reconciliation_deltas(ctx: Workspace, old_pins: list[RepoPin], new_pins: list[RepoPin]) -> dict[str, Any]:
    """{"available": bool, "deltas": [...], "reason": str|None}."""
    try:
        import analyzer.usage as usage
    except Exception as exc:  # the usage package failing to import must not break a re-check
        return {"available": False, "deltas": [], "reason": f"analyzer.usage could not be imported ({exc})"}
    fn = getattr(usage, LEDGER_FUNCTION, None)
    if fn is None:
        return {"available": False, "deltas": [],
                "reason": f"analyzer.usage has no {LEDGER_FUNCTION}() yet (reconciliation replay not wired in)"}
    try:
        from analyzer.usage.delta import ledger_deltas as differ
    except ImportError:
        differ = diff_ledgers
    try:
        return {"available": True, "deltas": differ(fn(ctx, old_pins), fn(ctx, new_pins)), "reason": None}
    except Exception as exc:  # report, do not crash: the path comparison is still valid
        return {"available": False, "deltas": [], "reason": f"ledger replay failed: {type(exc).__name__}: {exc}"}
