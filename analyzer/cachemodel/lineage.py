"""Lineage instead of arrival order: which conversation each request belongs to and which earlier request it
is compared with.

A conversation is a lineage of requests with the same head — system and tool segments (the first message
when there are none) — or one that shares most of it (the same agent with one changed line). A side call
(a title, a summary, a memory extraction, a sub-agent) has its own head and so its own conversation; this
is decided by what the requests contain, never by an application's wording.

Each request is compared with the entry the cache model matched when that entry is of its conversation,
else with the latest earlier request of its conversation, else with the entry the cache matched when it
reused most of the prompt.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from analyzer.cachemodel.model import Match
from analyzer.requests.model import Request


@dataclass(frozen=True)
class Lineage:
    conversation: dict[int, int]               # row → conversation number (1, 2… by first appearance)
    baseline: dict[int, tuple[int, str]]       # row → (row it is compared with, why)
    first_row: dict[int, int]                  # conversation → its first row


def head(request: Request) -> tuple[str, ...]:
    """What a conversation keeps fixed: its system and tool segments (the first message when it has neither)."""
    parts = tuple(f"{s.kind}:{s.name or ''}:{s.text()}" for kind in ("system", "tool")   # one order for every shape
                  for s in request.segments if s.kind == kind)
    if not parts:
        first = next((s for s in request.segments if s.kind == "message"), None)
        parts = (f"message:{first.text()}",) if first else ()
    return parts


def head_share(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """How much of two heads is the same: each pair of segments at the same place counts the characters they
    share from their start, over the longer head (one changed line keeps the rest of its segment and the
    segments after it)."""
    shared = sum(len(os.path.commonprefix([x, y])) for x, y in zip(a, b, strict=False))
    return shared / max(sum(map(len, a)), sum(map(len, b)), 1)


def group(requests: Sequence[tuple[int, Request]], matches: dict[int, Match], *,
          min_head_share: float = 0.5, tokens: dict[int, int] | None = None) -> Lineage:
    """Conversations and baselines for `requests` (row, request) in arrival order; `matches` by row. The first
    request of a conversation is compared with another conversation's entry only when it reused at least
    `min_head_share` of its prompt (`tokens`: prompt tokens by row) — a side call is not compared with the
    main call whose template header it shares."""
    tokens = tokens or {}
    conversation: dict[int, int] = {}
    baseline: dict[int, tuple[int, str]] = {}
    latest_head: dict[int, tuple[str, ...]] = {}
    rows_of: dict[int, list[int]] = {}
    for row, request in requests:
        h = head(request)
        conv = next((c for c, lh in latest_head.items() if lh == h), None)
        if conv is None:
            best, share = None, 0.0
            for c, lh in latest_head.items():
                k = head_share(lh, h)
                if k > share:
                    best, share = c, k
            conv = best if best is not None and share >= min_head_share else None
        if conv is None:
            conv = len(latest_head) + 1
            rows_of[conv] = []
        latest_head[conv] = h
        conversation[row] = conv
        match = matches.get(row)
        entry = match.entry if match is not None and match.cached > 0 else None
        substantial = entry is not None and match is not None and \
            match.cached >= min_head_share * max(1, tokens.get(row, 0))
        if entry is not None and conversation.get(entry) == conv:
            baseline[row] = (entry, f"the cache entry it matched (row {entry}, conversation {conv})")
        elif rows_of[conv]:
            earlier = rows_of[conv][-1]
            why = f"the request before it in conversation {conv}"
            if entry is not None and substantial:
                why += f" (the cache matched row {entry} of conversation {conversation[entry]})"
            baseline[row] = (earlier, why)
        elif entry is not None and substantial:
            baseline[row] = (entry, f"the cache entry it matched (row {entry}, conversation {conversation[entry]}; "
                                    f"first request of conversation {conv})")
        rows_of[conv].append(row)
    return Lineage(conversation, baseline, {c: rows[0] for c, rows in rows_of.items() if rows})
