"""`analyze annotate SYMBOL "text"`: add or update a note on a symbol (or list/remove notes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_at_option, load_analysis
from analyzer.errors import AnalyzerError

NAME = "annotate"
HELP = "add or update a note on a symbol in reports/annotations.toml (keyed by symbol, not line)"
ORDER = 31
DESCRIPTION = (HELP + ". SYMBOL is a function, Class.method, a class or repo:path:Name; the note records the "
               "pinned commit and the symbol's body hash so later pins can show it as stale or orphaned. "
               "Without TEXT, lists the notes and their status at the current pins; --remove deletes one.")


def add_arguments(parser: Any) -> None:
    parser.add_argument("symbol", nargs="?", metavar="SYMBOL")
    parser.add_argument("text", nargs="?", metavar="TEXT", help="the note ('-' reads it from stdin)")
    parser.add_argument("--remove", action="store_true", help="delete the note on SYMBOL")
    parser.add_argument("--include-tests", action="store_true",
                        help="let SYMBOL name a definition in test code when production code defines it too")
    parser.add_argument("--annotations", type=Path, metavar="FILE",
                        help="notes file (default reports/annotations.toml beside the lock)")
    add_at_option(parser)


def run(args: Any, ctx: CliContext) -> int:
    from analyzer.annotations import load_notes, locate_notes
    from analyzer.api.annotations import annotate, remove_annotation

    notes_file = locate_notes(ctx.lock.path, args.annotations)
    found = load_notes(notes_file.path)  # a malformed notes file is the first error, whatever else is wrong
    if args.symbol is None:
        return _list(args, ctx, len(found), notes_file.describe(len(found)))
    if args.text is None and not args.remove:
        raise AnalyzerError("annotate needs TEXT (or --remove, or no SYMBOL to list the notes)")
    analysis = load_analysis(ctx, args)
    session = ctx.session()
    if args.remove:
        symbol, path = remove_annotation(session, args.symbol, annotations=args.annotations,
                                         include_tests=args.include_tests, analysis=analysis)
        ctx.out.print(f"removed the note on {symbol} from {path}", markup=False)
        return 0
    text = _read_stdin() if args.text == "-" else args.text
    done = annotate(session, args.symbol, text, annotations=args.annotations, include_tests=args.include_tests,
                    analysis=analysis)
    note = done.note
    if ctx.json:
        ctx.emit_json({"action": done.action, "file": str(done.file), "repo": note.repo, "symbol": note.symbol,
                       "path": note.path, "commit": note.commit, "body_hash": note.body_hash})
    else:
        ctx.out.print(f"{done.action} note on {note.repo}:{note.symbol} ({note.path}:{done.line}, commit "
                      f"{note.commit[:10]}) in {done.file}", markup=False)
    return 0


def _read_stdin() -> str:
    import sys

    return sys.stdin.read()


def _list(args: Any, ctx: CliContext, count: int, source: str) -> int:
    from analyzer.api.annotations import notes

    if not ctx.json:
        ctx.out.print(source, markup=False)
    if not count:
        if ctx.json:
            ctx.emit_json([])
        else:
            ctx.out.print("no notes yet; add one with: analyze annotate SYMBOL \"text\"", markup=False)
        return 0
    anchored = notes(ctx.session(), annotations=args.annotations, analysis=load_analysis(ctx, args)).anchored
    if ctx.json:
        ctx.emit_json([x.as_json() for x in anchored])
        return 0
    for x in anchored:
        where = f"{x.path}:{x.line}" if x.path else "-"
        ctx.out.print(f"{x.status:<9} {x.note.repo}:{x.note.symbol}  {where}" + ("  (moved)" if x.moved else ""),
                      markup=False)
    return 0
