"""One note: what the user wrote about a symbol, and where/what the symbol was when they wrote it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Note:
    """A note keyed by symbol. `path` is only a hint (to tell same-named symbols apart); `commit` and
    `body_hash` record the symbol as it was when the note was written, so later pins can tell whether the
    note still describes the code."""

    repo: str
    symbol: str  # qualified name, e.g. "ReactLoopAgent.step"
    text: str
    commit: str
    body_hash: str
    path: str | None = None

    def same_key(self, repo: str, symbol: str, path: str | None) -> bool:
        """Same note slot: same repo and symbol, and the path hints do not contradict each other."""
        return self.repo == repo and self.symbol == symbol and (self.path is None or path is None or self.path == path)

    @property
    def label(self) -> str:
        return f"{self.repo}:{self.symbol}" + (f" ({self.path})" if self.path else "")
