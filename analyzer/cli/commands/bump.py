"""`analyze bump NAME REF`: pin NAME to REF and re-check the path, in one step.

The new commit is fetched and indexed *before* repos.lock is touched: the ref is resolved and fetched
against a scratch copy of the lock, the graph is built at the new pins, and only then is the one table
rewritten (atomically). Any failure before that leaves the lock byte for byte as it was.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from analyzer.cli.commands.recheck import add_common, finish, options
from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_path_arguments, session_for
from analyzer.errors import AnalyzerError
from analyzer.lock import load_lock

NAME = "bump"
HELP = "pin NAME to REF and re-check the request path (lock untouched if REF cannot be fetched or indexed)"
ORDER = 33
DESCRIPTION = HELP + (". Verdict and exit codes as for 'analyze recheck' (0 unchanged, 1 changed bodies or "
                      "rerouted or worth a look, 2 broken, 3 could not run).")


def add_arguments(parser: Any) -> None:
    parser.add_argument("name", metavar="NAME", help="the upstream, as named in the lock")
    parser.add_argument("ref", metavar="REF", help="tag, branch or commit sha")
    add_path_arguments(parser, include_tests=False)
    add_common(parser)


def run(args: Any, ctx: CliContext) -> int:
    from analyzer.annotations import load_notes, locate_notes
    from analyzer.api import open_analysis
    from analyzer.api.recheck import recheck
    from analyzer.api.trace import endpoints
    from analyzer.sources import git_progress, pin_ref
    from analyzer.sources.lockedit import rewrite_pin

    lock = ctx.lock
    pin = lock.get(args.name)
    endpoints(lock, args.from_symbol, args.to_symbol, "recheck")  # before anything is fetched
    notes = load_notes(locate_notes(lock.path, args.annotations, must_exist=True).path)
    original = lock.path.read_bytes()
    with tempfile.TemporaryDirectory(prefix="analyzer-bump-") as tmp:
        scratch = Path(tmp) / lock.path.name
        shutil.copyfile(lock.path, scratch)
        with git_progress(ctx.err, pin.name, ctx.interactive) as sink:
            change = pin_ref(load_lock(scratch), pin.name, args.ref, ctx.cache_dir,
                             url=ctx.source_for(pin.name, pin.url), progress=sink)
        if not change.changed:
            ctx.out.print(f"{pin.name}: already pinned to {change.ref or '-'} {change.commit[:12]}; "
                          f"{lock.path} unchanged, nothing to re-check", markup=False)
            return 0
        new_pins = list(load_lock(scratch).repos.values())
    try:
        with session_for(ctx) as session:
            new_analysis = open_analysis(session, pins=new_pins)
    except AnalyzerError as exc:
        raise AnalyzerError(f"{pin.name} at {change.commit[:12]} could not be indexed ({exc}); "
                            f"{lock.path} unchanged") from None
    except Exception as exc:  # an indexing bug must not leave a half-done bump behind
        raise AnalyzerError(f"{pin.name} at {change.commit[:12]} could not be indexed ({type(exc).__name__}: {exc});"
                            f" {lock.path} unchanged; rerun with -v and report it") from None
    if lock.path.read_bytes() != original:
        raise AnalyzerError(f"{lock.path} changed while bumping; it was left as it is now, run the bump again")
    rewrite_pin(lock.path, pin.name, change.ref, change.commit)
    ctx.out.print(f"{pin.name}: {change.old_ref or '-'} {change.old_commit[:12]} -> {change.ref or '-'} "
                  f"{change.commit[:12]} in {lock.path}", markup=False)
    with session_for(ctx) as session:
        done = recheck(session, options(args), old_pins=list(lock.repos.values()), new_pins=new_pins,
                       old_origin=f"{lock.path.name} before the bump", new_origin=f"{lock.path.name} after the bump",
                       new_analysis=new_analysis, notes=notes)
    return finish(args, ctx, done.document, done.report_path)
