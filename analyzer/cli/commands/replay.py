"""`analyze replay LOG`: re-send a recorded log (or its fixed version) to a real endpoint and measure its cache."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from analyzer.cli.context import CliContext
from analyzer.errors import AnalyzerError

NAME = "replay"
ORDER = 49
HELP = "re-send a recorded log (as recorded or fixed) to the local engine; measured vs predicted cache hits"
DESCRIPTION = (
    "Re-sends every recorded chat request of LOG in the recorded order and spacing (--spacing compressed: no "
    "waiting, said) to --url (default: the engine `analyze engine start` started), rewritten by --fix when given "
    "(the specs of `analyze cost --fix`), and records the answers as `analyze proxy` does (a new JSONL log under "
    "--out). Prints, per request, the cached tokens the endpoint reported beside the cache model's prediction for "
    "the same requests. A replay warms the endpoint's cache: replay the recorded and the fixed versions each on a "
    "freshly started engine to measure what a fix buys."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", type=Path, metavar="LOG", help="a JSONL log written by `analyze proxy`")
    parser.add_argument("--url", default=None, help="the endpoint's base URL ending in /v1 (default: the running "
                                                    "`analyze engine`)")
    parser.add_argument("--fix", action="append", default=[], metavar="SPEC", help="replay the log rewritten by "
                        "this fix (sort-tools, replace:REGEX=TEXT, move-last:REGEX, move-end:REGEX); repeatable")
    parser.add_argument("--spacing", choices=["recorded", "compressed"], default="recorded",
                        help="recorded: the recorded gaps; compressed: send each request when the previous ends")
    parser.add_argument("--max-gap", type=float, default=None, metavar="S", help="cap each recorded gap at S seconds")
    parser.add_argument("--out", type=Path, default=Path("observations"), metavar="DIR",
                        help="where the replay log goes (default: observations/)")
    parser.add_argument("--api-key-env", default=None, metavar="VAR",
                        help="the environment variable holding the endpoint's API key (never written anywhere)")
    parser.add_argument("--rule", default="llama.cpp", help="the cache model's rule for the prediction")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.api.cost import ReplayOptions, replay_log
    from analyzer.engine.state import running_base_url
    from analyzer.observe.jsonl import read_rows

    rows = read_rows(args.log)
    if not rows:
        raise AnalyzerError(f"{args.log} holds no rows; pass a log written by `analyze proxy`")
    url = args.url or running_base_url(ctx.cache_dir)
    if url is None:
        raise AnalyzerError("no endpoint: start the local engine (`analyze engine start`) or pass --url")
    key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if args.api_key_env and not key:
        raise AnalyzerError(f"--api-key-env {args.api_key_env}: the variable is not set")
    report = replay_log(rows, ReplayOptions(base_url=url, out_dir=args.out, fixes=tuple(args.fix),
                                            spacing=args.spacing, max_gap_s=args.max_gap, api_key=key,
                                            rule=args.rule))
    if ctx.json:
        ctx.emit_json(report.as_json())
        return 1 if report.failed else 0
    say = ctx.out.print
    say(f"replayed {len(report.rows):,} requests to {url} ({report.spacing})"
        + (f", fixed: {'; '.join(report.fixes)}" if report.fixes else ", as recorded"), markup=False)
    say(f"log: {report.log}", markup=False)
    say(f"{'row':>4} {'measured cached':>16} {'predicted':>10}", markup=False)
    for i, (r, m) in enumerate(zip(report.rows, report.measured, strict=True)):
        p = f"{report.predicted[i]:,}" if report.predicted else "—"
        say(f"{r.get('replayed_row'):>4} {('—' if m is None else f'{m:,}'):>16} {p:>10}", markup=False)
    total_m = sum(m or 0 for m in report.measured)
    predicted = f"{sum(report.predicted):,}" if report.predicted else "—"
    say(f"cached tokens: measured {total_m:,}, predicted {predicted} (cache model {report.rule})", markup=False)
    if report.note:
        say(f"note: {report.note}", markup=False)
    if report.failed:
        say(f"{report.failed:,} request(s) failed: see the log", markup=False)
    return 1 if report.failed else 0
