"""Which cache rule a log's endpoint follows, and the lineage settings, from `analyzer/rules/prefix/cache.toml`.

The predictions themselves are the cache model's (`analyzer.cachemodel`): one definition for `prefix` and
`cost`. This module only reads the rows to say which rule applies and why.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from analyzer.errors import AnalyzerError


@dataclass(frozen=True)
class RuleSet:
    fallback: str
    detect: tuple[dict[str, Any], ...]
    lineage: dict[str, Any] = field(default_factory=dict)


def detect_rule(row: dict[str, Any], rules: RuleSet | None = None) -> tuple[str, str]:
    """(rule name, why) for the endpoint a row was sent to, by the rules file's [[detect]] entries."""
    rules = rules or load_rules()
    usage: dict[str, Any] = row["usage"] if isinstance(row.get("usage"), dict) else {}
    timings: dict[str, Any] = row["timings"] if isinstance(row.get("timings"), dict) else {}
    version = str((row.get("server") or {}).get("version") or "")
    url = str((row.get("config") or {}).get("endpoint") or row.get("upstream_url") or "")
    for d in rules.detect:
        if "usage_field" in d and d["usage_field"] in usage:
            return d["rule"], f"the usage has {d['usage_field']}"
        if "timings_field" in d and d["timings_field"] in timings:
            return d["rule"], f"the response has timings.{d['timings_field']}"
        if "server_version_prefix" in d and version.startswith(d["server_version_prefix"]):
            return d["rule"], f"the server reported {version}"
        if "url_contains" in d and d["url_contains"] in url:
            return d["rule"], f"the endpoint is {url}"
    return rules.fallback, "nothing in the rows identifies the server: assumed"


@cache
def load_rules() -> RuleSet:
    text = resources.files("analyzer.rules.prefix").joinpath("cache.toml").read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AnalyzerError(f"analyzer/rules/prefix/cache.toml: {exc}") from None
    return RuleSet(fallback=data["fallback"], detect=tuple(data.get("detect", [])),
                   lineage=dict(data.get("lineage", {})))
