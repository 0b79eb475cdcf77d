"""One hazards scan per graph: the result is stored under the graph's key, so a warm `hazards`, `report` or
`recheck` reads it instead of re-running the scan.

The key is the stored graph's key (pins, analyzer version, the code that builds the graph) plus a hash of
the scan's own code and rule files and its options: a new pin, a new analyzer or an edited hazard rule
runs the scan again, exactly when the graph or the scan would differ. The stored document is the full
result (near-misses included); a damaged or foreign file is ignored and rewritten.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from analyzer.atomic import write_text_atomic
from analyzer.graph.store import graph_key
from analyzer.lock import RepoPin

FORMAT = 1


@cache
def scan_fingerprint() -> str:
    """Hash of the scan's code and shipped rules (analyzer/hazards, analyzer/rules/hazards)."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha1()
    for folder in (root / "hazards", root / "rules" / "hazards"):
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".py", ".scm", ".toml") and path.is_file():
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def scan_key(pins: list[RepoPin], options: dict[str, Any]) -> str:
    payload = json.dumps({"format": FORMAT, "graph": graph_key(pins), "scan": scan_fingerprint(),
                          "options": options}, sort_keys=True)
    return hashlib.sha1(payload.encode()).hexdigest()[:20]


def scan_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / "hazards" / f"{key}.json"


def cached_scan(cache_dir: Path, key: str, compute: Callable[[], dict[str, Any]],
                warn: Callable[[str], None] | None = None) -> tuple[dict[str, Any], bool]:
    """(result, from_cache): the stored result for `key`, else `compute()` stored atomically."""
    path = scan_path(cache_dir, key)
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("cache_key") == key and isinstance(data.get("result"), dict):
                return data["result"], True
        except (OSError, ValueError):
            pass
        if warn is not None:
            warn(f"stored hazards scan {path} is damaged; scanning again")
    result = compute()
    try:
        write_text_atomic(path, json.dumps({"cache_key": key, "result": result}))
    except OSError as exc:  # a read-only cache still answers
        if warn is not None:
            warn(f"hazards scan not stored ({exc})")
    return result, False
