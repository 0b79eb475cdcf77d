"""Mark, in a report, the hops where a hazard enters the request path (see `compare.hop_marks`)."""

from __future__ import annotations

from typing import Any

from analyzer.analysis import Analysis, Workspace


def mark_hazards(ctx: Workspace, analysis: Analysis, report: dict[str, Any]) -> None:
    """Adds `hazards` (marks) to every hop and a `hazards` summary to the report; a failure is noted in
    the report and warned about, never fatal (the path is still worth writing)."""
    from analyzer.hazards.compare import hop_marks
    from analyzer.hazards.run import hazards_for

    try:
        result = hazards_for(ctx, analysis)
    except Exception as exc:  # the report without marks is still correct
        report["hazards"] = {"available": False, "reason": f"{type(exc).__name__}: {exc}", "findings": 0}
        ctx.warn(f"hazards not marked: {exc}")
        for hop in report["hops"]:
            hop["hazards"] = []
        return
    marks = hop_marks(report["hops"], result)
    for hop in report["hops"]:
        hop["hazards"] = marks.get(hop["node"], [])
    report["hazards"] = {"available": True, "reason": None, "findings": len(result["findings"]),
                         "marked": sum(len(m) for m in marks.values())}
