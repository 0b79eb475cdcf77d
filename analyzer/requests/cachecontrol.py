"""Cache control of a request — what decides which cache it reaches, not what it says: body fields
(`prompt_cache_key`, `prompt_cache_retention`, `previous_response_id`, `user`, Anthropic's top-level
`cache_control` and `metadata.user_id`) and session-affinity headers named in the render rules.

Credentials never pass: only headers the rules list as affinity are kept, and the rules loader refuses a list
that names a credential header.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from analyzer.requests.build import marker, text_or_none
from analyzer.requests.model import CacheControl
from analyzer.requests.rules import RenderRules

Headers = Mapping[str, str] | Iterable[tuple[str, str]] | None


def header_pairs(headers: Headers) -> list[tuple[str, str]]:
    if headers is None:
        return []
    items = headers.items() if isinstance(headers, Mapping) else headers
    return [(str(k), str(v)) for k, v in items]


def affinity(headers: Headers, rules: RenderRules) -> tuple[tuple[str, str], ...]:
    """The session-affinity headers present, lower-cased names, in the order sent; never a credential."""
    wanted = set(rules.affinity_headers) - rules.never
    return tuple((k.lower(), v) for k, v in header_pairs(headers) if k.lower() in wanted)


def control_of(body: Mapping[str, Any], headers: Headers, rules: RenderRules) -> CacheControl:
    """The body's and headers' cache control (breakpoints are added by the parser that finds them)."""
    top = marker(body)
    metadata = body.get("metadata")
    user = text_or_none(body.get("user"))
    if user is None and isinstance(metadata, Mapping):
        user = text_or_none(metadata.get("user_id"))
    return CacheControl(automatic=top is not None, automatic_ttl=top.ttl if top is not None else None,
                        prompt_cache_key=text_or_none(body.get("prompt_cache_key")),
                        prompt_cache_retention=text_or_none(body.get("prompt_cache_retention")),
                        previous_response_id=text_or_none(body.get("previous_response_id")),
                        user=user, affinity=affinity(headers, rules))
