"""Index one repository at one commit: list sources, reuse cached facts per blob, extract the rest.

Uncached files are extracted in a small process pool (forked workers return each file's facts as marshal
rows and as the compressed cache value, so the main process only unmarshals and stores); few files, or
no fork, means in-process. The cyclic garbage collector is paused while facts accumulate, and the facts
are frozen out of its generations afterwards: they hold no cycles, and its full passes over the growing
heap otherwise cost more than decoding them.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import resource
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import git

from analyzer.gcpause import gc_paused
from analyzer.index.cache import FactsCache, compress_rows, decode_rows, encode_rows, variant_of
from analyzer.index.model import FileFacts
from analyzer.index.source import BlobReader, SourceFile, looks_minified, scan_sources
from analyzer.parse.extract import extract_facts
from analyzer.parse.languages import is_declaration_file, language_for_path

Progress = Callable[[int, int], None]  # (files done, files total)
POOL_MIN_FILES = 64  # below this a process pool costs more than it saves
log = logging.getLogger(__name__)


@dataclass(slots=True)
class IndexStats:
    files: int = 0  # files indexed
    parsed: int = 0  # extracted in this run
    cached: int = 0  # taken from the per-blob cache
    parse_error_files: int = 0  # files with recovered syntax errors (still indexed)
    extract_error_files: int = 0  # files where some construct was skipped after an internal failure
    skipped: dict[str, int] = field(default_factory=dict)  # reason → count (see analyzer.index.source)
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # CPU (user + sys) of this process while indexing: reading, decoding, storing
    worker_cpu_seconds: float = 0.0  # CPU of the extraction worker processes (0 when extracted in-process)


@dataclass
class RepoIndex:
    """The facts of every indexed file of one repo at one commit (file text is the syntax-tree service's,
    `analyzer.index.trees`)."""

    name: str
    commit: str
    files: list[FileFacts]
    stats: IndexStats
    blobs: dict[str, str]  # path → blob sha
    git_dir: str
    _by_path: dict[str, FileFacts] | None = field(default=None, repr=False)

    def facts(self, path: str) -> FileFacts | None:
        if self._by_path is None:
            self._by_path = {f.path: f for f in self.files}
        return self._by_path.get(path)


def default_workers() -> int:
    """Extraction processes: `$ANALYZER_INDEX_WORKERS`, else one per CPU (at most 4)."""
    env = os.environ.get("ANALYZER_INDEX_WORKERS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, min(4, os.cpu_count() or 1))


def index_repo(repo: git.Repo, commit: str, *, repo_name: str, cache: FactsCache | Path | None,
               progress: Progress | None = None, workers: int | None = None) -> RepoIndex:
    """Facts for every indexable file of `repo` at `commit` (see `analyzer.index.source` for what is skipped).

    `workers` > 1 extracts uncached files in that many processes (default: `default_workers()`).
    """
    started = time.perf_counter()
    cpu_started = time.process_time()
    own_cache = isinstance(cache, Path)
    store = FactsCache(cache) if isinstance(cache, Path) else cache
    reader = BlobReader(repo)
    try:
        full = reader.git.rev_parse(f"{commit}^{{commit}}").strip()
        scan = scan_sources(repo, full, reader)
        children_started = _children_cpu()  # after the git commands of the scan: only the pool from here
        with gc_paused():
            files, stats = _index_files(reader, scan.files, store, progress,
                                        default_workers() if workers is None else workers)
            # The facts live as long as the run and hold no cycles. Left in the collector's generations
            # they are scanned in full by the first collection after the pause (about 1 s of this
            # process's CPU on rc.2 + v0.82.1) and again later; frozen, collections skip them.
            gc.freeze()
        stats.worker_cpu_seconds = _children_cpu() - children_started  # the pool's workers are reaped by now
    finally:
        reader.close()
        if own_cache and store is not None:
            store.close()
    skipped = Counter(scan.skipped)
    skipped.update(stats.skipped)
    stats.skipped = dict(sorted(skipped.items()))
    stats.seconds = time.perf_counter() - started
    stats.cpu_seconds = time.process_time() - cpu_started
    return RepoIndex(name=repo_name, commit=full, files=files, stats=stats,
                     blobs={f.path: f.blob_sha for f in scan.files}, git_dir=str(repo.git_dir))


def _index_files(reader: BlobReader, sources: list[SourceFile], store: FactsCache | None,
                 progress: Progress | None, workers: int) -> tuple[list[FileFacts], IndexStats]:
    stats = IndexStats()
    variants = {s.path: variant_of(language_for_path(s.path) or "", is_declaration_file(s.path)) for s in sources}
    cached = store.get_many((s.path, s.blob_sha, variants[s.path]) for s in sources) if store is not None else {}
    missing = [s for s in sources if s.path not in cached]
    fresh: dict[str, FileFacts | None] = {}
    pending: list[tuple[str, str, bytes]] = []
    total = len(sources)
    done = len(cached)
    if progress is not None and done:
        progress(done, total)
    for src, encoded in _extract_all(reader, missing, workers):
        facts = None
        if encoded is not None:
            facts = decode_rows(encoded[0])
            if facts is not None:
                facts.path = src.path
                pending.append((src.blob_sha, variants[src.path], encoded[1]))
        fresh[src.path] = facts
        done += 1
        if progress is not None:
            progress(done, total)
        if store is not None and len(pending) >= 500:
            store.put_encoded(pending)
            pending = []
    if store is not None:
        store.put_encoded(pending)
    out: list[FileFacts] = []
    skipped: Counter[str] = Counter()
    for src in sources:
        facts = cached.get(src.path)
        if facts is not None:
            stats.cached += 1
        else:
            facts = fresh.get(src.path)
            if facts is None:
                skipped["vendored-bundle"] += 1  # minified: recognised by content
                continue
            stats.parsed += 1
        out.append(facts)
        stats.parse_error_files += facts.parse_errors > 0
        stats.extract_error_files += facts.extract_errors > 0
    stats.files = len(out)
    stats.skipped = dict(skipped)
    return out, stats


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _extract_encoded(item: tuple[str, bytes]) -> tuple[bytes, bytes] | None:
    """Worker: a file's facts encoded (for the main process to decode) and compressed (for the cache);
    None for minified bundles. Both from the worker, so the main process never decompresses."""
    path, data = item
    if looks_minified(path, data):
        return None
    raw = encode_rows(extract_facts(data, path))
    return raw, compress_rows(raw)


def _worker_init() -> None:
    gc.disable()


def _extract_all(reader: BlobReader, missing: list[SourceFile],
                 workers: int) -> Iterator[tuple[SourceFile, tuple[bytes, bytes] | None]]:
    """Facts (encoded, compressed) for files not in the cache; a process pool when there are enough of them.

    Workers encode and compress, so the main process only unmarshals; files stream through in order.
    """
    items = ((src.path, reader.read(src.blob_sha)) for src in missing)
    if workers > 1 and len(missing) >= POOL_MIN_FILES:
        try:
            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(workers, initializer=_worker_init) as pool:
                yield from zip(missing, pool.imap(_extract_encoded, items, chunksize=8), strict=True)
            return
        except (OSError, ValueError) as exc:  # no fork / no processes: fall back to in-process
            log.warning("process pool unavailable (%s); extracting in-process", exc)
            items = ((src.path, reader.read(src.blob_sha)) for src in missing)
    for src, item in zip(missing, items, strict=True):
        yield src, _extract_encoded(item)


