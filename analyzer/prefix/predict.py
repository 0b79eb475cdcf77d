"""Predicted cached prompt tokens under each endpoint's documented rule: one small function per rule.

Each takes the token ids of the prompt now and of the prompts the server saw before (oldest first) and the
rule's parameters from `analyzer/rules/prefix/cache.toml`, and returns a `Prediction` that says how it got
there. They model what is documented, nothing more; what a rule leaves out is in its `caveats`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from analyzer.errors import AnalyzerError

Tokens = Sequence[int]


@dataclass(frozen=True)
class Prediction:
    rule: str
    cached: int
    basis: str                      # what the number is made of, in a sentence
    caveats: tuple[str, ...] = ()


@dataclass(frozen=True)
class RuleSet:
    fallback: str
    detect: tuple[dict[str, Any], ...]
    params: dict[str, dict[str, Any]] = field(default_factory=dict)


def common_prefix(a: Tokens, b: Tokens) -> int:
    """Number of leading tokens `a` and `b` share."""
    return len(os.path.commonprefix([list(a), list(b)]))


def llama_cpp_one_slot(previous: Tokens | None, current: Tokens, *, always_evaluated: int = 1) -> int:
    """llama.cpp with one slot and cache_prompt: the common prefix with the prompt the slot processed last,
    capped so that `always_evaluated` trailing prompt tokens are computed again (the last one gives the logits)."""
    if not previous:
        return 0
    return max(0, min(common_prefix(previous, current), len(current) - always_evaluated))


def vllm_blocks(earlier: Sequence[Tokens], current: Tokens, *, block_size: int, always_evaluated: int = 1) -> int:
    """vLLM automatic prefix caching: whole blocks of the longest common prefix with any earlier prompt whose
    blocks are still cached, never the full prompt (the last token is computed to sample from)."""
    if block_size <= 0:
        raise ValueError("block_size must be positive")
    best = max((common_prefix(e, current) for e in earlier), default=0)
    usable = max(0, min(best, len(current) - always_evaluated))
    return usable // block_size * block_size


def deepseek_units(earlier: Sequence[Tokens], current: Tokens, *, storage_tokens: int = 64,
                   interval_tokens: int = 0) -> int:
    """DeepSeek's context cache: the longest *whole* cache prefix unit the current prompt starts with, counted in
    whole storage units. Units from earlier requests: each one's full prompt (the end of its user input), the
    common prefix of every pair of them (common-prefix detection), and, when `interval_tokens` > 0, every
    multiple of it inside each earlier prompt (fixed-interval units)."""
    if storage_tokens <= 0:
        raise ValueError("storage_tokens must be positive")
    units: set[int] = set()
    for e in earlier:
        if common_prefix(e, current) == len(e):
            units.add(len(e))
        if interval_tokens > 0:
            shared = common_prefix(e, current)
            units.update(range(interval_tokens, shared + 1, interval_tokens))
    for i, a in enumerate(earlier):
        for b in earlier[i + 1:]:
            shared = common_prefix(a, b)
            if common_prefix(a[:shared], current) == shared:
                units.add(shared)
    best = max(units, default=0)
    return best // storage_tokens * storage_tokens


def predict(rule: str, earlier: Sequence[Tokens], current: Tokens, rules: RuleSet | None = None) -> Prediction:
    """The prediction for `current` given the prompts the server saw before it (oldest first)."""
    rules = rules or load_rules()
    p = rules.params.get(rule)
    if p is None:
        raise AnalyzerError(f"no prediction rule {rule!r}; known: {', '.join(sorted(rules.params))} "
                            "(analyzer/rules/prefix/cache.toml)")
    caveats = tuple(p.get("caveats", ()))
    if rule == "llama.cpp":
        previous = earlier[-1] if earlier else None
        n = llama_cpp_one_slot(previous, current, always_evaluated=int(p.get("always_evaluated", 1)))
        basis = (f"common prefix with the previous prompt ({len(previous)} tokens)" if previous else
                 "no previous prompt in the log: nothing cached")
    elif rule == "vllm":
        bs = int(p["block_size"])
        n = vllm_blocks(earlier, current, block_size=bs, always_evaluated=int(p.get("always_evaluated", 1)))
        basis = f"whole {bs}-token blocks of the longest common prefix with {len(earlier)} earlier prompt(s)"
    elif rule == "deepseek":
        unit = int(p["storage_tokens"])
        n = deepseek_units(earlier, current, storage_tokens=unit, interval_tokens=int(p.get("interval_tokens", 0)))
        basis = f"longest whole cache prefix unit of {len(earlier)} earlier request(s), in {unit}-token units"
    else:
        raise AnalyzerError(f"prediction rule {rule!r} is in the rules file but has no function in "
                            "analyzer/prefix/predict.py")
    return Prediction(rule, n, basis, caveats)


def detect_rule(row: dict[str, Any], rules: RuleSet | None = None) -> tuple[str, str]:
    """(rule name, why) for the endpoint a row was sent to, by the rules file's [[detect]] entries."""
    rules = rules or load_rules()
    usage: dict[str, Any] = row["usage"] if isinstance(row.get("usage"), dict) else {}
    timings: dict[str, Any] = row["timings"] if isinstance(row.get("timings"), dict) else {}
    version = str((row.get("server") or {}).get("version") or "")
    url = str((row.get("config") or {}).get("endpoint") or "")
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
    return RuleSet(fallback=data["fallback"], detect=tuple(data.get("detect", [])), params=dict(data["rules"]))
