"""`repos.lock`: which upstream commits the analysis is about.

The lock is validated as a whole so a user sees every problem at once, one line each, in the form
`FILE: KEY: what is wrong; what to do`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.errors import LockError

SHA_RE = re.compile(r"^[0-9a-f]{40}$")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
REPO_KEYS = {"url", "ref", "commit", "aliases"}
REQUIRED_REPO_KEYS = ("url", "commit")
TRACE_KEYS = {"from", "to"}
TOP_KEYS = {"repos", "trace"}
_HEADER_RE = re.compile(r"^\s*\[\s*repos\s*\.\s*(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+)\s*\]\s*(#.*)?$")


@dataclass(frozen=True)
class RepoPin:
    """One upstream at one commit."""

    name: str
    url: str
    commit: str
    ref: str | None = None
    aliases: tuple[str, ...] = ()

    @property
    def short(self) -> str:
        return self.commit[:10]


@dataclass(frozen=True)
class Lock:
    """The parsed lock: repos by name (file order kept) and the default trace endpoints."""

    path: Path
    repos: dict[str, RepoPin] = field(default_factory=dict)
    trace_from: str | None = None
    trace_to: str | None = None

    def get(self, name: str) -> RepoPin:
        try:
            return self.repos[name]
        except KeyError:
            known = ", ".join(self.repos) or "none"
            raise LockError([f"{self.path}: repos.{name}: no such upstream (known: {known}); "
                             "check the name or add a [repos.NAME] table"]) from None

    def select(self, names: list[str] | None) -> list[RepoPin]:
        """The named pins (all when `names` is empty), failing on unknown names."""
        if not names:
            return list(self.repos.values())
        return [self.get(n) for n in names]


def load_lock(path: str | Path) -> Lock:
    """Read and validate a lock file; raise `LockError` listing every problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LockError([f"{p}: file not found; run from a folder with repos.lock or pass --lock PATH"]) from None
    except OSError as exc:
        raise LockError([f"{p}: cannot read ({exc.strerror}); check the path and its permissions"]) from None
    return parse_lock(text, p)


def parse_lock(text: str, path: Path) -> Lock:
    """Validate lock text (the file name is only used in messages)."""
    problems = _duplicate_headers(text, path)
    if problems:
        raise LockError(problems)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LockError([f"{path}: malformed TOML ({exc}); fix the syntax at that line"]) from None

    for key in data:
        if key not in TOP_KEYS:
            problems.append(f"{path}: {key}: unknown top-level key; expected only [repos.NAME] tables and [trace]")
    repos_raw = data.get("repos", {})
    if not isinstance(repos_raw, dict) or not repos_raw:
        problems.append(f"{path}: repos: no upstreams; add at least one [repos.NAME] table with url and commit")
        repos_raw = {}

    repos: dict[str, RepoPin] = {}
    seen_folded: dict[str, str] = {}
    for name, table in repos_raw.items():
        where = f"{path}: repos.{name}"
        if not NAME_RE.match(name):
            problems.append(f"{where}: bad name; use letters, digits, '-' and '_', starting with a letter")
            continue
        folded = name.lower().replace("-", "_")
        if folded in seen_folded:
            problems.append(f"{where}: duplicate name (same as repos.{seen_folded[folded]} ignoring case and -/_); "
                            "rename one of them")
            continue
        seen_folded[folded] = name
        if not isinstance(table, dict):
            problems.append(f"{where}: must be a table; write it as [repos.{name}] with url and commit keys")
            continue
        pin = _parse_repo(name, table, where, problems)
        if pin is not None:
            repos[name] = pin

    trace_from = trace_to = None
    trace = data.get("trace", {})
    if not isinstance(trace, dict):
        problems.append(f"{path}: trace: must be a table with 'from' and 'to'")
    else:
        for key in trace:
            if key not in TRACE_KEYS:
                problems.append(f"{path}: trace.{key}: unknown key; [trace] takes only 'from' and 'to'")
        for key in ("from", "to"):
            value = trace.get(key)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                problems.append(f"{path}: trace.{key}: must be a non-empty string naming a symbol")
        trace_from, trace_to = trace.get("from"), trace.get("to")

    if problems:
        raise LockError(problems)
    return Lock(path, repos, trace_from, trace_to)


def _parse_repo(name: str, table: dict[str, object], where: str, problems: list[str]) -> RepoPin | None:
    before = len(problems)
    for key in table:
        if key not in REPO_KEYS:
            problems.append(f"{where}.{key}: unknown key; allowed keys are {', '.join(sorted(REPO_KEYS))}")
    for key in REQUIRED_REPO_KEYS:
        if key not in table:
            hint = "the git URL of the upstream" if key == "url" else "the full 40-hex commit sha"
            problems.append(f"{where}.{key}: missing; add {key} = \"…\" ({hint})")
    url, commit, ref, aliases = table.get("url"), table.get("commit"), table.get("ref"), table.get("aliases", [])
    if url is not None and (not isinstance(url, str) or not url.strip()):
        problems.append(f"{where}.url: must be a non-empty string")
    if commit is not None and (not isinstance(commit, str) or not SHA_RE.match(commit)):
        problems.append(f"{where}.commit: {commit!r} is not 40 lowercase hex digits; "
                        f"write the full sha, or run 'analyze pin {name} REF' to resolve one")
    if ref is not None and (not isinstance(ref, str) or not ref.strip()):
        problems.append(f"{where}.ref: must be a non-empty string (a tag or branch) or be left out")
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a for a in aliases):
        problems.append(f"{where}.aliases: must be a list of npm package names or scopes")
        aliases = []
    if len(problems) > before:
        return None
    assert isinstance(url, str) and isinstance(commit, str)
    return RepoPin(name, url, commit, ref if isinstance(ref, str) else None, tuple(aliases))


def _duplicate_headers(text: str, path: Path) -> list[str]:
    """Name duplicate `[repos.X]` tables before tomllib rejects them with a less helpful message."""
    first: dict[str, int] = {}
    problems = []
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _HEADER_RE.match(line)
        if not m:
            continue
        name = m.group(1).strip("\"'")
        if name in first:
            problems.append(f"{path}:{lineno}: repos.{name}: duplicate table (first at line {first[name]}); "
                            f"keep one [repos.{name}] table")
        else:
            first[name] = lineno
    return problems
