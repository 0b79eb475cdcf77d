"""`analyze report [FROM TO]`: write the traced path as trace.md, trace.html and trace.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.cli.commands.trace import trace_options
from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_at_option, add_path_arguments, session_for

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
    from analyzer.api.report import ReportOptions, report

    options = ReportOptions(trace_options(args), out=args.out, annotations=args.annotations,
                            hazards=not args.no_hazards)
    with session_for(ctx) as session:
        done = report(session, options, at=args.at)
    model, files = done.report, done.files
    if ctx.json:
        ctx.emit_json({"found": model["found"], "files": [str(f) for f in files], "hops": len(model["hops"]),
                       "notes": {h["symbol"]: h["note"]["status"] for h in model["hops"] if h["note"]},
                       "notes_file": model["notes_file"]})
    else:
        status = f"{len(model['hops'])} hops" if model["found"] else "no path found"
        ctx.out.print(f"report ({status}): " + ", ".join(str(f) for f in files), markup=False)
        ctx.out.print(done.notes_file.describe(done.notes_read), markup=False)
        stale = [h for h in model["hops"] if h["note"] and h["note"]["status"] != "ok"]
        for h in stale:
            ctx.out.print(f"  note on {h['symbol']}: {h['note']['status']}", markup=False)
    return 0 if model["found"] else 1
