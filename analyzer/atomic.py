"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomic(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """Write `text` to a temporary sibling, fsync it, then rename it over `path`."""
    write_bytes_atomic(path, text.encode(encoding))


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes | list[bytes | bytearray]) -> None:
    """`data` may come in chunks (a stored graph's parts), so a large file is never joined in memory first."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in (data if isinstance(data, list) else [data]):
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o777)
        else:  # mkstemp creates 0600; a new file should get the usual umask-derived mode
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
