"""One shared, cached tree-sitter tree per blob, read from git objects (no work tree, no second parser).

Features that need syntax beyond the index's facts (hazards walking a function body, usage evaluating
one) ask this service instead of reading and parsing files themselves, so every reader sees the same
bytes and the same grammar choice (`analyzer.parse.languages`).

The cache is keyed by blob sha and grammar: a file unchanged between two commits is one blob, so it is
parsed once however many commits (or repositories sharing history) ask for it. It is an LRU bounded by
entry count, because trees are only worth keeping while the run that asked for them is still walking.
Blobs are read through one persistent `git cat-file` process per git dir (`BlobReader`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import git
from tree_sitter import Node, Tree

from analyzer.index.source import BlobReader
from analyzer.parse.languages import language_for_path, parse_bytes

DEFAULT_CAPACITY = 1024


class MissingBlob(LookupError):
    """`commit:path` names no blob in the git dir (the file does not exist at that commit)."""


@dataclass(frozen=True, slots=True)
class SyntaxTree:
    """A parsed blob: its bytes, the tree-sitter tree and which grammar read it."""

    path: str
    blob_sha: str
    language: str
    source: bytes
    tree: Tree

    @property
    def root(self) -> Node:
        return self.tree.root_node

    def text(self, node: Node) -> str:
        return self.source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


class SyntaxTrees:
    """Trees of blobs in any number of git dirs, cached per blob sha (LRU, `capacity` entries).

    `parses` counts the parses actually run (the cache's misses), so callers and tests can see reuse.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.parses = 0
        self._trees: OrderedDict[tuple[str, str], SyntaxTree] = OrderedDict()
        self._blob_shas: dict[tuple[str, str, str], str] = {}
        self._readers: dict[str, BlobReader] = {}
        self._lock = threading.RLock()

    def reader(self, git_dir: str) -> BlobReader:
        """The one blob reader for `git_dir` (shared with callers that read non-source blobs)."""
        with self._lock:
            found = self._readers.get(git_dir)
            if found is None:
                found = self._readers[git_dir] = BlobReader(git_dir)
            return found

    def blob_sha(self, git_dir: str, commit: str, path: str) -> str:
        """The blob sha of `path` at `commit`; raises `MissingBlob` when there is none."""
        key = (git_dir, commit, path)
        with self._lock:
            found = self._blob_shas.get(key)
            if found is not None:
                return found
            try:
                sha, kind, _size = self.reader(git_dir).git.get_object_header(f"{commit}:{path}")
            except (git.GitCommandError, ValueError) as exc:
                raise MissingBlob(f"{commit}:{path}") from exc
            if isinstance(sha, bytes):
                sha = sha.decode()
            if isinstance(kind, bytes):
                kind = kind.decode()
            if kind != "blob":
                raise MissingBlob(f"{commit}:{path} is a {kind}, not a file")
            self._blob_shas[key] = sha
            return sha

    def at(self, git_dir: str, commit: str, path: str) -> SyntaxTree | None:
        """The tree of `path` at `commit`; None when no TS/JS grammar reads the path.

        Raises `MissingBlob` when the file does not exist at that commit.
        """
        if language_for_path(path) is None:
            return None
        return self.blob(git_dir, self.blob_sha(git_dir, commit, path), path)

    def blob(self, git_dir: str, blob_sha: str, path: str) -> SyntaxTree:
        """The tree of one blob; `path` chooses the grammar (its extension), as the index does."""
        language = language_for_path(path)
        if language is None:
            raise ValueError(f"no TS/JS grammar reads {path!r}")
        key = (blob_sha, language)
        with self._lock:
            hit = self._trees.get(key)
            if hit is not None:
                self._trees.move_to_end(key)
                return hit if hit.path == path else _renamed(hit, path)
            try:
                data = self.reader(git_dir).read(blob_sha)
            except (git.GitCommandError, ValueError) as exc:
                raise MissingBlob(blob_sha) from exc
            parsed = SyntaxTree(path, blob_sha, language, data, parse_bytes(data, language))
            self.parses += 1
            self._trees[key] = parsed
            while len(self._trees) > self.capacity:
                self._trees.popitem(last=False)
            return parsed

    def close(self) -> None:
        """End the git processes; cached trees stay usable."""
        with self._lock:
            for reader in self._readers.values():
                reader.close()
            self._readers.clear()

    def __enter__(self) -> SyntaxTrees:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _renamed(tree: SyntaxTree, path: str) -> SyntaxTree:
    """The same parsed blob reached under another path (a copy, a move): shares the tree, names the path."""
    return SyntaxTree(path, tree.blob_sha, tree.language, tree.source, tree.tree)
