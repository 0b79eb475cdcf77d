"""The `FunctionLocator` of `analyze reconcile`: functions found through the index, files read as shared trees.

The per-file facts (cached by git blob) say which file declares a top-level function of a name; module
resolution (`analyzer.resolve.modules`) says which file an import means — relative specifiers, tsconfig
`paths` and workspace packages alike; the syntax trees come from the index's per-blob tree service
(`analyzer.index.trees`), so what the evaluator runs is exactly the pinned code, parsed once per blob.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import git

from analyzer.index.build import index_repo
from analyzer.index.cache import FactsCache
from analyzer.index.configs import read_configs
from analyzer.index.testcode import is_test_path
from analyzer.index.trees import MissingBlob, SyntaxTrees
from analyzer.parse.languages import is_declaration_file, language_for_path
from analyzer.resolve.modules import ModuleResolver, RepoModules
from analyzer.usage.errors import LocateError
from analyzer.usage.locate import LocatedFunction, SourceModule, find_declared, module_of, resolve_module


class IndexedFunctionLocator:
    """One repo at one commit, located through its index; `trees` may be shared between locators."""

    def __init__(self, repo: git.Repo, commit: str, repo_name: str, cache_dir: Path,
                 trees: SyntaxTrees | None = None) -> None:
        self.repo = repo
        self.repo_name = repo_name
        try:
            self.commit = repo.commit(commit).hexsha
        except (ValueError, git.BadName, git.GitCommandError):
            raise LocateError(f"{repo_name}: commit {commit} is not in {repo.git_dir}; fetch it, or pass another "
                              f"commit with --at {repo_name}=SHA") from None
        self.git_dir = str(repo.git_dir)
        self.trees = trees or SyntaxTrees()
        with FactsCache(cache_dir) as cache:
            index = index_repo(repo, self.commit, repo_name=repo_name, cache=cache)
        self._blobs = index.blobs
        self._declares: dict[str, list[str]] = {}
        for facts in index.files:
            names = [d.name for d in facts.definitions if d.parent is None]
            names += [b.name for b in facts.bindings if b.scope is None]  # `export const table = {…}`
            for name in names:
                self._declares.setdefault(name, []).append(facts.path)
        modules = RepoModules(repo_name, {f.path for f in index.files}, read_configs(repo, self.commit))
        self._resolver = ModuleResolver([modules])
        self._modules: dict[str, SourceModule] = {}

    def exists(self, path: str) -> bool:
        if path in self._blobs:
            return True
        try:
            self.trees.blob_sha(self.git_dir, self.commit, path)
        except MissingBlob:
            return False
        return True

    def module(self, path: str) -> SourceModule:
        if path not in self._modules:
            if language_for_path(path) is None:
                raise LocateError(f"{path}: not a TypeScript/JavaScript source; the usage evaluator reads only those")
            try:
                sha = self._blobs.get(path) or self.trees.blob_sha(self.git_dir, self.commit, path)
                tree = self.trees.blob(self.git_dir, sha, path)
            except MissingBlob:
                raise LocateError(f"{self.repo_name}@{self.commit[:10]}: no file {path}") from None
            self._modules[path] = module_of(self.repo_name, path, tree.source, tree.tree)
        return self._modules[path]

    def json_data(self, path: str) -> Any:
        """A JSON file of the tree (`import x from './x.json' with { type: 'json' }`)."""
        try:
            sha = self.trees.blob_sha(self.git_dir, self.commit, path)
        except MissingBlob:
            raise LocateError(f"{self.repo_name}@{self.commit[:10]}: no file {path}") from None
        return json.loads(self.trees.reader(self.git_dir).read(sha))

    def resolve_import(self, from_path: str, spec: str) -> str | None:
        return resolve_module(self._resolver, self.repo_name, from_path, spec, self.exists)

    def find(self, name: str, path_hint: str | None = None, search_under: Sequence[str] = ()) -> LocatedFunction:
        """Locate `name` (dotted for methods/object properties) in `path_hint`, or among the files under the dirs
        whose index records a top-level declaration of its first part."""
        paths = [path_hint] if path_hint else self._declaring(name.split(".")[0], search_under)
        return find_declared(self, name, paths, path_hint or (", ".join(search_under) or "the whole tree"))

    def _declaring(self, name: str, under: Sequence[str]) -> list[str]:
        """Files whose index records a top-level declaration of `name` (tests and .d.ts left out)."""
        paths = []
        for path in self._declares.get(name, []):
            if under and not any(path.startswith(u.rstrip("/") + "/") or path == u for u in under):
                continue
            if is_declaration_file(path) or is_test_path(path):
                continue
            if path not in paths:
                paths.append(path)
        return paths
