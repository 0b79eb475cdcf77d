"""Where two requests first differ in their structure: the request model's segments (system blocks, tool
definitions, messages with role and blocks) of any shape, in the order the endpoint renders them.

The first segment whose kind, role, tool name or rendered text differs is the divergence; its character
offset is inside that segment's text (its blocks joined), so the same change is placed alike in a chat, a
Responses and an Anthropic body.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from analyzer.requests.model import Request, Segment

CONTEXT_CHARS = 40


@dataclass(frozen=True)
class StructureDiff:
    kind: str            # changed | inserted | removed | appended | identical
    part: str | None = None    # system | tools | messages
    path: str | None = None    # the segment's path in the body ("messages[3]", "system[0]", "tools[2].function.name")
    index: int | None = None
    role: str | None = None
    offset: int | None = None  # character offset inside the field's text
    before: str = ""     # shared text just before the divergence
    old: str = ""        # the baseline's text from the divergence on (short)
    new: str = ""        # this request's text from the divergence on (short)
    old_path: str | None = None  # when the field paths differ (a key or tool added, removed or reordered)
    field_text: str = ""  # this request's whole differing field (for attribution), not printed

    def as_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("kind", "part", "path", "index", "role", "offset", "old_path")}
        out.update(before=visible(self.before), old=visible(self.old), new=visible(self.new))
        return out


PARTS = {"system": "system", "tool": "tools", "message": "messages"}


def first_difference(baseline: Request | dict[str, Any], current: Request | dict[str, Any]) -> StructureDiff:
    """The first segment where `current` departs from `baseline`, in the request model's rendering order
    (a decoded body of any shape is parsed first). Segments compare by kind, role, name and rendered text,
    so a moved `cache_control` marker or a string turned into one text block is no difference."""
    a, b = _segments(baseline), _segments(current)
    if _shape(baseline) != _shape(current):   # each shape has its own order: compare in one (system, tools, messages)
        a, b = _canonical(a), _canonical(b)
    for i, (sa, sb) in enumerate(zip(a, b, strict=False)):
        if (sa.kind, sa.role, sa.name) != (sb.kind, sb.role, sb.name):
            kind = ("inserted" if len(b) > len(a) and i + 1 < len(b) and _same(sa, b[i + 1]) else
                    "removed" if len(b) < len(a) and i + 1 < len(a) and _same(a[i + 1], sb) else "changed")
            path = sb.path + (_name_suffix(sb) if sa.kind == sb.kind == "tool" else "")
            old_text = sa.name if sa.kind == sb.kind == "tool" and sa.name else sa.text()
            new_text = sb.name if sa.kind == sb.kind == "tool" and sb.name else sb.text()
            if sa.kind == sb.kind == "message" and sa.role != sb.role:
                path, old_text, new_text = f"{sb.path}.role", str(sa.role), str(sb.role)
            return StructureDiff(kind, PARTS[sb.kind], path, _index(sb), sb.role, 0, "", _head(old_text or ""),
                                 _head(new_text or ""), old_path=sa.path if sa.path != sb.path or kind != "changed"
                                 else None, field_text=sb.text())
        ta, tb = sa.text(), sb.text()
        if ta != tb:
            k = common_chars(ta, tb)
            return StructureDiff("changed", PARTS[sb.kind], sb.path, _index(sb), sb.role, k,
                                 ta[max(0, k - CONTEXT_CHARS):k], _head(ta[k:]), _head(tb[k:]), field_text=tb)
    if len(b) > len(a):
        sb = b[len(a)]
        return StructureDiff("appended", PARTS[sb.kind], sb.path, _index(sb), sb.role, 0, "", "", _head(sb.text()),
                             field_text=sb.text())
    if len(b) < len(a):
        sa = a[len(b)]
        return StructureDiff("removed", PARTS[sa.kind], sa.path, _index(sa), sa.role, 0, "", _head(sa.text()), "")
    return StructureDiff("identical")


def _segments(value: Request | dict[str, Any]) -> tuple[Segment, ...]:
    if isinstance(value, Request):
        return value.segments
    from analyzer.requests import parse_request

    request = parse_request(value)
    return request.segments if request is not None else ()


def _shape(value: Request | dict[str, Any]) -> str | None:
    return value.shape if isinstance(value, Request) else None


KIND_ORDER = {"system": 0, "tool": 1, "message": 2}


def _canonical(segments: tuple[Segment, ...]) -> tuple[Segment, ...]:
    return tuple(sorted(segments, key=lambda s: KIND_ORDER[s.kind]))   # stable: order within a kind kept


def _same(x: Segment, y: Segment) -> bool:
    return (x.kind, x.role, x.name, x.text()) == (y.kind, y.role, y.name, y.text())


def _index(seg: Segment) -> int | None:
    m = re.search(r"\[(\d+)\]$", seg.path)
    return int(m.group(1)) if m else None


def _name_suffix(seg: Segment) -> str:
    """Where a tool's name sits in its definition: chat nests it under `function`."""
    return ".function.name" if '"function":{' in seg.text() else ".name"


def visible(text: str) -> str:
    """Whitespace made visible: space ·, tab →, newline ↵ (the line is kept on one line)."""
    return text.replace(" ", "·").replace("\t", "→").replace("\r", "␍").replace("\n", "↵")


def common_chars(a: str, b: str) -> int:
    """Number of leading characters `a` and `b` share."""
    return len(os.path.commonprefix([a, b]))


def _head(text: str) -> str:
    return text[:CONTEXT_CHARS]


