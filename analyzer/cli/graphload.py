"""Shared by graph commands: the library session for this run, with a progress bar on a terminal only.

Imported by command modules at start-up, so the analysis (networkx, GitPython) and rich's progress bar
are imported only when a command actually loads a graph."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from analyzer.cli.context import CliContext
from analyzer.trace.defaults import DEFAULT_MAX_DEPTH

if TYPE_CHECKING:
    from analyzer.analysis import Analysis
    from analyzer.api.session import Session


def depth(text: str) -> int:
    """argparse type for --max-depth: a path needs at least one call, so 0 or less is a usage error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1 (a path has at least one call)")
    return value


def add_path_arguments(parser: Any, *, include_tests: bool = True) -> None:
    """FROM/TO and the path-search options shared by trace, report and recheck."""
    parser.add_argument("from_symbol", nargs="?", metavar="FROM")
    parser.add_argument("to_symbol", nargs="?", metavar="TO")
    parser.add_argument("--max-depth", type=depth, default=DEFAULT_MAX_DEPTH, metavar="N",
                        help="longest path searched, in calls")
    parser.add_argument("--allow-guesses", action="store_true", help="let `name` (guessed) edges into paths")
    if include_tests:
        parser.add_argument("--include-tests", action="store_true", help="let paths run through test code")


def add_at_option(parser: Any) -> None:
    parser.add_argument("--at", action="append", metavar="NAME=SHA",
                        help="analyse NAME at another commit for this run (the lock is not edited)")


@contextmanager
def session_for(ctx: CliContext) -> Iterator[Session]:
    """The run's session; on a terminal its progress drives a (transient) bar on stderr while the block
    runs — keep rendering outside the block."""
    if not ctx.interactive:
        yield ctx.session(StageLines(ctx.err))
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=ctx.err, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def progress(what: str, done: int, total: int | None) -> None:
            if what not in tasks:
                tasks[what] = bar.add_task(what, total=total)
            bar.update(tasks[what], completed=done, total=total)

        yield ctx.session(progress)


class StageLines:
    """Progress without a terminal (a log, CI, a pipe): one line per finished stage, with its count and
    seconds — `indexing dsh: 2,775 files in 41.3 s` — so a cold build is never silent for minutes."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.started: dict[str, float] = {}
        self.finished: set[str] = set()

    def __call__(self, what: str, done: int, total: int | None) -> None:
        import time

        now = time.perf_counter()
        self.started.setdefault(what, now)
        if total is None or done < total or what in self.finished:
            return
        self.finished.add(what)
        unit = "edges" if what.startswith("resolving") else "files"
        self.console.print(f"{what}: {total:,} {unit} in {now - self.started[what]:.1f} s", markup=False)


def load_analysis(ctx: CliContext, args: Any, *, need_program: bool = False, rebuild: bool = False) -> Analysis:
    """The analysis at the lock's pins moved by `--at` (when the command has it)."""
    from analyzer.api import open_analysis

    with session_for(ctx) as session:
        return open_analysis(session, at=getattr(args, "at", None), need_program=need_program, rebuild=rebuild)
