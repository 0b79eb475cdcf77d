"""The ways syncing a pin can fail, each a one-line `AnalyzerError` that says what to do.

Separate types let callers (and tests) tell a moved tag from an unreachable server without parsing text.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.errors import AnalyzerError


def source_env(name: str) -> str:
    return "ANALYZER_SOURCE_" + name.upper().replace("-", "_")


class SourceError(AnalyzerError):
    """Base for problems with an upstream source or its cached copy."""


class UnreachableSource(SourceError):
    def __init__(self, name: str, url: str, reason: str) -> None:
        super().__init__(f"{name}: cannot fetch from {url}: {reason}; to use a reachable mirror or a local "
                         f"copy pass --source {name}=URL_OR_PATH (or set {source_env(name)})")


class MovedTag(SourceError):
    def __init__(self, name: str, url: str, tag: str, pinned: str, actual: str) -> None:
        super().__init__(f"{name}: tag {tag} at {url} points to {actual}, but repos.lock pins {pinned}; the tag "
                         f"was moved, so nothing was synced: if the new commit is intended run "
                         f"'analyze pin {name} {tag}', otherwise sync from a mirror with the original tag via "
                         f"--source {name}=URL_OR_PATH")


class RefNotFound(SourceError):
    def __init__(self, name: str, url: str, ref: str) -> None:
        super().__init__(f"{name}: {url} has no tag or branch {ref!r}; check the name (git ls-remote {url}) "
                         f"and fix ref in repos.lock, or run 'analyze pin {name} REF'")


class MissingCommit(SourceError):
    def __init__(self, name: str, url: str, commit: str) -> None:
        super().__init__(f"{name}: commit {commit} is not in {url}; check the commit in repos.lock, or fetch "
                         f"from a copy that has it with --source {name}=URL_OR_PATH")


class DirtyWorkTree(SourceError):
    def __init__(self, name: str, path: Path, changed: list[str]) -> None:
        example = ", ".join(changed[:3]) + (", …" if len(changed) > 3 else "")
        super().__init__(f"{name}: the cached work tree {path} has local changes ({len(changed)} paths: {example}) "
                         f"and analyze will not overwrite them; save what you need, then discard them with "
                         f"'git -C {path} reset --hard && git -C {path} clean -fd' (or delete {path}) and run "
                         f"'analyze sync {name}' again")


class BrokenCache(SourceError):
    def __init__(self, name: str, path: Path, what: str) -> None:
        super().__init__(f"{name}: {path} {what}; delete it and run 'analyze sync {name}' again")
