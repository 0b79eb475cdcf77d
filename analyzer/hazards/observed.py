"""A finding confirmed on the app: read back the summary of the `observe` run of its experiment.

`analyze hazards --experiment ID` writes an app experiment whose `[source]` names the finding and hazard;
`analyze observe EXPERIMENT --json > run.json` runs it and prints the app summary (schema
`analyzer.observe.app-summary/1`). `analyze hazards --observed run.json` reads that summary back and states,
on the finding it names, whether varying the value changed the request and how many cached tokens the
variation cost — figures of that run only, each traceable to its request rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analyzer.errors import AnalyzerError

SUMMARY_SCHEMA = "analyzer.observe.app-summary/1"


def read_summary(path: Path) -> dict[str, Any]:
    """An app summary written by `analyze observe … --json`, or one `error:` saying what to pass instead."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AnalyzerError(f"--observed {path}: cannot read it as JSON ({exc}); pass the output of `analyze "
                            "observe EXPERIMENT --json` for an experiment `hazards --experiment` wrote") from None
    if not isinstance(data, dict) or data.get("schema") != SUMMARY_SCHEMA:
        raise AnalyzerError(f"--observed {path}: not an app summary (schema {SUMMARY_SCHEMA}); pass the output of "
                            "`analyze observe EXPERIMENT --json`")
    if not (data.get("source") or {}).get("finding") and not (data.get("source") or {}).get("hazard"):
        raise AnalyzerError(f"--observed {path}: its experiment names no finding ([source] finding/hazard); "
                            "write the experiment with `analyze hazards --experiment ID`")
    return data


def observation(summary: dict[str, Any], path: Path) -> dict[str, Any]:
    """What the run shows: requests of the varied series against the control's, whether any differed and the
    cached tokens the variation cost (control's cached minus the varied request's, per request index)."""
    rows = [r for r in summary.get("app_requests") or [] if isinstance(r, dict)]
    control = {r.get("index"): r for r in rows if r.get("series") == "control"}
    varied = [r for r in rows if r.get("series") != "control"]
    differs = [r for r in varied if r.get("first_divergence")]
    lost = 0
    for r in varied:
        base = control.get(r.get("index"))
        if base is not None and base.get("raw_cached") is not None and r.get("raw_cached") is not None:
            lost += max(0, int(base["raw_cached"]) - int(r["raw_cached"]))
    first = differs[0]["first_divergence"] if differs else None
    return {"record": str(path), "factor": (summary.get("vary") or {}).get("factor"),
            "requests": len(varied), "differed": len(differs), "observed": bool(differs),
            "cached_tokens_lost": lost, "first_divergence": first}


def attach(result: dict[str, Any], paths: list[Path]) -> dict[str, Any]:
    """The result with an `observed` entry on every finding an app summary names (by finding id, else every
    finding of the hazard it names); a summary that names no finding of this result is one `error:`."""
    findings = [f for f in result["findings"] if f.get("category") == "value"]
    for path in paths:
        summary = read_summary(path)
        source = summary["source"]
        hazard = next((h for h in result.get("hazards", []) if h["id"] == source.get("hazard")), None)
        wanted = {source.get("finding")} | set(hazard["branches"] if hazard else [])
        hit = [f for f in findings if f["id"] in wanted]
        if not hit:
            raise AnalyzerError(f"--observed {path}: finding {source.get('finding')} (hazard {source.get('hazard')}) "
                                "is not among this scan's findings; run it at the pins the experiment was written at")
        seen = observation(summary, path)
        for f in hit:
            f["observed"] = seen
    return result
