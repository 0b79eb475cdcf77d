"""Shared by graph commands: build/load the analysis with a progress bar on a terminal only."""

from __future__ import annotations

from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from analyzer.analysis import Analysis, analyze, apply_at
from analyzer.cli.context import CliContext


def add_at_option(parser: Any) -> None:
    parser.add_argument("--at", action="append", metavar="NAME=SHA",
                        help="analyse NAME at another commit for this run (the lock is not edited)")


def load_analysis(ctx: CliContext, args: Any, *, need_program: bool = False, rebuild: bool = False) -> Analysis:
    pins = apply_at(ctx.lock, getattr(args, "at", None))
    if not ctx.interactive:
        return analyze(ctx, pins=pins, need_program=need_program, rebuild=rebuild)
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=ctx.err, transient=True) as progress:
        return analyze(ctx, pins=pins, need_program=need_program, rebuild=rebuild, progress=progress)
