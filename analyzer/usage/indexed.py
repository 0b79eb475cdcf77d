"""A `FunctionLocator` that finds functions through the index (`analyzer.index`), not by grepping.

The per-file facts (cached by git blob) say which file declares a top-level function of a name; module
resolution (`analyzer.resolve.modules`) says which file an import means — relative specifiers, tsconfig
`paths` and workspace packages alike. The evaluator still reads the function's syntax tree from the same
commit, so what runs is exactly the pinned code.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import git

from analyzer.index.build import index_repo
from analyzer.index.cache import FactsCache
from analyzer.index.configs import read_configs
from analyzer.parse.languages import is_declaration_file
from analyzer.resolve.modules import ModuleResolver, RepoModules
from analyzer.usage.locate import GitFunctionLocator

TEST_MARKERS = ("/test/", "/tests/", "/__tests__/", ".test.", ".spec.")


class IndexedFunctionLocator(GitFunctionLocator):
    def __init__(self, repo: git.Repo, commit: str, repo_name: str, cache_dir: Path) -> None:
        super().__init__(repo, commit, repo_name)
        with FactsCache(cache_dir) as cache:
            index = index_repo(repo, self.commit, repo_name=repo_name, cache=cache)
        index.close()
        self._declares: dict[str, list[str]] = {}
        for facts in index.files:
            names = [d.name for d in facts.definitions if d.parent is None]
            names += [b.name for b in facts.bindings if b.scope is None]  # `export const table = {…}`
            for name in names:
                self._declares.setdefault(name, []).append(facts.path)
        modules = RepoModules(repo_name, {f.path for f in index.files}, read_configs(repo, self.commit))
        self._resolver = ModuleResolver([modules])

    def _grep_declarations(self, name: str, under: Sequence[str]) -> list[str]:
        """Files whose index records a top-level declaration of `name` (tests and .d.ts left out)."""
        paths = []
        for path in self._declares.get(name, []):
            if under and not any(path.startswith(u.rstrip("/") + "/") or path == u for u in under):
                continue
            if is_declaration_file(path) or any(m in f"/{path}" for m in TEST_MARKERS):
                continue
            if path not in paths:
                paths.append(path)
        return paths

    def resolve_import(self, from_path: str, spec: str) -> str | None:
        if spec.endswith(".json"):
            return super().resolve_import(from_path, spec)
        found = self._resolver.resolve(self.repo_name, from_path, spec)
        return found.module.path if found.module is not None else super().resolve_import(from_path, spec)
