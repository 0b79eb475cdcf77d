"""One definition of test code (analyzer.index.testcode), as the graph marks nodes with it."""

from __future__ import annotations

import pytest

from analyzer.index.testcode import is_test_path


@pytest.mark.parametrize("path", [
    "tests/agent.ts", "packages/core/test/loop.ts", "src/__tests__/a.tsx", "src/__mocks__/fs.js",
    "fixtures/repo/index.ts", "packages/x/fixture/a.mjs", "e2e/run.ts", "src/agent.test.ts",
    "src/agent.spec.tsx", "src/parse.bench.mts", "a.test.cjs",
])
def test_test_folders_and_test_file_names_are_test_code(path: str) -> None:
    assert is_test_path(path)


@pytest.mark.parametrize("path", [
    "src/agent.ts", "src/contest/a.ts", "src/latest/a.ts", "src/testing.ts", "src/test-utils.ts",
    "src/agent.test.md", "docs/e2e.md", "src/fixtures.ts",
])
def test_other_paths_are_not(path: str) -> None:
    assert not is_test_path(path)


def test_the_graph_marks_nodes_with_it() -> None:
    import analyzer.graph.build as build

    assert build.is_test_path is is_test_path
