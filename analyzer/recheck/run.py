"""One re-check end to end: analyse both pin sets, compare, add deltas, write the Markdown report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.analysis import Analysis, Workspace, analyze
from analyzer.annotations import Note
from analyzer.atomic import write_text_atomic
from analyzer.lock import RepoPin
from analyzer.recheck.compare import compare, refresh_verdict
from analyzer.recheck.pinsets import pins_label
from analyzer.recheck.render import render_recheck_markdown
from analyzer.recheck.usage_deltas import reconciliation_deltas
from analyzer.report.source import reader_for
from analyzer.trace.pathfinding import DEFAULT_MAX_DEPTH


def hazards_between(ctx: Workspace, old: Analysis, new: Analysis, *, max_depth: int) -> dict[str, Any]:
    """`analyze hazards` at both pin sets, as new/gone findings; a failure is reported, never fatal."""
    from analyzer.hazards.compare import hazard_deltas, unavailable
    from analyzer.hazards.run import hazards_for

    try:
        return hazard_deltas(hazards_for(ctx, old), hazards_for(ctx, new))
    except Exception as exc:  # the path comparison stays valid without the hazards section
        return unavailable(f"{type(exc).__name__}: {exc}")


def recheck(ctx: Workspace, old_pins: list[RepoPin], new_pins: list[RepoPin], spec_from: str, spec_to: str, *,
            notes: list[Note] | None = None, old_origin: str = "old", new_origin: str = "new",
            out_dir: Path | None = None, max_depth: int = DEFAULT_MAX_DEPTH, allow_guesses: bool = False,
            new_analysis: Analysis | None = None) -> tuple[dict[str, Any], Path | None]:
    """Compare the path at `old_pins` and `new_pins`; write `recheck_<old>_<new>.md` into `out_dir` (if
    given). The per-blob index cache makes the second analysis parse only blobs that changed."""
    old = analyze(ctx, pins=old_pins)
    new = new_analysis or analyze(ctx, pins=new_pins)
    reader = reader_for(ctx, new_pins)
    # the views answer everything the comparison asks; hazards materialise the full graphs themselves
    result = compare(old.view, new.view, old.pins_json(), new.pins_json(), spec_from, spec_to, reader, notes,
                     max_depth=max_depth, allow_guesses=allow_guesses,
                     aliases={p.name: list(p.aliases) for p in new_pins})
    result["old"] = {"pins": old.pins_json(), "origin": old_origin, "label": pins_label(old_pins)}
    result["new"] = {"pins": new.pins_json(), "origin": new_origin, "label": pins_label(new_pins)}
    # what the per-blob index cache saved: the second pin set re-parses only blobs that changed
    result["index"] = {"old": old.view.graph.get("index_stats", {}), "new": new.view.graph.get("index_stats", {})}
    result["reconciliation"] = reconciliation_deltas(ctx, old_pins, new_pins)
    result["hazards"] = hazards_between(ctx, old, new, max_depth=max_depth)
    refresh_verdict(result)
    path = None
    if out_dir is not None:
        path = out_dir / f"recheck_{pins_label(old_pins)}_{pins_label(new_pins)}.md"
        write_text_atomic(path, render_recheck_markdown(result))
    return result, path
