"""Build/start progress for the CLI: a rich bar on a terminal, a line per stage (and per 10%) otherwise."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from analyzer.engine.build import Progress, stage_printer


@contextmanager
def build_progress(ctx) -> Iterator[Progress]:
    """Yield a `progress(stage, done, total)` callback bound to the CLI's stderr console."""
    if not ctx.interactive:
        yield stage_printer(lambda line: ctx.err.print(line, markup=False))
        return
    from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    with Bar(TextColumn("engine: {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
             console=ctx.err, transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                for other in tasks.values():
                    bar.update(other, visible=False)
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)
            bar.refresh()  # a few hundred steps in many minutes: draw each one, not on rich's timer

        yield progress
