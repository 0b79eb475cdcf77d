"""`analyze recheck [FROM TO]`: what changed on the request path between two pin sets."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_path_arguments, session_for

if TYPE_CHECKING:
    from analyzer.api.recheck import RecheckOptions

NAME = "recheck"
HELP = "compare the request path at two pin sets (default: repos.lock at git HEAD vs the working file)"
ORDER = 32
DESCRIPTION = (
    HELP + ". The verdict is unchanged, changed bodies, rerouted (old and new hops side by side, the seam where "
    "they part) or broken, with the first cause it can prove for a rerouted or broken path (a symbol removed or "
    "renamed, an import that stopped resolving and the aliases line that fixes a renamed package, a dispatch "
    "rule that stopped matching, a call site removed); writes reports/recheck_<old>_<new>.md. Exit 0: unchanged; "
    "1: changed bodies, rerouted, or unchanged with something to look at (a move, a stale note, a new hazard); "
    "2: broken (FROM/TO gone or no path at the new pins); 3: could not run."
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


def options(args: Any) -> RecheckOptions:
    """The re-check options as parsed (shared with `analyze bump`)."""
    from analyzer.api.recheck import RecheckOptions

    return RecheckOptions(args.from_symbol, args.to_symbol, max_depth=args.max_depth,
                          allow_guesses=args.allow_guesses, old_from=getattr(args, "from_", None),
                          old_commits=getattr(args, "from_commit", None), out=args.out,
                          annotations=args.annotations)


def finish(args: Any, ctx: CliContext, result: dict[str, Any], path: Path | None) -> int:
    from analyzer.recheck import print_summary

    if ctx.json:
        ctx.emit_json(dict(result, report=str(path) if path else None))
    else:
        print_summary(result, ctx.out, str(path) if path else None)
    return int(result["exit_code"])


def run(args: Any, ctx: CliContext) -> int:
    from analyzer.api.recheck import recheck

    with session_for(ctx) as session:
        done = recheck(session, options(args))
    return finish(args, ctx, done.document, done.report_path)
