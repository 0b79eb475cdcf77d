"""`analyze recheck [FROM TO]`: what changed on the request path between two pin sets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_path_arguments
from analyzer.errors import AnalyzerError

NAME = "recheck"
HELP = "compare the request path at two pin sets (default: repos.lock at git HEAD vs the working file)"
ORDER = 32
DESCRIPTION = (
    HELP + ". Reports hops added, removed, moved and changed (with body diffs), where the path broke, dispatch "
    "rules that stopped matching and notes that went stale or orphaned; writes reports/recheck_<old>_<new>.md. "
    "Exit 0: nothing on the path changed; 1: changes need a human look; 2: the path is broken (a hop vanished, "
    "FROM/TO gone, no path at the new pins); 3: could not run."
)


def add_arguments(parser: Any) -> None:
    add_path_arguments(parser, include_tests=False)
    parser.add_argument("--from", dest="from_", metavar="LOCKFILE|GIT_REV",
                        help="old pins: a lock file, or a git revision of repos.lock (default HEAD)")
    parser.add_argument("--from-commit", action="append", metavar="NAME=SHA",
                        help="old pins: the working lock (or --from) with NAME moved to SHA (repeatable)")
    add_common(parser)


def add_common(parser: Any) -> None:
    """Options shared with `analyze bump`."""
    parser.add_argument("--out", type=Path, metavar="DIR", help="where to write the report (default reports/)")
    parser.add_argument("--annotations", type=Path, metavar="FILE",
                        help="notes file (default reports/annotations.toml beside the lock)")


def endpoints(args: Any, ctx: CliContext) -> tuple[str, str]:
    spec_from = args.from_symbol or ctx.lock.trace_from
    spec_to = args.to_symbol or ctx.lock.trace_to
    if not spec_from or not spec_to:
        raise AnalyzerError("recheck needs FROM and TO (or a [trace] table with from/to in repos.lock)")
    return spec_from, spec_to


def finish(args: Any, ctx: CliContext, result: dict[str, Any], path: Path | None) -> int:
    from analyzer.recheck import print_summary

    if ctx.json:
        ctx.emit_json(dict(result, report=str(path) if path else None))
    else:
        print_summary(result, ctx.out, str(path) if path else None)
    return int(result["exit_code"])


def run(args: Any, ctx: CliContext) -> int:
    from analyzer.annotations import load_notes, locate_notes
    from analyzer.recheck import old_pins, recheck

    spec_from, spec_to = endpoints(args, ctx)
    lock = ctx.lock
    before, origin = old_pins(lock, args.from_, args.from_commit)
    notes = load_notes(locate_notes(lock.path, args.annotations, must_exist=True).path)
    out = args.out or lock.path.resolve().parent / "reports"
    result, path = recheck(ctx, before, list(lock.repos.values()), spec_from, spec_to, notes=notes,
                           old_origin=origin, new_origin=f"working {lock.path.name}", out_dir=out,
                           max_depth=args.max_depth, allow_guesses=args.allow_guesses)
    return finish(args, ctx, result, path)
