"""Where two chat requests first differ in their structure: system, tools[i] and which key, messages[j] and role.

A request is read as an ordered list of fields — the system prompt, then every tool's leaves in key order,
then every message's role and leaves — the order a typical chat template renders them in. The first field
whose path or text differs is the divergence; its character offset is inside that field's text.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

SYSTEM_ROLES = ("system", "developer")
CONTEXT_CHARS = 40


@dataclass(frozen=True)
class Field:
    part: str            # system | tools | messages
    path: str            # e.g. "system", "tools[2].function.description", "messages[3].content"
    text: str
    index: int | None = None   # tools[i] / messages[j]
    role: str | None = None    # messages: the message's role


@dataclass(frozen=True)
class StructureDiff:
    kind: str            # changed | inserted | removed | appended | identical
    part: str | None = None
    path: str | None = None
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


def fields(body: dict[str, Any]) -> list[Field]:
    """The request's fields in rendering order (system, tools, messages)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    out: list[Field] = []
    lead = 0
    while lead < len(messages) and messages[lead].get("role") in SYSTEM_ROLES:
        content = messages[lead].get("content")
        path = "system" if lead == 0 else f"system[{lead}]"
        out.append(Field("system", path, _text(content), index=lead, role=messages[lead].get("role")))
        lead += 1
    for i, tool in enumerate(body.get("tools") or []):
        for key, text in _leaves(tool):
            out.append(Field("tools", f"tools[{i}]{key}", text, index=i))
    for j, m in enumerate(messages[lead:], start=lead):
        out.append(Field("messages", f"messages[{j}].role", str(m.get("role")), index=j, role=m.get("role")))
        for key, text in _leaves({k: v for k, v in m.items() if k != "role"}):
            out.append(Field("messages", f"messages[{j}]{key}", text, index=j, role=m.get("role")))
    return out


def first_difference(baseline: dict[str, Any], current: dict[str, Any]) -> StructureDiff:
    """The first field where `current` departs from `baseline`."""
    a, b = fields(baseline), fields(current)
    for fa, fb in zip(a, b, strict=False):
        if fa.path != fb.path:
            kind = "inserted" if len(b) > len(a) else "removed" if len(b) < len(a) else "changed"
            return StructureDiff(kind, fb.part, fb.path, fb.index, fb.role, 0, "", _head(fa.text), _head(fb.text),
                                 old_path=fa.path, field_text=fb.text)
        if fa.text != fb.text:
            k = common_chars(fa.text, fb.text)
            return StructureDiff("changed", fb.part, fb.path, fb.index, fb.role, k,
                                 fa.text[max(0, k - CONTEXT_CHARS):k], _head(fa.text[k:]), _head(fb.text[k:]),
                                 field_text=fb.text)
    if len(b) > len(a):
        fb = b[len(a)]
        return StructureDiff("appended", fb.part, fb.path, fb.index, fb.role, 0, "", "", _head(fb.text),
                             field_text=fb.text)
    if len(b) < len(a):
        fa = a[len(b)]
        return StructureDiff("removed", fa.part, fa.path, fa.index, fa.role, 0, "", _head(fa.text), "")
    return StructureDiff("identical")


def visible(text: str) -> str:
    """Whitespace made visible: space ·, tab →, newline ↵ (the line is kept on one line)."""
    return text.replace(" ", "·").replace("\t", "→").replace("\r", "␍").replace("\n", "↵")


def common_chars(a: str, b: str) -> int:
    """Number of leading characters `a` and `b` share."""
    return len(os.path.commonprefix([a, b]))


def _head(text: str) -> str:
    return text[:CONTEXT_CHARS]


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, separators=(",", ":"))


def _leaves(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(key path, text) of every scalar in `value`, in document order; a string is its own text."""
    if isinstance(value, dict):
        out: list[tuple[str, str]] = []
        for k, v in value.items():
            out += _leaves(v, f"{prefix}.{k}")
        return out or [(prefix, "{}")]
    if isinstance(value, list):
        out = []
        for i, v in enumerate(value):
            out += _leaves(v, f"{prefix}[{i}]")
        return out or [(prefix, "[]")]
    return [(prefix, value if isinstance(value, str) else json.dumps(value))]
