"""Shapes a value keeps on its way: a copy (`structuredClone`, `Object.freeze`, `Promise.resolve`) keeps
which field is volatile, and a function kept in a field is no value of its result until it is called."""

from __future__ import annotations

from typing import Any

import pytest
from hazardfixtures import build_single_world

from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for

PATH = "packages/shapes/src/index.ts"


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    world = build_single_world(tmp_path_factory.mktemp("shapes"), "shapes", "mini-shapes")
    analysis = world.analysis()
    return compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis),
                           include_near_misses=True)


def _parts(result: dict[str, Any], source_text: str) -> set[str]:
    return {f["sink"]["part"] for f in result["findings"]
            if f["source"]["path"] == PATH and source_text in f["source"]["text"]}


def test_a_copied_object_keeps_its_volatile_field_apart(result: dict[str, Any]) -> None:
    """`structuredClone({ id: randomUUID(), text })`: `.id` sent is a finding, `.text` sent is not."""
    assert _parts(result, "randomUUID") == {"runtime context"}


def test_a_function_in_a_field_is_not_its_result(result: dict[str, Any]) -> None:
    """A command `{ name, run: () => a template of a clock read }` listed by name: the clock is in no request
    part."""
    assert _parts(result, "Date.now") == set()
