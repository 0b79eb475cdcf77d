"""Shared fixtures: real upstream snapshots (for `upstream` tests) and a tmp cache dir."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MIRRORS = Path(os.environ.get("ANALYZER_MIRRORS", ROOT.parent / ".mirror"))

# Commits the upstream tests rely on (they are in the fetched snapshots).
DSH_RC2 = "b150a551b8d465e31e418e1b2eaf5e79bbb7d28e"
PI_V0_82_1 = "b4f293684bba718d59cc1157679bcf6157b3a7f5"
PI_V0_58_3 = "83378aad7e74a0e2bb8f37c007a9685fb4609d8a"


def snapshot(owner_name: str, commit: str | None = None) -> Path:
    """The git dir of a fetched snapshot (`owner+name`), or skip the test when it is absent."""
    git_dir = MIRRORS / owner_name / "repo"
    if not git_dir.is_dir():
        pytest.skip(f"upstream snapshot {owner_name} not present under {MIRRORS}")
    if commit is not None:
        # the snapshots have no `config` file, so GitPython cannot open them: ask git directly
        found = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"],
                               capture_output=True)
        if found.returncode != 0:
            pytest.skip(f"snapshot {owner_name} lacks commit {commit}")
    return git_dir


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache dir, also exported as ANALYZER_CACHE_DIR so nothing touches the user's cache."""
    d = tmp_path / "cache"
    monkeypatch.setenv("ANALYZER_CACHE_DIR", str(d))
    for key in list(os.environ):
        if key.startswith("ANALYZER_SOURCE_"):
            monkeypatch.delenv(key)
    return d


# the real local engine (llama-server): `local_engine`, `local_engine_with_key`
from enginefixtures import local_engine, local_engine_with_key  # noqa: E402, F401
