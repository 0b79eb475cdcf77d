"""`prefix`: a proxy log explained — the cache model's state and prediction per request, the conversation
each belongs to, where it first differs from the request it is compared with, the code that wrote the
difference (a thin face over analyzer.prefix and analyzer.cachemodel)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.api.session import Session
from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.prefix.attribute import LiteralLookup
    from analyzer.prefix.run import PrefixReport
    from analyzer.prefix.tokens import Renderer


@dataclass(frozen=True)
class PrefixOptions:
    """`against`: None (lineage), a row number, or "control"; `engine_url`: a llama.cpp server to render and
    tokenize with (else `renderer`, else estimates); `rule`: the cache rule (else detected); `settings`: server
    cache settings the rows lack (win over the rows); `findings`: `analyze hazards --json` findings; `lookup`:
    a literal lookup on the pinned sources."""

    against: int | str | None = None
    engine_url: str | None = None
    renderer: Renderer | None = None
    rule: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    findings: Iterable[dict[str, Any]] = ()
    lookup: LiteralLookup | None = None


def prefix(log: Path | Sequence[Path] | list[dict[str, Any]],
           options: PrefixOptions = PrefixOptions()) -> PrefixReport:
    """The prefix report of a proxy log (a path; several paths of one server, read as one log with rows
    numbered across them; or rows already read)."""
    from analyzer.prefix import analyse

    items: Sequence[Any] = [log] if isinstance(log, Path) else log
    paths = [p for p in items if isinstance(p, Path)]
    if paths:
        from analyzer.observe.jsonl import read_rows

        rows: list[dict[str, Any]] = []
        for path in paths:
            found = read_rows(path)
            if not found:
                raise AnalyzerError(f"{path} holds no rows; pass a log written by `analyze proxy`")
            rows += found
        name: str | None = ", ".join(map(str, paths))
    else:
        rows, name = [r for r in items if isinstance(r, dict)], None
    return analyse(rows, against=options.against, renderer=options.renderer, engine_url=options.engine_url,
                   rule=options.rule, findings=options.findings, lookup=options.lookup, log=name,
                   settings=dict(options.settings) or None)


@dataclass(frozen=True)
class PinnedLookup:
    """A literal lookup on the pinned sources (None when none could be read) and the sentence that says what
    it covers: which repos at which commits, whether it is ranked on a request path, what was left out."""

    lookup: LiteralLookup | None
    note: str | None


def pinned_lookup(session: Session, at: list[str] | None = None) -> PinnedLookup:
    """A source lookup over the index (and data files) of every pinned repo whose checkout is in the cache,
    placed on the request path of the stored call graph of those pins when `analyze index` has built one.
    `at` (NAME=SHA items) moves pins as the graph commands do; only a moved pin's commit is fetched (the
    caller named it), the lock's own are read from the cache as they are."""
    from analyzer.analysis import apply_at
    from analyzer.graph.store import graph_key, load_view
    from analyzer.index.build import index_repo
    from analyzer.index.cache import FactsCache
    from analyzer.lock import RepoPin
    from analyzer.prefix.request_path import RequestPath
    from analyzer.prefix.source_lookup import SourceLookup
    from analyzer.sources.workspace import open_repo

    at = at or []
    indexes, missing, repos = [], [], {}
    found: list[RepoPin] = []
    pins = apply_at(session.lock, at)
    moved = {item.partition("=")[0] for item in at}
    with FactsCache(session.cache_dir) as cache:
        for pin in pins:
            try:
                repo = open_repo(session, pin, fetch=pin.name in moved)
            except AnalyzerError as exc:
                if pin.name in moved:
                    raise  # the commit asked for with --at cannot be had: say so, not a quieter report
                missing.append(f"{pin.name} ({exc})")
                continue
            repos[pin.name] = repo
            found.append(pin)
            indexes.append(index_repo(repo, pin.commit, repo_name=pin.name, cache=cache))
    note = None
    if missing:
        note = "not looked up in " + "; ".join(missing)
    if not indexes:
        return PinnedLookup(None, note or "no pinned sources in the cache")
    lookup = SourceLookup(indexes, repos)
    view = load_view(session.cache_dir, graph_key(found), warn=session.warn) if not missing else None
    if view is not None:
        path = RequestPath.build(view, lookup)
        lookup.request_path = path
        placed = f"ranked on the request path of the stored call graph ({len(path.sends)} send(s))"
    else:
        placed = "not ranked on a request path (no call graph stored for these pins: run `analyze index`)"
    pinned = ", ".join(f"{i.name} @ {i.commit[:12]}" for i in indexes)
    return PinnedLookup(lookup, f"literals looked up in {pinned}; {placed}" + (f"; {note}" if note else ""))
