"""Indexed locators over the real snapshots for the upstream usage tests, with one index cache per module."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import snapshot

from analyzer.usage.indexed import IndexedFunctionLocator
from analyzer.usage.repos import open_git_dir

SNAPSHOTS = {"pi": "at-inc+pi", "dsh": "deepseek-ai+deepseek-harness"}


@pytest.fixture(scope="module")
def index_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A facts cache shared by the tests of one module (the index of a snapshot is built once there)."""
    return tmp_path_factory.mktemp("usage-index")


def upstream_locator(name: str, commit: str, cache: Path) -> IndexedFunctionLocator:
    """`name` (pi or dsh) at `commit` of its snapshot, located through the index, as `analyze reconcile` does."""
    return IndexedFunctionLocator(open_git_dir(snapshot(SNAPSHOTS[name], commit)), commit, name, cache)
