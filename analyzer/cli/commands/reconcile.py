"""`analyze reconcile [SCENARIO]`: replay provider usage through the pinned Pi and dsh usage code, per route."""

from __future__ import annotations

import argparse

from analyzer.cli.context import CliContext
from analyzer.cli.options import add_record_option
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from analyzer.usage.routes import route_choices  # light: the rule file, like the languages of records

    try:
        routes = list(route_choices())  # the route rule file's names, then "both"
    except AnalyzerError:  # a broken route file is one error line when reconcile runs, not in every parser
        routes = []
    parser.add_argument("scenario", nargs="?", default=None, metavar="SCENARIO",
                        help="a shipped scenario name or a TOML path (default: deepseek-10k; --list shows them)")
    parser.add_argument("--list", action="store_true", help="list the shipped scenarios and exit")
    parser.add_argument("--from-log", default=None, metavar="FILE.jsonl",
                        help="replay the raw usage of an `analyze observe` log, one request per row")
    parser.add_argument("--route", choices=routes or None, default=routes[-1] if routes else None,
                        help=f"one route of analyzer/rules/usage/routes.toml ({', '.join(routes[:-1])}), "
                             f"or {', '.join(routes[-1:])} and compare (the default)")
    parser.add_argument("--at", action="append", default=[], metavar="NAME=SHA",
                        help="replay NAME at another commit (or tag) without editing the lock (repeatable)")
    parser.add_argument("--repo-dir", action="append", default=[], metavar="NAME=GITDIR",
                        help="read NAME from this git dir or clone instead of the synced cache (repeatable)")
    add_record_option(parser, "the research record of the reconciliation")
    parser.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG,
                        help="language of the record's headings and sentences; numbers and names stay as they are")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from pathlib import Path

    from analyzer.api.reconcile import ReconcileOptions, reconcile, shipped_scenarios
    from analyzer.usage.render import render_document
    from analyzer.usage.repos import parse_assignments

    if args.list:
        names = shipped_scenarios()
        if ctx.json:
            ctx.emit_json({"scenarios": names})
        else:
            for name in names:
                ctx.out.print(name, markup=False)
        return 0
    at = parse_assignments(args.at, "--at", "pi=b4f293684bba718d59cc1157679bcf6157b3a7f5")
    dirs = parse_assignments(args.repo_dir, "--repo-dir", "pi=/srv/mirrors/pi.git")
    to_file = args.record not in (None, "-")
    options = ReconcileOptions(args.scenario, Path(args.from_log) if args.from_log else None, args.route, at, dirs,
                               record=args.record is not None, record_file=Path(args.record) if to_file else None,
                               lang=args.lang)
    done = reconcile(ctx.session(), options)
    doc, record = done.document, done.record
    if to_file:
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
