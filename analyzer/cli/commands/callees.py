"""`analyze callees SYMBOL...`: what SYMBOL calls (see callers.py)."""

from __future__ import annotations

from typing import Any

from analyzer.cli.commands import callers
from analyzer.cli.context import CliContext

NAME = "callees"
HELP = "what SYMBOL calls (edge kind, call site, evidence); several symbols share one graph load"
ORDER = 23
add_arguments = callers.add_arguments


def run(args: Any, ctx: CliContext) -> int:
    return callers.run(args, ctx, direction="out")
