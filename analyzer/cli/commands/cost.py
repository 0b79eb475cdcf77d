"""`analyze cost LOG`: each recorded request priced at its own time, the cache's savings, the money each break lost."""

from __future__ import annotations

import argparse
from pathlib import Path

from analyzer.cli.context import CliContext
from analyzer.cli.options import add_record_option, record_file
from analyzer.errors import AnalyzerError
from analyzer.records.i18n import DEFAULT_LANG, LANGS

NAME = "cost"
ORDER = 48
HELP = "what a recorded log cost at a provider's prices, what the cache saved, what each prefix break lost"
DESCRIPTION = (
    "Reads a log written by `analyze proxy` or `analyze observe` (rows with usage and started_at). Each request is "
    "priced at its own recorded time (UTC) by the provider's published prices (analyzer/rules/prices/*.toml, each "
    "with its source URL and the date checked; DeepSeek's peak / off-peak hours and holidays included): tokens by "
    "bucket (uncached input, cache read, cache write, output), money, the same log with no cache, and the money "
    "each prefix break lost (the tokens it made the provider recompute × the price difference), grouped by the "
    "break's cause as `analyze prefix` finds it. --what-if retention: whether keep-warm requests would pay for "
    "the recorded idle gaps, and from which gap on they stop paying."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", type=Path, metavar="LOG", help="a JSONL log written by `analyze proxy` or `observe`")
    parser.add_argument("--provider", default=None, help="deepseek, openai, anthropic, gemini (default: detected "
                                                         "from the rows, or assumed and said)")
    parser.add_argument("--model", default=None, help="the model to price as (default: each request's own)")
    parser.add_argument("--prices", type=Path, default=None, metavar="FILE",
                        help="your own price file (TOML, format in docs/cost.md); replaces the shipped one of its "
                             "provider")
    parser.add_argument("--engine-url", default=None, metavar="URL",
                        help="a llama.cpp server to tokenize the breaks with (default: estimated, and said)")
    parser.add_argument("--plot", type=Path, default=None, metavar="FILE",
                        help="draw the session as a timeline (.svg or .png)")
    parser.add_argument("--what-if", dest="whatif", choices=["retention"], default=None,
                        help="retention: does keeping the cache warm pay for the recorded idle gaps")
    parser.add_argument("--warm-every", type=float, default=None, metavar="MIN",
                        help="keep-warm interval in minutes (default: just under the cache's TTL)")
    parser.add_argument("--ttl", type=float, default=None, metavar="MIN",
                        help="assume this cache TTL in minutes where the provider documents none (said)")
    parser.add_argument("--fix", action="append", default=[], metavar="SPEC",
                        help="what-if of a fix, priced under the same rules: sort-tools, replace:REGEX=TEXT, "
                             "move-last:REGEX (system lines into the last message), move-end:REGEX; repeatable")
    add_record_option(parser, "the research record of what reuse was worth")
    parser.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG,
                        help="language of the record's headings and sentences; numbers and names stay as they are")
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE",
                        help="a server setting the rows lack, for the cache model (e.g. slots=1); repeatable")
    parser.add_argument("--rule", default=None,
                        help="the cache model's rule for the what-ifs (default: the provider's, or detected)")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.api.cost import CostOptions, cost
    from analyzer.cost.text import report_lines
    from analyzer.observe.jsonl import read_rows

    if args.plot is not None and args.plot.suffix.lower() not in (".svg", ".png"):
        raise AnalyzerError(f"--plot {args.plot}: the file must end in .svg or .png", exit_code=2)
    rows = read_rows(args.log)
    if not rows:
        raise AnalyzerError(f"{args.log} holds no rows; pass a log written by `analyze proxy`")
    report = cost(rows, CostOptions(provider=args.provider, model=args.model, prices=args.prices,
                                    engine_url=args.engine_url, log=str(args.log),
                                    whatif_retention=args.whatif == "retention", warm_every_min=args.warm_every,
                                    ttl_min=args.ttl, fixes=tuple(args.fix), rule=args.rule,
                                    settings=tuple(args.setting)))
    if args.plot is not None:
        from analyzer.cost.plot import draw_timeline

        draw_timeline(report, args.plot)
    record = None
    to_file = record_file(args.record)
    if args.record is not None:
        from analyzer.atomic import write_text_atomic
        from analyzer.cost.record import record_markdown

        record = record_markdown(report, args.lang)
        if to_file is not None:
            try:
                write_text_atomic(to_file, record)
            except OSError as exc:
                raise AnalyzerError(f"--record {to_file}: cannot write it ({exc.strerror})") from None
    if ctx.json:
        doc = report.as_json()
        if to_file is not None:
            doc["record_file"] = to_file
        elif record is not None:
            doc["record"] = record
        ctx.emit_json(doc)
    else:
        for line in report_lines(report):
            ctx.out.print(line, markup=False)
        lines: list[str] = []
        if "retention" in report.whatif:
            from analyzer.cost.retention import retention_lines

            lines += retention_lines(report.whatif["retention"], report.currency)
        if "fix" in report.whatif:
            from analyzer.cost.fixsim import fix_lines

            lines += fix_lines(report.whatif["fix"], report.currency)
        for line in lines:
            ctx.out.print(line, markup=False)
        if args.plot is not None:
            ctx.out.print(f"timeline: {args.plot}", markup=False)
        if to_file is not None:
            ctx.out.print(f"wrote {to_file}", markup=False)
        elif record is not None:
            ctx.out.print("", markup=False)
            ctx.out.print(record, markup=False, highlight=False)
    return 0
