"""Sync the real upstream snapshots (when present) through `analyzer.api`, into a tmp cache."""

from __future__ import annotations

from pathlib import Path

import git
import pytest
from conftest import DSH_RC2, PI_V0_82_1, snapshot

from analyzer.api import open_session
from analyzer.api.sources import status, sync
from analyzer.lock import load_lock
from analyzer.paths import checkout_dir
from analyzer.sources import open_repo

pytestmark = pytest.mark.upstream


def snapshot_with(owner_name: str, commit: str) -> Path:
    """`snapshot()`, checking the commit with plain git: the snapshots are git dirs without a `config`
    file, which GitPython mistakes for a work tree's `.git` (so `git.Repo(dir).commit()` fails there)."""
    git_dir = snapshot(owner_name)
    try:
        git.Git().execute(["git", f"--git-dir={git_dir}", "cat-file", "-e", f"{commit}^{{commit}}"])
    except git.GitCommandError:
        pytest.skip(f"snapshot {owner_name} lacks commit {commit}")
    return git_dir


def test_sync_real_snapshots(tmp_path: Path, cache_dir: Path) -> None:
    dsh = snapshot_with("deepseek-ai+deepseek-harness", DSH_RC2)
    pi = snapshot_with("at-inc+pi", PI_V0_82_1)
    lock = tmp_path / "repos.lock"
    lock.write_text(
        "# written by the test: the snapshots stand in for the upstream servers\n"
        f'[repos.dsh]\nurl = "{dsh}"\nref = "dsh-v0.1.1-rc.2"\ncommit = "{DSH_RC2}"\n\n'
        f'[repos.pi]\nurl = "{pi}"\ncommit = "{PI_V0_82_1}"\n'
    )
    session = open_session(lock, cache_dir=cache_dir, environ={})
    results = {name: sync(session, name) for name in ("dsh", "pi")}
    assert {n: r.action for n, r in results.items()} == {"dsh": "fetched (shallow)", "pi": "fetched (shallow)"}
    for name, commit in (("dsh", DSH_RC2), ("pi", PI_V0_82_1)):
        repo = git.Repo(checkout_dir(cache_dir, name))
        assert repo.head.is_detached and repo.head.commit.hexsha == commit
        assert not repo.is_dirty(untracked_files=True)

    # Offline re-sync: even a source that does not exist is never contacted.
    nowhere = str(tmp_path / "nowhere")
    offline = session.with_sources({"dsh": nowhere, "pi": nowhere})
    assert not any(sync(offline, name).network for name in ("dsh", "pi"))

    statuses = [r.status for r in status(session)]
    assert len(statuses) == 2 and all(s.present and s.checked_out and s.subject for s in statuses)

    pins = load_lock(lock).repos
    repo = open_repo(cache_dir, pins["pi"], fetch=False)
    assert repo.commit(PI_V0_82_1).tree["package.json"].size > 0
