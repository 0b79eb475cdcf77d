"""What every shape's parser shares: canonical block text, cache-control markers lifted out of blocks, and the
assembly of segments in the shape's rendering order (breakpoints renumbered to match).

Why here: "what renders the same compares equal" must be one rule for all shapes — a text block is its text,
any other block its JSON without the control keys (key order kept or sorted as the shape's rules say) — so a
chat body and an Anthropic body of the same conversation give segments that compare alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from analyzer.requests.model import Block, Breakpoint, CacheControl, Request, Segment, SegmentKind, Shape
from analyzer.requests.rules import ShapeRules


def canonical_json(value: Any, rules: ShapeRules) -> str:
    """Compact JSON as a server dumps it (UTF-8 kept, no spaces); keys sorted only when the shape says key order
    does not render."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=rules.sort_keys)


def without_control(value: Any, rules: ShapeRules) -> Any:
    """`value` with the cache-control keys removed at its top level (a marker is not prompt)."""
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if k not in rules.control_keys}
    return value


def block_of(part: Any, rules: ShapeRules) -> Block:
    """One content part as it renders: a text type is its text; a bare string is a text block; anything else is
    its canonical JSON (control keys removed)."""
    if isinstance(part, str):
        return Block("text", part)
    if isinstance(part, Mapping):
        kind = str(part.get("type") or "object")
        if kind in rules.text_types and isinstance(part.get("text"), str):
            return Block("text", part["text"])
        return Block(kind, canonical_json(without_control(part, rules), rules))
    return Block(type(part).__name__, canonical_json(part, rules))


@dataclass(frozen=True)
class ControlMarker:
    """A `cache_control` object as a body gave it: what a breakpoint (or automatic caching) is made of.

    `empty` keeps `{}` apart: on a content part it is still a breakpoint, on a tool or a system entry it is
    read as no marker (the parsers say which)."""

    type: str  # "ephemeral" when the object names no type
    ttl: str | None
    empty: bool = False


ControlMarkers = list[tuple[int | None, ControlMarker]]  # (block index, or None for the whole segment; the marker)


def marker(value: Any) -> ControlMarker | None:
    """The `cache_control` object of a block/tool/system entry, when it has one."""
    if isinstance(value, Mapping):
        cc = value.get("cache_control")
        if isinstance(cc, Mapping):
            ttl = cc.get("ttl")
            return ControlMarker(str(cc.get("type") or "ephemeral"), ttl if isinstance(ttl, str) else None, not cc)
    return None


def entry_markers(cc: ControlMarker | None, block: int | None = None) -> ControlMarkers:
    """The marker of a tool or system entry (on its `block`, or the whole segment): none for a missing or
    empty `cache_control`."""
    return [(block, cc)] if cc is not None and not cc.empty else []


@dataclass
class Pending:
    """A segment not yet placed, with the markers found on it (block index or None for the whole segment)."""

    segment: Segment
    markers: ControlMarkers = field(default_factory=list)


@dataclass
class Collected:
    """The segments of one body by kind, before they are put in rendering order."""

    by_kind: dict[str, list[Pending]] = field(default_factory=lambda: {"system": [], "tool": [], "message": []})

    def add(self, kind: SegmentKind, path: str, role: str | None, blocks: Iterable[Block], *,
            name: str | None = None, markers: Iterable[tuple[int | None, ControlMarker]] = ()) -> None:
        self.by_kind[kind].append(Pending(Segment(kind, path, role, tuple(blocks), name), list(markers)))


def assemble(shape: Shape, endpoint: str | None, body: Mapping[str, Any], collected: Collected, rules: ShapeRules,
             control: CacheControl, params: dict[str, Any]) -> Request:
    """Segments in the shape's order; each marker becomes a Breakpoint on the final segment index."""
    segments: list[Segment] = []
    breakpoints: list[Breakpoint] = []
    for kind in rules.order:
        for pending in collected.by_kind[kind]:
            for block, cc in pending.markers:
                breakpoints.append(Breakpoint(len(segments), block, cc.type, cc.ttl))
            segments.append(pending.segment)
    model = body.get("model")
    return Request(shape=shape, endpoint=endpoint, model=model if isinstance(model, str) else None,
                   segments=tuple(segments), control=_with_breakpoints(control, breakpoints), params=params)


def _with_breakpoints(control: CacheControl, breakpoints: list[Breakpoint]) -> CacheControl:
    return replace(control, breakpoints=tuple(breakpoints))


def content_blocks(content: Any, rules: ShapeRules) -> tuple[list[Block], ControlMarkers]:
    """A message's content (a string or a list of parts) as blocks, with the parts' cache-control markers."""
    if content is None:
        return [], []
    if isinstance(content, str):
        return [Block("text", content)], []
    if isinstance(content, list):
        blocks: list[Block] = []
        markers: ControlMarkers = []
        for i, part in enumerate(content):
            blocks.append(block_of(part, rules))
            cc = marker(part)
            if cc is not None:
                markers.append((i, cc))
        return blocks, markers
    return [block_of(content, rules)], []


def listed(value: Any) -> list[Any]:
    """`value` when it is a list, else no items: a malformed body is read as far as it goes, never raises."""
    return value if isinstance(value, list) else []


def fields(body: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """The named top-level fields that are present."""
    return {k: body[k] for k in names if k in body}


def text_or_none(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None
