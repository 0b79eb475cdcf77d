"""`analyze hazards`: what on the request path makes the cached prompt prefix unstable."""

from __future__ import annotations

from typing import Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import depth

NAME = "hazards"
HELP = "find volatile values (time, ids, env, ordering…) that reach the system prompt, tools or history"
ORDER = 27
DESCRIPTION = (HELP + ". Each finding prints the chain from the source expression to the request part, "
               "with lines and why each step carries the value. Exit 0 no findings, 1 findings, 3 bad input.")


def add_arguments(parser: Any) -> None:
    parser.add_argument("--all", action="store_true", help="also list near-misses and why each was dismissed")
    parser.add_argument("--max-depth", type=depth, default=6, metavar="N", help="call depth followed")
    parser.add_argument("--allow-guesses", action="store_true", help="follow `name` (guessed) edges too")
    parser.add_argument("--include-tests", action="store_true", help="read test code as well")
    parser.add_argument("--experiment", metavar="ID",
                        help="write an observe experiment that varies this finding's (or hazard's) value in the app")
    parser.add_argument("--explain", metavar="RULE",
                        help="print what a rule matches, why it matters, an example and the fix, then exit")
    parser.add_argument("--observed", action="append", metavar="RUN.json", default=[],
                        help="an app summary of `analyze observe EXPERIMENT --json` for an experiment --experiment "
                             "wrote: the finding says whether the variation was seen and what it cost")
    parser.add_argument("--out", metavar="FILE", help="where --experiment writes (default hazard-ID.toml)")
    parser.add_argument("--at", action="append", metavar="NAME=SHA",
                        help="analyse NAME at another commit for this run (the lock is not edited)")


def run(args: Any, ctx: CliContext) -> int:
    from analyzer.api.hazards import HazardOptions, hazards
    from analyzer.cli.graphload import session_for
    from analyzer.hazards.render import render_text

    if args.explain:
        return _explain(args.explain, ctx)
    options = HazardOptions(args.max_depth, include_near_misses=args.all, allow_guesses=args.allow_guesses,
                            include_tests=args.include_tests)
    with session_for(ctx) as session:
        result = hazards(session, options, at=args.at).document
    if args.observed:
        from pathlib import Path

        from analyzer.hazards.observed import attach

        result = attach(result, [Path(p) for p in args.observed])
    if args.experiment:
        from pathlib import Path

        from analyzer.hazards.experiment import write_experiment

        out = write_experiment(result, args.experiment, Path(args.out or f"hazard-{args.experiment}.toml"))
        ctx.out.print(f"wrote {out} (run it with `analyze observe {out}`)", markup=False)
        return 0
    if ctx.json:
        ctx.emit_json(result)
    else:
        render_text(result, ctx.out, verbose=ctx.verbose)
    return 1 if result["findings"] else 0


def _explain(name: str, ctx: CliContext) -> int:
    from analyzer.api.hazards import explain_rule

    found = explain_rule(name)
    if ctx.json:
        ctx.emit_json(found)
        return 0
    ctx.out.print(f"{found['rule']}  ([[{found['table']}]] in {found['file']})", markup=False)
    for key in ("what", "why", "example", "fix"):
        ctx.out.print(f"  {key:<8} {found.get(key, '(not written)')}", markup=False)
    return 0
