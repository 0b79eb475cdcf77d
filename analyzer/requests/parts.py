"""The `parts` digest of a row: sha256 and size of the system prompt, the tools (with their names in order) and
the messages, computed from the request model so rows of every shape are digested alike.

The digest is over a canonical form of the segments (role, name, and each block's type and canonical text), not
over the raw JSON: what the render rules call equal (a string vs one text block, a moved `cache_control`) gives
the same digest, and any change that renders differently gives another. `bytes` is the UTF-8 size of the
segments' texts — what the prompt holds — not of the framing.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from analyzer.requests.model import Request, Segment

PARTS = ("system", "tools", "messages")
KIND_OF_PART = {"system": "system", "tools": "tool", "messages": "message"}


def canonical_segments(segments: tuple[Segment, ...]) -> str:
    return json.dumps([[s.role, s.name, [[b.type, b.text] for b in s.blocks]] for s in segments],
                      ensure_ascii=False, separators=(",", ":"))


def request_parts(request: Request) -> dict[str, dict[str, Any]]:
    """{"system": {"sha256", "bytes"}, "tools": {"sha256", "bytes", "names"}, "messages": {…}} of `request`."""
    out: dict[str, dict[str, Any]] = {}
    for part in PARTS:
        segments = request.of_kind(KIND_OF_PART[part])  # type: ignore[arg-type]
        digest = hashlib.sha256(canonical_segments(segments).encode("utf-8")).hexdigest()
        size = sum(len(b.text.encode("utf-8")) for s in segments for b in s.blocks)
        out[part] = {"sha256": digest, "bytes": size, "segments": len(segments)}
    out["tools"]["names"] = list(request.tool_names)
    return out
