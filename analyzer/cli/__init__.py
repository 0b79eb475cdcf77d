"""The `analyze` command line: a thin layer over the library.

Each subcommand is a module in `analyzer.cli.commands` exposing `NAME`, `HELP`, `ORDER`,
`add_arguments(parser)` and `run(args, ctx) -> int`; they are discovered, so adding a command never
edits this file. Errors the user can fix become one `error:` line and a non-zero exit.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import traceback
from pathlib import Path
from types import ModuleType

from analyzer import __version__
from analyzer.cli import commands as commands_pkg
from analyzer.cli.context import CliContext
from analyzer.cli.interrupts import stop_on_signals
from analyzer.errors import AnalyzerError, LockError

EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


def _global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """Options accepted before or after the subcommand (SUPPRESS keeps subparsers from resetting them)."""
    d = (lambda value: argparse.SUPPRESS) if suppress else (lambda value: value)
    parser.add_argument("--lock", type=Path, default=d(None), metavar="PATH",
                        help="lock file (default: ./repos.lock, then the package's)")
    parser.add_argument("--cache-dir", type=Path, default=d(None), metavar="DIR",
                        help="cache for checkouts and the index (default: $ANALYZER_CACHE_DIR or the XDG cache dir)")
    parser.add_argument("--source", action="append", default=d([]), metavar="NAME=URL_OR_PATH",
                        help="fetch NAME from another URL or path for this run (also ANALYZER_SOURCE_<NAME>)")
    parser.add_argument("--json", action="store_true", default=d(False), help="machine-readable output")
    parser.add_argument("-v", "--verbose", action="count", default=d(0), help="more detail (repeatable)")


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the text already says it (argparse's own
    ArgumentDefaultsHelpFormatter also prints `(default: None)` and repeats defaults already written)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (default in (None, False, True, [], argparse.SUPPRESS) or not action.option_strings
                or text == argparse.SUPPRESS):
            return text
        shown = str(default)
        if "default" in text.lower() or shown in text or "%(default)" in text:
            return text
        return f"{text} (default: {shown.replace('%', '%%')})".lstrip()


def discover_commands() -> list[ModuleType]:
    mods = [importlib.import_module(f"{commands_pkg.__name__}.{info.name}")
            for info in pkgutil.iter_modules(commands_pkg.__path__) if not info.name.startswith("_")]
    mods = [m for m in mods if hasattr(m, "NAME") and hasattr(m, "run")]
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 100), m.NAME))


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    parser = argparse.ArgumentParser(
        prog="analyze",
        description="Trace how LLM applications reuse prompt/KV-cache computation, at pinned upstream commits.",
    )
    parser.add_argument("--version", action="version", version=f"analyze {__version__}")
    _global_options(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    by_name: dict[str, ModuleType] = {}
    for mod in discover_commands():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP),
                           formatter_class=DefaultsHelpFormatter)
        _global_options(p, suppress=True)
        if hasattr(mod, "add_arguments"):
            mod.add_arguments(p)
        by_name[mod.NAME] = mod
    return parser, by_name


def main(argv: list[str] | None = None) -> int:
    parser, by_name = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    ctx = CliContext(lock_path=args.lock, cache_dir_option=args.cache_dir, source_options=list(args.source),
                     json=args.json, verbose=args.verbose)
    restore_signals = stop_on_signals()  # Ctrl-C and SIGTERM raise KeyboardInterrupt, also in a background job
    try:
        ctx.source_overrides()  # a malformed --source is an error even when nothing needs fetching
        return int(by_name[args.command].run(args, ctx) or 0)
    except LockError as exc:
        for problem in exc.problems:
            ctx.err.print(f"error: {problem}", markup=False)
        return exc.exit_code
    except AnalyzerError as exc:
        ctx.err.print(f"error: {exc}", markup=False)
        return exc.exit_code
    except KeyboardInterrupt:
        ctx.err.print("interrupted; nothing half-written was left behind", markup=False)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug in analyzer, not bad input
        if args.verbose:
            traceback.print_exc()
        ctx.err.print(f"internal error: {type(exc).__name__}: {exc} (rerun with -v for the traceback "
                      "and report it)", markup=False)
        return EXIT_INTERNAL
    finally:
        restore_signals()


if __name__ == "__main__":
    sys.exit(main())
