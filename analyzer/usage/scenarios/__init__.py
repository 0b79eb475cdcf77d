"""Usage scenarios: what a provider reported for one or more requests, plus the prices to check cost with.

Scenarios are TOML files shipped in `analyzer/usage/scenarios/`; a path to any other TOML file works too.
Prices are USD per 1M tokens with the date and source written next to them, because they change.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from analyzer.errors import AnalyzerError

DEFAULT_SCENARIO = "deepseek-10k"
_PRICE_KEYS = ("cache_hit", "cache_miss", "output")


@dataclass(frozen=True)
class Prices:
    """USD per 1M tokens; DeepSeek bills a cache hit, a cache miss and an output token differently."""

    cache_hit: float
    cache_miss: float
    output: float
    cache_write: float = 0.0
    as_of: str = ""
    source: str = ""


@dataclass(frozen=True)
class Request:
    turn: int
    step: int
    usage: dict[str, Any]

    @property
    def prompt_tokens(self) -> int:
        return int(self.usage.get("prompt_tokens", 0))

    @property
    def completion_tokens(self) -> int:
        return int(self.usage.get("completion_tokens", 0))

    @property
    def reasoning_tokens(self) -> int:
        return int((self.usage.get("completion_tokens_details") or {}).get("reasoning_tokens", 0))

    @property
    def cache_hits(self) -> int:
        """What the provider says was served from cache (DeepSeek's field first, then OpenAI's)."""
        if "prompt_cache_hit_tokens" in self.usage:
            return int(self.usage["prompt_cache_hit_tokens"])
        return int((self.usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0))


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    provider: str
    model: str
    base_url: str
    prices: Prices
    requests: tuple[Request, ...]
    registry: tuple[str, str] | None = None
    path: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def shipped_names() -> list[str]:
    """Names of the scenarios shipped with the package."""
    folder = resources.files(__name__)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_scenario(name_or_path: str | None) -> Scenario:
    """A shipped scenario by name, or a TOML file by path; one-line errors for anything wrong."""
    name = name_or_path or DEFAULT_SCENARIO
    if name.endswith(".toml") or "/" in name:
        p = Path(name)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise AnalyzerError(f"scenario {name}: cannot read ({exc.strerror}); pass a TOML file or one of: "
                                f"{', '.join(shipped_names())}") from None
        label = str(p)
    else:
        res = resources.files(__name__) / f"{name}.toml"
        if not res.is_file():
            raise AnalyzerError(f"no scenario named {name!r}; shipped scenarios: {', '.join(shipped_names())} "
                                "(or pass a path to a TOML file)")
        text = res.read_text(encoding="utf-8")
        label = f"scenarios/{name}.toml"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AnalyzerError(f"scenario {label}: malformed TOML ({exc}); fix the syntax") from None
    return parse_scenario(data, label)


def parse_scenario(data: dict[str, Any], label: str) -> Scenario:
    def need(table: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
        value = table.get(key)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise AnalyzerError(f"scenario {label}: {where}{key} is missing or not a {_kind_name(kind)}; add it")
        return value

    prices_t = need(data, "prices", dict, "")
    rates = {k: float(need(prices_t, k, (int, float), "prices.")) for k in _PRICE_KEYS}
    prices = Prices(**rates,
                    cache_write=float(prices_t.get("cache_write", 0.0)),
                    as_of=str(need(prices_t, "as_of", str, "prices.")),
                    source=str(need(prices_t, "source", str, "prices.")))
    requests_t = data.get("requests")
    if not isinstance(requests_t, list) or not requests_t:
        raise AnalyzerError(f"scenario {label}: no [[requests]]; add at least one with a [requests.usage] table")
    requests = []
    for i, r in enumerate(requests_t, 1):
        usage = r.get("usage") if isinstance(r, dict) else None
        if not isinstance(usage, dict) or "prompt_tokens" not in usage:
            raise AnalyzerError(f"scenario {label}: requests[{i}].usage needs at least prompt_tokens")
        requests.append(Request(int(r.get("turn", i)), int(r.get("step", 0)), usage))
    registry_t = data.get("registry")
    registry = None
    if isinstance(registry_t, dict):
        registry = (str(need(registry_t, "provider", str, "registry.")), str(need(registry_t, "model", str,
                                                                                  "registry.")))
    return Scenario(
        name=str(need(data, "name", str, "")), title=str(data.get("title", "")),
        provider=str(need(data, "provider", str, "")), model=str(need(data, "model", str, "")),
        base_url=str(data.get("base_url", "")), prices=prices, requests=tuple(requests), registry=registry,
        path=label)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {"dict": "table", "str": "string", "int": "number", "float": "number"}
    return " or ".join(dict.fromkeys(names[k.__name__] for k in kinds))
