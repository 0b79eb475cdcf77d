"""The TypeScript compiler as the oracle on the fixture monorepos (benchmarks/ts_oracle.py on our own code).

Needs node and the `typescript` package: set ANALYZER_TYPESCRIPT to a node_modules folder holding it
(`npm install typescript` into a scratch dir). Skips cleanly otherwise; the compiler is a yardstick, never
a dependency of analyzer.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from graphfixtures import FIXTURES, REPOS, build_world

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import ts_oracle  # noqa: E402

pytestmark = pytest.mark.node


def _typescript() -> Path:
    where = os.environ.get("ANALYZER_TYPESCRIPT")
    if not shutil.which("node") or not where or not (Path(where) / "typescript" / "package.json").exists():
        pytest.skip("set ANALYZER_TYPESCRIPT to a node_modules folder with typescript (and put node on PATH)")
    return Path(where)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory):
    typescript = _typescript()
    tmp = tmp_path_factory.mktemp("oracle")
    g = build_world(tmp / "world").analysis().graph
    root = tmp / "src"
    for name, folder in REPOS.items():
        shutil.copytree(FIXTURES / folder, root / name)
    paths = ts_oracle.workspace_paths(root, {"@oldscope/pi-ai": ["@mini/pi-ai"]})
    rows = ts_oracle.run_oracle(root, g, ts_oracle.sample_functions(g, 10_000, 0), paths, typescript)
    return ts_oracle.compare(g, rows)


def test_direct_and_method_edges_are_what_the_compiler_names(measured) -> None:
    stats, misses = measured
    assert stats["direct_checked"] > 50 and stats["method_checked"] > 20
    assert misses["wrong_direct"] == [] and misses["wrong_method"] == []


def test_the_compilers_concrete_targets_and_implementations_are_reached(measured) -> None:
    stats, misses = measured
    assert stats["concrete"] > 50 and misses["concrete"] == []
    assert stats["iface_prod_impls"] > 10
    # `(await load()).stream(…)` in lazyApi: the compiler offers the literal lazyApi itself returns (it
    # implements StreamPair, the loader's declared result); the graph reaches it as well as the imported
    # modules' exports the lazy-module-loader rule gives (see expected_edges.toml)
    assert misses["interface"] == []


def test_function_typed_value_calls_reach_something(measured) -> None:
    stats, misses = measured
    assert stats["value_sites"] >= 30
    assert stats["value_sites_with_edge"] / stats["value_sites"] >= 0.8, misses["value"]
    # the calls left without an edge, each a value nothing in the fixtures supplies: a function type nothing
    # produces (functypes.ts `check`), the `done` an unimplemented `Screen.custom` would pass (impls.ts) and
    # the `open` prop of a component nobody renders (props.ts `Aliased`); in declared.ts the `abort` and the
    # Omit-replaced `say` are `Abort`s, a function type nothing produces (the member types are read right), and
    # nobody calls `runCheck`, so its `check` parameter receives nothing
    assert {(m[0].rsplit(":", 1)[1], m[2]) for m in misses["value"]} == {
        ("check", "fail"), ("Dialog.open.render", "done"), ("Aliased", "open"), ("Picker", "abort"),
        ("Quiet", "props.say"), ("runCheck", "check")}
