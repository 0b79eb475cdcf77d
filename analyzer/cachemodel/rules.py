"""The cache rule of each engine and provider, read from `analyzer/rules/cache/*.toml`.

Why data: a provider changes its minimum, step or TTL without notice; the number, the page it was read
from and the date it was checked sit together in one file, and the Python only interprets them.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from analyzer.errors import AnalyzerError

PACKAGE = "analyzer.rules.cache"


@dataclass(frozen=True)
class Rule:
    """One endpoint's cache rule: what it needs before it caches, in what steps it reports, how long it keeps."""

    name: str
    kind: str                       # "engine" (state follows the server's process) | "provider" (a hosted API)
    describe: str
    source: str                     # URL or vendored file + function
    checked: str                    # date the source was read (YYYY-MM-DD)
    min_prefix: int                 # tokens below which nothing is cached (model-independent default)
    granularity: int                # hits come in multiples of this many tokens
    ttls: dict[str, int] = field(default_factory=dict)       # name → seconds ("5m": 300; "idle": 300…)
    params: dict[str, Any] = field(default_factory=dict)     # the rule file's tables, as read
    caveats: tuple[str, ...] = ()

    def min_prefix_for(self, model: str | None) -> int:
        """The minimum for `model` (Anthropic's differs by model); the rule's default when no entry names it."""
        name = (model or "").lower()
        for entry in self.params.get("minimum", []):
            if any(p in name for p in entry.get("models", [])):
                return int(entry["tokens"])
        return self.min_prefix

    @property
    def cite(self) -> str:
        return f"{self.source} (checked {self.checked})"


def _rule(file: str, data: dict[str, Any]) -> Rule:
    try:
        head = data["rule"]
        ttls = {k: int(v) for k, v in data.get("ttls", {}).items()}
        for key in ("ttl_s", "ttl_idle_s", "ttl_idle_max_s", "ttl_max_s"):
            if int(head.get(key, 0)) > 0:
                ttls[key.removeprefix("ttl_").removesuffix("_s") or "ttl"] = int(head[key])
        return Rule(name=str(head["name"]), kind=str(head["kind"]), describe=str(head["describe"]),
                    source=str(head["source"]), checked=str(head["checked"]), min_prefix=int(head["min_prefix"]),
                    granularity=max(1, int(head["granularity"])), ttls=ttls,
                    params={**head, **{k: v for k, v in data.items() if k != "rule"}},
                    caveats=tuple(str(c["text"]) for c in data.get("caveats", [])))
    except (KeyError, TypeError, ValueError) as exc:
        raise AnalyzerError(f"analyzer/rules/cache/{file}: missing or malformed field ({exc}); every rule file "
                            "needs [rule] name, kind, describe, source, checked, min_prefix, granularity") from None


@cache
def all_rules() -> dict[str, Rule]:
    """Every shipped rule by name."""
    out: dict[str, Rule] = {}
    for entry in sorted(resources.files(PACKAGE).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        try:
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise AnalyzerError(f"analyzer/rules/cache/{entry.name}: {exc}; fix the TOML syntax") from None
        rule = _rule(entry.name, data)
        out[rule.name] = rule
    return out


def provider_rule(name: str) -> Rule:
    """The rule called `name` (llama.cpp, vllm, deepseek, openai, anthropic)."""
    rules = all_rules()
    if name not in rules:
        raise AnalyzerError(f"no cache rule {name!r}; known: {', '.join(sorted(rules))} (analyzer/rules/cache/)")
    return rules[name]


def rule_names() -> list[str]:
    return sorted(all_rules())
