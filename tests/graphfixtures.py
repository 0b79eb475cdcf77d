"""Turn fixture folders (tests/fixtures/graph/*) into real git repos and analyse them like upstreams.

Each fixture folder becomes a one-commit repo in a tmp dir; a lock names them (`harness`, `piai`) so the
whole pipeline — sync, index, resolve, graph — runs exactly as on real upstreams. The world's workspace is
a library `Session` (`analyzer.api.open_session`), as any Python caller would open it: nothing here needs
the command line's context.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import git

from analyzer.analysis import Analysis, analyze
from analyzer.api import Session, open_session

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "graph"
ACTOR = git.Actor("Fixture Author", "fixture@example.invalid")
REPOS = {"harness": "mini-harness", "piai": "mini-pi-ai"}
ALIASES = {"piai": ["@oldscope/pi-ai"]}


def repo_from_folder(src: Path, dest: Path) -> str:
    """Copy `src` into a new git repo at `dest` and commit it; returns the commit sha."""
    shutil.copytree(src, dest)
    repo = git.Repo.init(dest, initial_branch="main")
    repo.git.add("-A")
    return repo.index.commit("fixture", author=ACTOR, committer=ACTOR).hexsha


def write_fixture_lock(path: Path, repos: dict[str, tuple[Path, str]], trace: tuple[str, str] | None = None) -> Path:
    lines = []
    for name, (where, commit) in repos.items():
        lines += [f"[repos.{name}]", f'url = "{where.as_posix()}"', f'commit = "{commit}"']
        if name in ALIASES:
            lines.append("aliases = [" + ", ".join(f'"{a}"' for a in ALIASES[name]) + "]")
        lines.append("")
    if trace:
        lines += ["[trace]", f'from = "{trace[0]}"', f'to = "{trace[1]}"', ""]
    path.write_text("\n".join(lines))
    return path


@dataclass
class FixtureWorld:
    ctx: Session  # the library session the analyses run in (an `analyzer.analysis.Workspace`)
    lock_path: Path
    commits: dict[str, str]

    def analysis(self, **kw: object) -> Analysis:
        return analyze(self.ctx, **kw)  # type: ignore[arg-type]  # (keywords typed by analyze)


def build_world(tmp: Path, trace: tuple[str, str] | None = ("Agent.step", "parseChunkUsage")) -> FixtureWorld:
    repos: dict[str, tuple[Path, str]] = {}
    for name, folder in REPOS.items():
        dest = tmp / "upstreams" / folder
        repos[name] = (dest, repo_from_folder(FIXTURES / folder, dest))
    lock = write_fixture_lock(tmp / "repos.lock", repos, trace)
    session = open_session(lock, cache_dir=tmp / "cache", environ={})
    return FixtureWorld(session, lock, {n: c for n, (_, c) in repos.items()})


def fixture_program(tmp: Path):
    """The resolved program of the fixture world (what graph builds start from)."""
    return build_world(tmp).analysis(need_program=True).program


def graph_snapshot(g) -> tuple:
    """Everything a stored graph keeps, in order (nodes, keyed edges, predecessor order, unresolved calls,
    stats without timings): two builds that must be identical compare equal on this."""
    stats = {k: v for k, v in g.graph["stats"].items() if k != "resolve_seconds"}
    return (list(g.nodes(data=True)), list(g.edges(keys=True, data=True)),
            {n: list(g.predecessors(n)) for n in g}, g.graph["unresolved"], stats)
