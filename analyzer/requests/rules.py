"""The render rules of each API shape (`analyzer/rules/requests/render.toml`), loaded once and checked.

Why a loader of its own: the order segments render in, which block types are plain text, which keys are cache
control and which headers are session affinity are facts about the endpoints, kept as data with their sources;
the parsers only follow them. The loader refuses a rule file that would let a credential header be recorded.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.requests.model import SHAPES, Shape

RULES_FILE = "analyzer/rules/requests/render.toml"
KINDS = ("tool", "system", "message")


@dataclass(frozen=True)
class ShapeRules:
    shape: Shape
    describe: str
    paths: tuple[str, ...]
    order: tuple[str, ...]
    system_roles: frozenset[str]
    text_types: frozenset[str]
    control_keys: frozenset[str]
    sort_keys: bool
    control_fields: tuple[str, ...]
    param_fields: tuple[str, ...]
    sources: tuple[str, ...]
    item_metadata_keys: frozenset[str] = frozenset()
    id_is_content_types: frozenset[str] = frozenset()
    detect_keys: tuple[str, ...] = ()
    detect_block_types: frozenset[str] = frozenset()
    detect_tool_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class RenderRules:
    checked: str
    shapes: dict[str, ShapeRules]
    affinity_headers: tuple[str, ...]
    never: frozenset[str]

    def of(self, shape: Shape) -> ShapeRules:
        return self.shapes[shape]


@functools.cache
def render_rules() -> RenderRules:
    """The rules shipped with the package (read once per process)."""
    text = resources.files("analyzer.rules.requests").joinpath("render.toml").read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AnalyzerError(f"{RULES_FILE}: {exc}") from None
    return parse_rules(data)


def parse_rules(data: dict[str, Any]) -> RenderRules:
    """Validate the TOML data: every shape present, orders made of the three kinds, no credential as affinity."""
    never = frozenset(h.lower() for h in data.get("never", []))
    affinity = tuple(h.lower() for h in data.get("affinity_headers", []))
    leaked = [h for h in affinity if h in never]
    if leaked:
        raise AnalyzerError(f"{RULES_FILE}: affinity_headers lists credential header(s) {', '.join(leaked)}; "
                            "remove them (credentials are never recorded)")
    shapes: dict[str, ShapeRules] = {}
    raw_shapes = data.get("shapes") or {}
    for shape in SHAPES:
        raw = raw_shapes.get(shape)
        if not isinstance(raw, dict):
            raise AnalyzerError(f"{RULES_FILE}: no [shapes.{shape}] table; every shape needs its render rules")
        order = tuple(raw.get("order") or ())
        if sorted(order) != sorted(KINDS):
            raise AnalyzerError(f"{RULES_FILE}: [shapes.{shape}] order {list(order)} must name each of "
                                f"{', '.join(KINDS)} once")
        key_order = raw.get("json_key_order", "kept")
        if key_order not in ("kept", "sorted"):
            raise AnalyzerError(f"{RULES_FILE}: [shapes.{shape}] json_key_order must be \"kept\" or \"sorted\"")
        shapes[shape] = ShapeRules(
            shape=shape, describe=str(raw.get("describe", shape)), paths=tuple(raw.get("paths") or ()),
            order=order, system_roles=frozenset(raw.get("system_roles") or ()),
            text_types=frozenset(raw.get("text_types") or ()), control_keys=frozenset(raw.get("control_keys") or ()),
            sort_keys=key_order == "sorted", control_fields=tuple(raw.get("control_fields") or ()),
            param_fields=tuple(raw.get("param_fields") or ()), sources=tuple(raw.get("sources") or ()),
            item_metadata_keys=frozenset(raw.get("item_metadata_keys") or ()),
            id_is_content_types=frozenset(raw.get("id_is_content_types") or ()),
            detect_keys=tuple(raw.get("detect_keys") or ()),
            detect_block_types=frozenset(raw.get("detect_block_types") or ()),
            detect_tool_keys=tuple(raw.get("detect_tool_keys") or ()))
    return RenderRules(checked=str(data.get("checked", "")), shapes=shapes, affinity_headers=affinity, never=never)
