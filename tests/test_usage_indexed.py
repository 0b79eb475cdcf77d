"""The usage replay locates functions through the index and resolves imports like the graph does."""

from __future__ import annotations

from pathlib import Path

import git

from analyzer.usage.indexed import IndexedFunctionLocator

ACTOR = git.Actor("Fixture Author", "fixture@example.invalid")
FILES = {
    "package.json": '{"name": "root", "private": true}',
    "packages/a/package.json": '{"name": "@x/a", "exports": {".": {"types": "./lib/index.d.ts", '
                               '"default": "./lib/index.js"}}}',
    "packages/a/src/index.ts": "export const helper = (n: number): number => n * 2\n",
    "packages/b/src/main.ts": "import { helper } from '@x/a'\n"
                              "export function fold(n: number): number {\n  return helper(n) + 1\n}\n",
    "packages/b/test/main.test.ts": "export function fold(): number { return 0 }\n",
}


def make_repo(where: Path) -> tuple[git.Repo, str]:
    repo = git.Repo.init(where, initial_branch="main")
    for name, text in FILES.items():
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        (where / name).write_text(text)
    repo.git.add("-A")
    return repo, repo.index.commit("fixture", author=ACTOR, committer=ACTOR).hexsha


def test_finds_declarations_through_the_index_and_skips_tests(tmp_path: Path) -> None:
    repo, sha = make_repo(tmp_path / "up")
    loc = IndexedFunctionLocator(repo, sha, "up", tmp_path / "cache")
    assert loc.find("fold").module.path == "packages/b/src/main.ts"  # the test file's `fold` is not a candidate
    assert loc.find("helper").module.path == "packages/a/src/index.ts"


def test_workspace_package_imports_resolve_to_source(tmp_path: Path) -> None:
    repo, sha = make_repo(tmp_path / "up")
    loc = IndexedFunctionLocator(repo, sha, "up", tmp_path / "cache")
    assert loc.resolve_import("packages/b/src/main.ts", "@x/a") == "packages/a/src/index.ts"
    assert loc.resolve_import("packages/b/src/main.ts", "left-pad") is None
