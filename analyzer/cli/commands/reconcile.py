"""`analyze reconcile [SCENARIO]`: replay provider usage through the pinned Pi and dsh usage code, per route."""

from __future__ import annotations

import argparse
from typing import Any

from analyzer.cli.context import CliContext
from analyzer.errors import AnalyzerError
from analyzer.records.i18n import DEFAULT_LANG, LANGS

NAME = "reconcile"
ORDER = 40
HELP = "replay a usage scenario through the pinned upstream code (provider → Pi → dsh, or dsh's native adapter)"
DESCRIPTION = (
    "Executes the pinned upstream usage functions (Pi parseChunkUsage, dsh's two mapUsage functions — llm-pi-ai "
    "and llm-deepseek —, the token-meter fold, cacheHitPercent) in analyzer's own TypeScript-subset evaluator — "
    "never in Node — on a scenario's provider usage, and prints every number with the upstream line that produced "
    "it, the fields each layer drops, the invariants (✓/✗) and, for both routes, the numbers on which they "
    "disagree and why. Exit 0 when all invariants hold, 1 when some fail or a layer could not be located."
)
ROUTE_CHOICES = ("pi-ai", "deepseek-native", "both")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", nargs="?", default=None, metavar="SCENARIO",
                        help="a shipped scenario name or a TOML path (default: deepseek-10k; --list shows them)")
    parser.add_argument("--list", action="store_true", help="list the shipped scenarios and exit")
    parser.add_argument("--from-log", default=None, metavar="FILE.jsonl",
                        help="replay the raw usage of an `analyze observe` log, one request per row")
    parser.add_argument("--route", choices=ROUTE_CHOICES, default="both",
                        help="pi-ai (llm-pi-ai → Pi), deepseek-native (llm-deepseek), or both and compare (both)")
    parser.add_argument("--at", action="append", default=[], metavar="NAME=SHA",
                        help="replay NAME at another commit (or tag) without editing the lock (repeatable)")
    parser.add_argument("--repo-dir", action="append", default=[], metavar="NAME=GITDIR",
                        help="read NAME from this git dir or clone instead of the synced cache (repeatable)")
    parser.add_argument("--record", nargs="?", const="-", default=None, metavar="FILE",
                        help="write the Round 2 research record as Markdown to FILE (stdout when FILE is omitted)")
    parser.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG,
                        help="language of the record's headings and sentences; numbers and names stay as they are")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.usage.ledger import reconcile_routes, routes_for
    from analyzer.usage.pins import locator_for
    from analyzer.usage.render import render_document
    from analyzer.usage.repos import parse_assignments
    from analyzer.usage.scenarios import load_scenario, shipped_names

    if args.list:
        names = shipped_names()
        if ctx.json:
            ctx.emit_json({"scenarios": names})
        else:
            for name in names:
                ctx.out.print(name, markup=False)
        return 0
    scenario = _from_log(args, ctx) if args.from_log else load_scenario(args.scenario)
    routes = routes_for(args.route)
    repos = sorted({name for r in routes for name in r.repos})
    at = parse_assignments(args.at, "--at", "pi=b4f293684bba718d59cc1157679bcf6157b3a7f5")
    dirs = parse_assignments(args.repo_dir, "--repo-dir", "pi=/srv/mirrors/pi.git")
    for name in [*at, *dirs]:
        if name not in ("pi", "dsh"):
            raise AnalyzerError(f"unknown upstream {name!r} in --at/--repo-dir; reconcile reads pi, dsh")
    locators = {name: locator_for(ctx, ctx.lock.get(name), at.get(name), dirs.get(name)) for name in repos}
    doc = reconcile_routes(scenario, locators, routes)
    if args.from_log:  # an app experiment's log also holds what the app reported: the third witness
        from pathlib import Path

        from analyzer.usage.fromlog import three_witnesses

        witnesses = three_witnesses(Path(args.from_log), doc)
        if witnesses is not None:
            doc["witnesses"] = witnesses
    record = _record(args, ctx, doc, locators, dirs) if args.record else None
    if record is not None and args.record != "-":
        from analyzer.atomic import write_text_atomic

        try:
            write_text_atomic(args.record, record)
        except OSError as exc:
            raise AnalyzerError(f"cannot write {exc.filename or args.record}: {exc.strerror or exc}; "
                                "choose a writable path") from exc
        doc["record_file"] = args.record
    if ctx.json:
        if record is not None and args.record == "-":
            doc["record"] = record
        ctx.emit_json(doc)
    else:
        render_document(doc, ctx.out)
        if doc.get("witnesses"):
            from analyzer.usage.fromlog import witness_lines

            ctx.out.print()
            for line in witness_lines(doc["witnesses"]):
                ctx.out.print(line, markup=False)
        if record is not None and args.record == "-":
            ctx.out.print()
            ctx.out.print(record, markup=False, highlight=False)
        elif record is not None:
            ctx.out.print(f"wrote {args.record}", markup=False)
    return 0 if doc["ok"] else 1


def _from_log(args: argparse.Namespace, ctx: CliContext) -> Any:
    from pathlib import Path

    from analyzer.usage.fromlog import scenario_from_log

    if args.scenario:
        raise AnalyzerError("give a SCENARIO or --from-log FILE.jsonl, not both")
    scenario, notes = scenario_from_log(Path(args.from_log))
    for note in notes:
        ctx.warn(note)
    return scenario


def _record(args: argparse.Namespace, ctx: CliContext, doc: dict[str, Any], locators: dict[str, Any],
            dirs: dict[str, str]) -> str:
    """The Round 2 record; the request path comes from the trace at the same commits when it can be computed."""
    from analyzer.usage.record import reconcile_record, request_path

    path = request_path(ctx, {name: loc.commit for name, loc in locators.items()}, dirs)
    target = args.scenario or (f"--from-log {args.from_log}" if args.from_log else "")
    command = " ".join(a for a in ("--route " + args.route, target) if a)
    return reconcile_record(doc, locators, ctx, path, args.lang, command)
