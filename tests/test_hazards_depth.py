"""The depth bound must not make a finding depend on the order the roots are driven in.

tests/fixtures/hazards/depth-app: `middle()` is first summarised deep in `audit`'s chain (the first root in
sorted order), where the bound cuts `zclock()` below it; `buildSystemPrompt()` (a sink function, so a root of
its own, driven next) then needs `middle()` one call down. Reusing the cut summary there hides the clock for
good (the prompt's summary is made, cut, before `zclock`'s own root pulls its callers in); making it again at
the shallower depth finds it.
"""

from __future__ import annotations

from typing import Any

import hazardfixtures as hf
import pytest
from hazardmarkers import markers, unmet

from analyzer.hazards.rules import load_hazard_rules
from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for

SHALLOW = 3  # hops from `audit` to `zclock`: 4, one beyond the bound; from the prompt: 2


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> hf.FixtureWorld:
    return hf.build_single_world(tmp_path_factory.mktemp("depth"), "app", "depth-app")


def _scan(world: hf.FixtureWorld, max_depth: int) -> dict[str, Any]:
    a = world.analysis()
    return compute_hazards(a, git_dirs_for(world.ctx, a), index_facts_for(world.ctx, a), max_depth=max_depth,
                           include_near_misses=True)


@pytest.mark.parametrize("max_depth", [SHALLOW, 6])
def test_a_summary_cut_deep_in_one_chain_is_made_again_nearer_the_top(world: hf.FixtureWorld,
                                                                       max_depth: int) -> None:
    result = _scan(world, max_depth)
    tables = {name: e["table"] for name, e in load_hazard_rules().explanations.items()}
    marks = markers(hf.FIXTURES / "depth-app", "app")
    assert [m.rule for m in marks if m.kind == "hazard"] == ["current-time"]
    assert unmet(result, marks, tables) == []
    clock = [f for f in result["findings"] if f["source"]["text"] == "Date.now()"]
    assert [f["sink"]["part"] for f in clock] == ["system prompt"]
    assert any("returned by middle" in s["why"] for s in clock[0]["steps"])
