"""Index one repository at one commit: list sources, reuse cached facts per blob, extract the rest.

Extraction runs in-process: the per-blob cache makes re-runs cheap, and on the 2-core target a
process pool did not pay for shipping the facts back (see the report of `benchmarks/index_bench.py`).
The cyclic garbage collector is paused while facts accumulate: they hold no cycles, and its repeated
full passes over the growing heap otherwise cost more than the extraction itself.
"""

from __future__ import annotations

import gc
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import git

from analyzer.index.cache import FactsCache, variant_of
from analyzer.index.model import FileFacts
from analyzer.index.source import BlobReader, SourceFile, looks_minified, scan_sources
from analyzer.parse.extract import extract_facts
from analyzer.parse.languages import is_declaration_file, language_for_path

Progress = Callable[[int, int], None]  # (files done, files total)


@dataclass(slots=True)
class IndexStats:
    files: int = 0  # files indexed
    parsed: int = 0  # extracted in this run
    cached: int = 0  # taken from the per-blob cache
    parse_error_files: int = 0  # files with recovered syntax errors (still indexed)
    extract_error_files: int = 0  # files where some construct was skipped after an internal failure
    skipped: dict[str, int] = field(default_factory=dict)  # reason → count (see analyzer.index.source)
    seconds: float = 0.0


@dataclass
class RepoIndex:
    """The facts of every indexed file of one repo at one commit, plus access to file text."""

    name: str
    commit: str
    files: list[FileFacts]
    stats: IndexStats
    blobs: dict[str, str]  # path → blob sha
    git_dir: str
    _reader: BlobReader | None = field(default=None, repr=False)
    _by_path: dict[str, FileFacts] | None = field(default=None, repr=False)

    def facts(self, path: str) -> FileFacts | None:
        if self._by_path is None:
            self._by_path = {f.path: f for f in self.files}
        return self._by_path.get(path)

    def read_bytes(self, path: str) -> bytes:
        """A file's content at the indexed commit (any path of the commit, indexed or not)."""
        sha = self.blobs.get(path)
        reader = self._blob_reader()
        if sha is None:
            return reader.git.show(f"{self.commit}:{path}", stdout_as_string=False)
        return reader.read(sha)

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8", "replace")

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _blob_reader(self) -> BlobReader:
        if self._reader is None:
            self._reader = BlobReader(self.git_dir)
        return self._reader


def index_repo(repo: git.Repo, commit: str, *, repo_name: str, cache: FactsCache | Path | None,
               progress: Progress | None = None) -> RepoIndex:
    """Facts for every indexable file of `repo` at `commit` (see `analyzer.index.source` for what is skipped)."""
    started = time.perf_counter()
    own_cache = isinstance(cache, Path)
    store = FactsCache(cache) if isinstance(cache, Path) else cache
    reader = BlobReader(repo)
    try:
        full = reader.git.rev_parse(f"{commit}^{{commit}}").strip()
        scan = scan_sources(repo, full, reader)
        with _gc_paused():
            files, stats = _index_files(reader, scan.files, store, progress)
    finally:
        if own_cache and store is not None:
            store.close()
    skipped = Counter(scan.skipped)
    skipped.update(stats.skipped)
    stats.skipped = dict(sorted(skipped.items()))
    stats.seconds = time.perf_counter() - started
    return RepoIndex(name=repo_name, commit=full, files=files, stats=stats,
                     blobs={f.path: f.blob_sha for f in scan.files}, git_dir=str(repo.git_dir), _reader=reader)


def _index_files(reader: BlobReader, sources: list[SourceFile], store: FactsCache | None,
                 progress: Progress | None) -> tuple[list[FileFacts], IndexStats]:
    stats = IndexStats()
    wanted = [(s.path, s.blob_sha, variant_of(language_for_path(s.path) or "", is_declaration_file(s.path)))
              for s in sources]
    cached = store.get_many(wanted) if store is not None else {}
    out: list[FileFacts] = []
    fresh: list[tuple[str, FileFacts]] = []
    total = len(sources)
    skipped: Counter[str] = Counter()
    for done, src in enumerate(sources, 1):
        facts = cached.get(src.path)
        if facts is None:
            data = reader.read(src.blob_sha)
            if looks_minified(src.path, data):
                skipped["vendored-bundle"] += 1
                continue
            facts = extract_facts(data, src.path)
            fresh.append((src.blob_sha, facts))
            stats.parsed += 1
        else:
            stats.cached += 1
        out.append(facts)
        stats.parse_error_files += facts.parse_errors > 0
        stats.extract_error_files += facts.extract_errors > 0
        if progress is not None:
            progress(done, total)
        if store is not None and len(fresh) >= 500:
            store.put_many(fresh)
            fresh = []
    if store is not None:
        store.put_many(fresh)
    stats.files = len(out)
    stats.skipped = dict(skipped)
    return out, stats


@contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
