"""Turn the hazard fixture folders (tests/fixtures/hazards/*) into git repos and a lock, like upstreams.

Each world's workspace is a library `Session` (`analyzer.api.open_session`), not the command line's context."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from graphfixtures import FixtureWorld, repo_from_folder, write_fixture_lock

from analyzer.api import open_session

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hazards"
REPOS = {"app": "mini-app", "ai": "mini-ai"}


def build_hazard_world(tmp: Path) -> FixtureWorld:
    repos: dict[str, tuple[Path, str]] = {}
    for name, folder in REPOS.items():
        dest = tmp / "upstreams" / folder
        repos[name] = (dest, repo_from_folder(FIXTURES / folder, dest))
    lock = write_fixture_lock(tmp / "repos.lock", repos, ("Agent.buildRequest", "buildParams"))
    ctx = open_session(lock, cache_dir=tmp / "cache", environ={})
    return FixtureWorld(ctx, lock, {n: c for n, (_, c) in repos.items()})


def build_seam_world(tmp: Path) -> FixtureWorld:
    """One repo whose volatile values reach the prompt only through seams (named events, a registry)."""
    dest = tmp / "upstreams" / "mini-seams"
    repos = {"host": (dest, repo_from_folder(FIXTURES / "mini-seams", dest))}
    lock = write_fixture_lock(tmp / "repos.lock", repos)
    ctx = open_session(lock, cache_dir=tmp / "cache", environ={})
    return FixtureWorld(ctx, lock, {n: c for n, (_, c) in repos.items()})


def build_single_world(tmp: Path, name: str, folder: str) -> FixtureWorld:
    """One fixture repo: `choice` (mini-choice: values volatile tests choose between) or `records`
    (mini-records: values written into typed records and read back elsewhere)."""
    dest = tmp / "upstreams" / folder
    commit = repo_from_folder(FIXTURES / folder, dest)
    lock = write_fixture_lock(tmp / "repos.lock", {name: (dest, commit)})
    ctx = open_session(lock, cache_dir=tmp / "cache", environ={})
    return FixtureWorld(ctx, lock, {name: commit})


def build_choice_world(tmp: Path) -> FixtureWorld:
    return build_single_world(tmp, "choice", "mini-choice")


def build_records_world(tmp: Path) -> FixtureWorld:
    return build_single_world(tmp, "records", "mini-records")


def build_recall_world(tmp: Path) -> FixtureWorld:
    """One small app (tests/fixtures/hazards/recall-app) for the flow shapes of tests/test_hazards_recall.py."""
    dest = tmp / "upstreams" / "recall-app"
    repos = {"app": (dest, repo_from_folder(FIXTURES / "recall-app", dest))}
    lock = write_fixture_lock(tmp / "repos.lock", repos, ("Session.systemPrompt", "buildSystemPrompt"))
    ctx = open_session(lock, cache_dir=tmp / "cache", environ={})
    return FixtureWorld(ctx, lock, {n: c for n, (_, c) in repos.items()})


@contextlib.contextmanager
def edited_hazard_rules(folder: Path, edit: Callable[[str, str], str]) -> Iterator[None]:
    """The shipped hazard rule files, each passed through `edit(file name, text)` into `folder`, read by every
    loader of the hazard rules (rules, seams, experiments) while the block runs: the edit an engineer makes to
    a rule file, without touching the installed package."""
    import pytest

    from analyzer.hazards.seams import load_seam_rules
    from analyzer.rules import files as rule_files

    folder.mkdir(parents=True, exist_ok=True)
    for entry in resources.files("analyzer.rules.hazards").iterdir():
        if entry.name.endswith(".toml"):
            (folder / entry.name).write_text(edit(entry.name, entry.read_text()))

    class Shim:
        @staticmethod
        def files(package: str) -> Any:
            return folder if package == "analyzer.rules.hazards" else resources.files(package)

    load_seam_rules.cache_clear()  # read once per process: read again from the edited files
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(rule_files, "resources", Shim)
            yield
    finally:
        load_seam_rules.cache_clear()
