"""Re-anchor notes by symbol at another pin: found (maybe moved), stale (body changed) or orphaned (gone)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from analyzer.annotations.model import Note
from analyzer.graph.protocol import CallGraph

SKIP_KINDS = ("module", "unknown")
SIGNATURE_SIMILARITY = 0.75  # declaration-text similarity for "the same symbol, moved to another file and edited"


def find_symbol(g: CallGraph, repo: str, qualname: str, path_hint: str | None = None,
                body_hash: str | None = None, signature: str | None = None) -> str | None:
    """The node that is `repo`'s `qualname` in `g`, or None.

    Identity is (repo, qualified name). Among the definitions of that name the path hint wins, then an
    unchanged body, then the file with the same base name (a moved file), then — when the caller knows the
    old declaration — a similar signature. Without a signature a lone candidate is taken (notes re-anchor
    by symbol); otherwise no clue means None: guessing between, say, two modules' `stream` functions, or
    calling an unrelated `stream` in another file "moved", would report a bogus move."""
    cands = symbol_candidates(g, repo, qualname)
    if not cands:
        return None
    if len(cands) == 1 and signature is None:
        return cands[0]
    for pick in (
        lambda n: path_hint is not None and g.nodes[n]["path"] == path_hint,
        lambda n: bool(body_hash) and g.nodes[n].get("body_hash") == body_hash,
        lambda n: path_hint is not None and PurePosixPath(g.nodes[n]["path"]).name == PurePosixPath(path_hint).name,
    ):
        hits = [n for n in cands if pick(n)]
        if hits:
            return sorted(hits)[0]
    if signature:
        scored = sorted((_similarity(signature, g.nodes[n].get("signature") or ""), n) for n in cands)
        best, node = scored[-1]
        if best >= SIGNATURE_SIMILARITY and (len(scored) == 1 or scored[-2][0] < best):
            return node
    return None


def _similarity(a: str, b: str) -> float:
    """Symmetric declaration similarity (difflib's ratio depends on the argument order)."""
    return min(difflib.SequenceMatcher(None, a, b).ratio(), difflib.SequenceMatcher(None, b, a).ratio())


def symbol_candidates(g: CallGraph, repo: str, qualname: str) -> list[str]:
    """Every definition of `qualname` in `repo` (several files may define the same name)."""
    return sorted(n for n, a in g.nodes(data=True)
                  if a.get("repo") == repo and a.get("qualname") == qualname and a.get("kind") not in SKIP_KINDS)


@dataclass
class Anchored:
    """Where a note lands at the pins of `g`. status: "ok", "stale", "orphaned" or "not-pinned" (its repo is
    not among the analysed upstreams)."""

    note: Note
    status: str
    node: str | None = None
    path: str | None = None
    line: int | None = None
    end_line: int | None = None
    body_hash: str | None = None
    moved: bool = False  # found in another file than the path hint
    candidates: list[str] = field(default_factory=list)  # orphaned, but defined in several other files
    diff: list[str] = field(default_factory=list)  # filled by `note_body_diff` for stale notes
    diff_error: str | None = None

    def as_json(self) -> dict:
        n = self.note
        return {"repo": n.repo, "symbol": n.symbol, "path_hint": n.path, "text": n.text, "commit": n.commit,
                "body_hash": n.body_hash, "status": self.status, "node": self.node, "path": self.path,
                "line": self.line, "end_line": self.end_line, "current_body_hash": self.body_hash,
                "moved": self.moved, "diff": self.diff, "diff_error": self.diff_error, "candidates": self.candidates}


def anchor_note(g: CallGraph, note: Note) -> Anchored:
    pins = g.graph.get("pins")
    if pins and note.repo not in pins:
        return Anchored(note, "not-pinned")
    node = find_symbol(g, note.repo, note.symbol, note.path, note.body_hash)
    if node is None:
        return Anchored(note, "orphaned", candidates=symbol_candidates(g, note.repo, note.symbol))
    a = g.nodes[node]
    current = a.get("body_hash") or ""
    status = "stale" if current != note.body_hash else "ok"
    return Anchored(note, status, node, a["path"], a["line"], a["end_line"], current,
                    moved=note.path is not None and a["path"] != note.path)


def anchor_all(g: CallGraph, notes: list[Note]) -> list[Anchored]:
    return [anchor_note(g, n) for n in notes]
