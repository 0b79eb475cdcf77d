"""The observation log: one JSON object per line, flushed and fsynced per line, secrets scrubbed before writing.

Each row is written with a single `write` of a complete line and synced before the next request starts, so an
interrupted run leaves a valid JSONL file holding every finished request.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from analyzer.errors import AnalyzerError

REDACTED = "[redacted]"


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Remove every secret (and any `Bearer …` credential) from a string about to leave the process."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return re.sub(r"(?i)(bearer\s+)[^\s\"',]+", r"\1" + REDACTED, text)


def log_path(out_dir: Path, name: str, now: _dt.datetime | None = None) -> Path:
    """`DIR/<name>-<UTC time>.jsonl`; a suffix keeps two runs in the same second apart."""
    stamp = (now or _dt.datetime.now(_dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "experiment"
    path = out_dir / f"{safe}-{stamp}.jsonl"
    n = 2
    while path.exists():
        path = out_dir / f"{safe}-{stamp}-{n}.jsonl"
        n += 1
    return path


class RowWriter:
    """Appends rows to one JSONL file; `rows` counts what is durably on disk."""

    def __init__(self, path: Path, secrets: Iterable[str] = ()) -> None:
        self.path = path
        self.secrets = [s for s in secrets if s]
        self.rows = 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(path, "x", encoding="utf-8")  # noqa: SIM115 (closed in close())
        except OSError as exc:
            raise AnalyzerError(f"cannot create the observation log {path} ({exc.strerror}); pass --out DIR with a "
                                "writable directory") from None

    def write(self, row: dict[str, Any]) -> None:
        line = scrub(json.dumps(row, ensure_ascii=False, separators=(",", ":")), self.secrets)
        with _signals_deferred():  # Ctrl-C lands after the line is complete and synced, never inside it
            self._fh.write(line + "\n")
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self.rows += 1

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM (delivered when the block ends) where the platform allows it and we are the main
    thread: a row is written whole or not at all."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an observation log; a torn last line (a crash mid-write) is reported, not guessed."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AnalyzerError(f"cannot read observation log {path} ({exc.strerror}); pass a file written by "
                            "`analyze observe`") from None
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise AnalyzerError(f"{path}:{n}: not a JSON object; the log is damaged (remove that line)") from None
        if not isinstance(row, dict):
            raise AnalyzerError(f"{path}:{n}: not a JSON object; pass a file written by `analyze observe`")
        rows.append(row)
    return rows
