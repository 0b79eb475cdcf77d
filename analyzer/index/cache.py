"""Per-blob extraction results in SQLite (`<cache>/index.sqlite`), so an unchanged blob is parsed once.

Key: git blob sha + a version string (analyzer version, extractor version, grammar versions) + the
file *variant* (grammar and declaration-file flag, which depend on the path, not on the blob). The
value is zlib-compressed `marshal` of `FileFacts` as positional rows (field order of the model classes,
whose fingerprint is part of the version, as is the codec's name), without the path (the caller's path
is set on read).

A cache that is not ours (corrupt file, foreign schema) is renamed aside and rebuilt with one warning;
any SQLite error later turns the cache off for the run instead of failing the index.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import fields, is_dataclass
from itertools import starmap
from operator import attrgetter
from pathlib import Path
from typing import Any

from analyzer import __version__
from analyzer.index import model
from analyzer.index.model import FileFacts
from analyzer.parse.extract import EXTRACTOR_VERSION
from analyzer.parse.languages import grammar_versions

log = logging.getLogger(__name__)

SCHEMA = "analyzer-facts/1"
DB_NAME = "index.sqlite"


def cache_version() -> str:
    """Everything besides the blob that decides extraction output."""
    return (f"analyzer={__version__};extractor={EXTRACTOR_VERSION};model={model_fingerprint()};codec={CODEC};"
            f"{grammar_versions()}")


def variant_of(facts_or_language: FileFacts | str, declaration_only: bool = False) -> str:
    if isinstance(facts_or_language, FileFacts):
        return f"{facts_or_language.language}{':d' if facts_or_language.declaration_only else ''}"
    return f"{facts_or_language}{':d' if declaration_only else ''}"


class FactsCache:
    """SQLite-backed map (blob sha, variant) → FileFacts for the current `cache_version()`."""

    def __init__(self, cache_dir: Path, *, warn: Callable[[str], None] | None = None) -> None:
        self.path = Path(cache_dir) / DB_NAME
        self.version = cache_version()
        self._warn_cb = warn
        self._warned = False
        self.conn: sqlite3.Connection | None = None
        self._open()

    # -- lifecycle ---------------------------------------------------------------------------

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = self._connect()
        except sqlite3.DatabaseError as exc:
            self._set_aside(f"unreadable cache {self.path} ({exc})")
            try:
                self.conn = self._connect()
            except sqlite3.DatabaseError as exc2:  # pragma: no cover - disk trouble
                self._warn(f"cache disabled: {exc2}")
                self.conn = None
        except OSError as exc:
            self._warn(f"cache disabled: cannot create {self.path.parent} ({exc})")
            self.conn = None

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row is None:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if tables - {"meta"}:
                    raise sqlite3.DatabaseError("foreign tables and no schema marker")
                conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA,))
            elif row[0] != SCHEMA:
                raise sqlite3.DatabaseError(f"foreign schema {row[0]!r}")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS facts (blob TEXT NOT NULL, version TEXT NOT NULL, variant TEXT NOT NULL,"
                " data BLOB NOT NULL, PRIMARY KEY (blob, version, variant)) WITHOUT ROWID"
            )
            conn.commit()
            conn.execute("SELECT count(*) FROM facts WHERE blob = ''").fetchone()  # touches the table pages
            return conn
        except BaseException:
            conn.close()
            raise

    def _set_aside(self, why: str) -> None:
        aside = self.path.with_name(f"{self.path.name}.bad-{time.strftime('%Y%m%d%H%M%S')}")
        for suffix in ("", "-wal", "-shm"):
            src = Path(f"{self.path}{suffix}")
            if src.exists():
                try:
                    src.replace(Path(f"{aside}{suffix}"))
                except OSError:
                    src.unlink(missing_ok=True)
        self._warn(f"{why}; moved it to {aside.name} and started a new cache")

    def _warn(self, message: str) -> None:
        if self._warned:
            return
        self._warned = True
        if self._warn_cb is not None:
            self._warn_cb(message)
        else:
            log.warning("%s", message)

    def _fail(self, exc: Exception) -> None:
        """A SQLite error in use (a damaged page, a row that does not decode): set the file aside and start
        a new one, so this run's results are stored again; without a usable file, go on uncached."""
        if self.conn is not None:
            try:
                self.conn.close()
            except sqlite3.Error:
                pass
        self.conn = None
        self._set_aside(f"cache {self.path} failed ({exc})")
        try:
            self.conn = self._connect()
        except (sqlite3.DatabaseError, OSError):
            self.conn = None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def __enter__(self) -> FactsCache:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- access ------------------------------------------------------------------------------

    def get_many(self, wanted: Iterable[tuple[str, str, str]]) -> dict[str, FileFacts]:
        """Cached facts for (path, blob sha, variant) triples, keyed by path (misses are absent)."""
        out: dict[str, FileFacts] = {}
        if self.conn is None:
            return out
        try:
            for path, blob, variant in wanted:
                row = self.conn.execute(
                    "SELECT data FROM facts WHERE blob = ? AND version = ? AND variant = ?",
                    (blob, self.version, variant),
                ).fetchone()
                if row is None:
                    continue
                facts = decode_facts(row[0])
                facts.path = path
                out[path] = facts
        except (sqlite3.DatabaseError, zlib.error, ValueError, TypeError, KeyError, EOFError) as exc:
            self._fail(exc)
            return {}
        return out

    def put_encoded(self, items: Iterable[tuple[str, str, bytes]]) -> None:
        """Store (blob sha, variant, `encode_facts` bytes) rows in one transaction."""
        if self.conn is None:
            return
        rows = [(blob, self.version, variant, data) for blob, variant, data in items]
        if not rows:
            return
        try:
            with self.conn:
                self.conn.executemany(
                    "INSERT OR REPLACE INTO facts (blob, version, variant, data) VALUES (?, ?, ?, ?)", rows
                )
        except sqlite3.DatabaseError as exc:
            self._fail(exc)


# -- codec: positional marshal rows ------------------------------------------------------------
# A record is the tuple of its fields in class order (one C-level `attrgetter` call), lists of records
# become lists of such tuples; `marshal` writes and reads that several times faster than JSON, and
# keeps lists and tuples apart (list fields come back as lists). Rows are rebuilt with `starmap` (no
# Python frame per row; see `_decode_rows`). CODEC is part of the cache key: rows written by another
# codec are never read.

CODEC = "marshal-rows/1"


def _record_types() -> dict[str, type]:
    return {name: obj for name, obj in vars(model).items() if isinstance(obj, type) and is_dataclass(obj)}


def _layout(cls: type) -> tuple[tuple[str, ...], tuple[tuple[int, type], ...]]:
    """Field names of a record class and which of them hold lists of records (`model.RECORD_LISTS`)."""
    names = tuple(f.name for f in fields(cls))
    lists = model.RECORD_LISTS.get(cls, {})
    return names, tuple((i, lists[name]) for i, name in enumerate(names) if name in lists)


_LAYOUTS: dict[type, tuple[tuple[str, ...], tuple[tuple[int, type], ...]]] = {}


def _get_layout(cls: type) -> tuple[tuple[str, ...], tuple[tuple[int, type], ...]]:
    layout = _LAYOUTS.get(cls)
    if layout is None:
        layout = _LAYOUTS[cls] = _layout(cls)
    return layout


def model_fingerprint() -> str:
    """Changes whenever a record class gains, loses or reorders a field (positional rows depend on it)."""
    text = ";".join(f"{name}:{','.join(_get_layout(cls)[0])}" for name, cls in sorted(_record_types().items()))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


_ENCODERS: dict[type, Callable[[Any], Any]] = {}


def _encoder(cls: type) -> Callable[[Any], Any]:
    """A record → row function for `cls`: a tuple of the fields; nested record lists encoded in turn."""
    found = _ENCODERS.get(cls)
    if found is not None:
        return found
    names, nested = _get_layout(cls)
    get = attrgetter(*names) if len(names) > 1 else (lambda obj, _n=names[0]: (getattr(obj, _n),))
    if not nested:
        _ENCODERS[cls] = get
        return get
    subs = [(i, _encoder(sub)) for i, sub in nested]

    def encode(obj: Any) -> list[Any]:
        row = list(get(obj))
        for i, sub in subs:
            row[i] = list(map(sub, row[i]))
        return row

    _ENCODERS[cls] = encode
    return encode


def _decode_rows(cls: type, rows: list[Any]) -> list[Any]:
    """Records of `cls` from their rows: built by `starmap` (no Python frame per row); a nested record
    list (a call's arguments, an object's properties) is then rebuilt in place where it is not empty."""
    out = list(starmap(cls, rows))
    names, nested = _get_layout(cls)
    for i, sub in nested:
        name = names[i]
        get = attrgetter(name)
        if _get_layout(sub)[1]:  # records below that hold records (none in today's model)
            for obj in out:
                inner = get(obj)
                if inner:
                    setattr(obj, name, _decode_rows(sub, inner))
            continue
        for obj in out:
            inner = get(obj)
            if inner:
                setattr(obj, name, list(starmap(sub, inner)))
    return out


def encode_rows(facts: FileFacts) -> bytes:
    """The uncompressed encoding (what a worker hands the main process besides the stored bytes)."""
    row = _encoder(FileFacts)(facts)
    row[0] = ""  # the path belongs to the caller, not the blob
    return marshal.dumps(row)


def compress_rows(raw: bytes) -> bytes:
    """`encode_rows` bytes as stored in the cache."""
    return zlib.compress(raw, 1)


def encode_facts(facts: FileFacts) -> bytes:
    return compress_rows(encode_rows(facts))


def decode_rows(raw: bytes) -> FileFacts:
    """Facts from `encode_rows` bytes; ValueError (or EOFError, TypeError) when they are not."""
    row = marshal.loads(raw)
    if not isinstance(row, list) or len(row) != len(_get_layout(FileFacts)[0]):
        raise ValueError("cached facts do not match the model")
    for i, sub in _get_layout(FileFacts)[1]:
        row[i] = _decode_rows(sub, row[i])
    return FileFacts(*row)


def decode_facts(blob: bytes) -> FileFacts:
    """Facts from `encode_facts` bytes; ValueError (or zlib.error, EOFError, TypeError) when they are not."""
    return decode_rows(zlib.decompress(blob))
