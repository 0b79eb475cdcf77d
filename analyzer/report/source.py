"""Read upstream source at any commit from the cached checkouts (git objects, never the work tree).

Reports, body diffs and stale notes all need "the text of this file at that commit" and "the lines of
this definition"; this one reader answers both and caches per (repo, commit, path).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import git

from analyzer.lock import RepoPin

if TYPE_CHECKING:
    from analyzer.analysis import Workspace

GITHUB_RE = re.compile(r"^(?:https?://|git@|ssh://git@)github\.com[/:]([^/]+)/([^/]+?)(?:\.git)?/?$")


class SourceReader:
    """File text and definition spans at (repo, commit), through `opener(repo_name) -> git.Repo`."""

    def __init__(self, opener: Callable[[str], git.Repo]) -> None:
        self._opener = opener
        self._repos: dict[str, git.Repo | None] = {}
        self._texts: dict[tuple[str, str, str], str | None] = {}
        self.errors: list[str] = []

    def _repo(self, name: str) -> git.Repo | None:
        if name not in self._repos:
            try:
                self._repos[name] = self._opener(name)
            except Exception as exc:  # an unreadable cache must not kill a report; say so instead
                self.errors.append(f"{name}: cannot open the cached repo ({exc})")
                self._repos[name] = None
        return self._repos[name]

    def text(self, repo: str, commit: str, path: str) -> str | None:
        """The file's text at `commit`, or None (commit not cached, file absent)."""
        key = (repo, commit, path)
        if key not in self._texts:
            r = self._repo(repo)
            value = None
            if r is not None:
                try:
                    blob = r.commit(commit).tree / path
                    value = blob.data_stream.read().decode("utf-8", errors="replace")
                except (KeyError, ValueError, git.BadName, git.GitCommandError):
                    value = None
            self._texts[key] = value
        return self._texts[key]

    def lines(self, repo: str, commit: str, path: str, start: int, end: int) -> list[str] | None:
        """Lines start..end (1-based, inclusive) of the file at `commit`."""
        text = self.text(repo, commit, path)
        if text is None:
            return None
        return text.splitlines()[max(start, 1) - 1:end]

    def definition(self, repo: str, commit: str, path: str, qualname: str) -> tuple[int, int] | None:
        """(line, end_line) of `qualname` in the file at `commit`, found by extracting that one file."""
        from analyzer.parse.extract import extract_facts

        text = self.text(repo, commit, path)
        if text is None:
            return None
        try:
            facts = extract_facts(text.encode("utf-8"), path)
        except Exception:  # a file the extractor cannot read: no span, the caller says why
            return None
        for d in facts.definitions:
            if d.qualname == qualname:
                return d.line, d.end_line
        return None


def reader_for(ctx: Workspace, pins: list[RepoPin]) -> SourceReader:
    """A reader over the cache of `ctx` (a CliContext); repos are opened lazily, without fetching."""
    from analyzer.sources.workspace import open_repo

    by_name = {p.name: p for p in pins}
    return SourceReader(lambda name: open_repo(ctx, by_name[name], fetch=False))


def permalink(url: str, commit: str, path: str, start: int, end: int | None = None) -> str | None:
    """A GitHub permalink `…/blob/<commit>/<path>#L<a>-L<b>` (None for non-GitHub sources)."""
    m = GITHUB_RE.match(url.strip())
    if not m:
        return None
    anchor = f"#L{start}" + (f"-L{end}" if end and end != start else "")
    return f"https://github.com/{m.group(1)}/{m.group(2)}/blob/{commit}/{path}{anchor}"
