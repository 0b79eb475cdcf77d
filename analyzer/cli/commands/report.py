"""`analyze report [FROM TO]`: write the traced path as trace.md, trace.html and trace.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.cli.commands.trace import compute_trace
from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_at_option, add_path_arguments, load_analysis

NAME = "report"
HELP = "write the request path as a Markdown, HTML and JSON report with source excerpts and notes"
ORDER = 30
DESCRIPTION = (HELP + ". Output: reports/<dsh-short>_<pi-short>/ beside repos.lock (or --out). The report quotes "
               "upstream code, so it is generated locally and git-ignored. Exit 0 when a path is found, 1 when not.")


def add_arguments(parser: Any) -> None:
    add_path_arguments(parser)
    parser.add_argument("--out", type=Path, metavar="DIR", help="output folder (default reports/<shorts>/)")
    parser.add_argument("--annotations", type=Path, metavar="FILE",
                        help="notes file (default reports/annotations.toml beside the lock)")
    parser.add_argument("--no-hazards", action="store_true", help="do not mark the hops where hazards enter")
    add_at_option(parser)


def run(args: Any, ctx: CliContext) -> int:
    from analyzer.annotations import load_notes, locate_notes
    from analyzer.report import build_report, reader_for, report_dirname, write_report

    args.all = 1
    notes_file = locate_notes(ctx.lock.path, args.annotations, must_exist=True)
    notes = load_notes(notes_file.path)
    analysis = load_analysis(ctx, args)
    trace = compute_trace(ctx, args, analysis)
    report = build_report(trace, analysis.graph, reader_for(ctx, analysis.pins), notes,
                          notes_file.as_json(len(notes)))
    if not args.no_hazards:
        from analyzer.hazards.report import mark_hazards

        mark_hazards(ctx, analysis, report)
    out = args.out or ctx.lock.path.resolve().parent / "reports" / report_dirname(trace["pins"])
    files = write_report(report, out)
    if ctx.json:
        ctx.emit_json({"found": report["found"], "files": [str(f) for f in files], "hops": len(report["hops"]),
                       "notes": {h["symbol"]: h["note"]["status"] for h in report["hops"] if h["note"]},
                       "notes_file": report["notes_file"]})
    else:
        status = f"{len(report['hops'])} hops" if report["found"] else "no path found"
        ctx.out.print(f"report ({status}): " + ", ".join(str(f) for f in files), markup=False)
        ctx.out.print(notes_file.describe(len(notes)), markup=False)
        stale = [h for h in report["hops"] if h["note"] and h["note"]["status"] != "ok"]
        for h in stale:
            ctx.out.print(f"  note on {h['symbol']}: {h['note']['status']}", markup=False)
    return 0 if report["found"] else 1
