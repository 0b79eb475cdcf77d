"""`analyze annotate SYMBOL "text"`: add or update a note on a symbol (or list/remove notes)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.cli.context import CliContext
from analyzer.cli.graphload import add_at_option, load_analysis
from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.annotations import Note

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
    from analyzer.annotations import Note, load_notes, locate_notes, remove_note, upsert_note
    from analyzer.graph.queries import resolve_one

    notes_file = locate_notes(ctx.lock.path, args.annotations)
    path = notes_file.path
    notes = load_notes(path)
    if args.symbol is None:
        return _list(args, ctx, notes, notes_file.describe(len(notes)))
    if args.text is None and not args.remove:
        raise AnalyzerError("annotate needs TEXT (or --remove, or no SYMBOL to list the notes)")
    analysis = load_analysis(ctx, args)
    g = analysis.view
    node = resolve_one(g, args.symbol, include_tests=args.include_tests).node
    a = g.nodes[node]
    if args.remove:
        if not remove_note(path, a["repo"], a["qualname"], a["path"]):
            raise AnalyzerError(f"no note on {a['repo']}:{a['qualname']} in {path}")
        ctx.out.print(f"removed the note on {a['repo']}:{a['qualname']} from {path}", markup=False)
        return 0
    text = _read_stdin() if args.text == "-" else args.text
    if not text.strip():
        raise AnalyzerError("the note text is empty; write what this symbol does to the request")
    commit = next(p.commit for p in analysis.pins if p.name == a["repo"])
    if not a.get("body_hash"):
        raise AnalyzerError(f"{node} has no body hash in the index (kind {a.get('kind')}); annotate a definition")
    note = Note(a["repo"], a["qualname"], text.strip(), commit, a["body_hash"], a["path"])
    action = upsert_note(path, note)
    if ctx.json:
        ctx.emit_json({"action": action, "file": str(path), "repo": note.repo, "symbol": note.symbol,
                       "path": note.path, "commit": note.commit, "body_hash": note.body_hash})
    else:
        ctx.out.print(f"{action} note on {note.repo}:{note.symbol} ({note.path}:{a['line']}, commit "
                      f"{commit[:10]}) in {path}", markup=False)
    return 0


def _read_stdin() -> str:
    import sys

    return sys.stdin.read()


def _list(args: Any, ctx: CliContext, notes: list[Note], source: str) -> int:
    from analyzer.annotations import anchor_all

    if not ctx.json:
        ctx.out.print(source, markup=False)
    if not notes:
        if ctx.json:
            ctx.emit_json([])
        else:
            ctx.out.print("no notes yet; add one with: analyze annotate SYMBOL \"text\"", markup=False)
        return 0
    analysis = load_analysis(ctx, args)
    anchored = anchor_all(analysis.view, notes)
    if ctx.json:
        ctx.emit_json([x.as_json() for x in anchored])
        return 0
    for x in anchored:
        where = f"{x.path}:{x.line}" if x.path else "-"
        ctx.out.print(f"{x.status:<9} {x.note.repo}:{x.note.symbol}  {where}" + ("  (moved)" if x.moved else ""),
                      markup=False)
    return 0
