"""Usage routes are data (`analyzer/rules/usage/*.toml`): a new adapter or a moved function is a rule-file change."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_usage_fixtures import DSH_FILES, DSH_NATIVE_MAP, PI_FILES

from analyzer.errors import AnalyzerError
from analyzer.usage.ledger import ROUTES, reconcile_routes
from analyzer.usage.locate import MemoryLocator
from analyzer.usage.routes import load_routes
from analyzer.usage.scenarios import load_scenario

PROXY_ADAPTER = """\
export function toTokenUsage(raw: any) {
  const hits = raw.prompt_cache_hit_tokens ?? 0
  return {
    inputTokens: raw.prompt_tokens - hits,
    outputTokens: raw.completion_tokens,
    cacheReadTokens: hits,
  }
}
"""

PROXY_RULES = """\
[[hop]]
key = "proxy_map"
repo = "dsh"
function = "toTokenUsage"
under = ["packages/llm/llm-proxy/src"]
role = "proxy wire usage → dsh TokenUsage"
reads = ["provider-usage"]
writes = "token-usage"
dropped = { value = "provider-usage", label = "provider → proxy" }

[[route]]
name = "proxy"
title = "dsh llm-proxy adapter → toTokenUsage"
usage = ["proxy_map"]
reader = "proxy"
"""


def values(fields: list[dict] | None) -> dict:
    return {f["name"]: f["value"] for f in fields or []}


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "extra.toml"
    p.write_text(text)
    return p


def test_shipped_routes_name_their_hops_from_the_rule_file() -> None:
    book = load_routes()
    assert book.source == "analyzer/rules/usage/routes.toml"
    parse = book.hop("parse")
    assert (parse.repo, parse.qualname, parse.reads, parse.writes) == ("pi", "parseChunkUsage",
                                                                       ("provider-usage", "model"), "pi-usage")
    assert ROUTES["pi-ai"].takes_model and not ROUTES["deepseek-native"].takes_model
    assert book.registry.path.endswith("models.generated.ts") and book.recheck_route == "pi-ai"


def test_a_new_adapter_is_a_rule_file_and_its_code(tmp_path: Path) -> None:
    book = load_routes((write(tmp_path, PROXY_RULES),))
    dsh = MemoryLocator({**DSH_FILES, "packages/llm/llm-proxy/src/usage.ts": PROXY_ADAPTER}, "dsh")
    locs = {"pi": MemoryLocator(PI_FILES, "pi"), "dsh": dsh}
    doc = reconcile_routes(load_scenario("deepseek-10k"), locs, [book.routes["proxy"]])
    ledger = doc["routes"]["proxy"]
    req = ledger["requests"][0]
    assert ledger["functions"]["proxy_map"]["site"] == "dsh:packages/llm/llm-proxy/src/usage.ts:1"
    assert values(req["dsh_usage"]) == {"inputTokens": 1040, "outputTokens": 500, "cacheReadTokens": 8960}
    assert req["dropped"]["provider → proxy"] == ["prompt_cache_miss_tokens", "total_tokens",
                                                  "completion_tokens_details.reasoning_tokens"]
    assert {f["reader"] for f in req["provider"]} == {"proxy"}
    assert values(ledger["meter"])["cacheReadTokens"] == 8960 and ledger["ok"] is True


def test_a_moved_function_is_an_edit_of_its_hop(tmp_path: Path) -> None:
    moved = {k: v for k, v in DSH_FILES.items() if "llm-deepseek" not in k}
    moved["packages/llm/deepseek-v2/src/translate.ts"] = DSH_NATIVE_MAP
    locs = {"dsh": MemoryLocator(moved, "dsh")}
    scenario = load_scenario("deepseek-10k")
    before = reconcile_routes(scenario, locs, [ROUTES["deepseek-native"]])
    assert [m["hop"] for m in before["missing"]] == ["native_map"]
    shipped = load_routes().hop("native_map")
    rules = (f'[[hop]]\nkey = "native_map"\nrepo = "dsh"\nfunction = "{shipped.qualname}"\n'
             f'under = ["packages/llm/deepseek-v2/src"]\nrole = "{shipped.role}"\nreads = ["provider-usage"]\n'
             'writes = "token-usage"\n')
    book = load_routes((write(tmp_path, rules),))
    after = reconcile_routes(scenario, locs, [book.routes["deepseek-native"]])
    ledger = after["routes"]["deepseek-native"]
    assert after["missing"] == [] and ledger["ok"] is True
    assert ledger["functions"]["native_map"]["site"].startswith("dsh:packages/llm/deepseek-v2/src/translate.ts:")


@pytest.mark.parametrize("text, message", [
    ('[[route]]\nname = "x"\ntitle = "t"\nusage = ["nope"]\nreader = "r"\n', "names hop 'nope'"),
    ('[[hop]]\nkey = "h"\nrepo = "dsh"\nfunction = "f"\nrole = "r"\nreads = ["pi-usage"]\nwrites = "token-usage"\n'
     '[[route]]\nname = "x"\ntitle = "t"\nusage = ["h"]\nreader = "r"\n', "reads pi-usage, which no earlier hop"),
    ('[[hop]]\nkey = "h"\nrepo = "dsh"\nfunction = "f"\nrole = "r"\nreads = []\nwrites = "other"\n'
     '[[route]]\nname = "x"\ntitle = "t"\nusage = ["h"]\nreader = "r"\n', "must write token-usage"),
    ('[[hop]]\nkey = "h"\nrepo = "dsh"\nrole = "r"\nwrites = "w"\n', "hop 'h' needs `function`"),
    ("[[hop]\n", "malformed usage route file"),
])
def test_a_malformed_route_file_is_one_error_naming_it(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(AnalyzerError, match=message) as exc:
        load_routes((write(tmp_path, text),))
    assert "extra.toml" in str(exc.value)


def test_route_choices_are_the_rule_files_routes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`reconcile --route` offers the routes of the rule file(s), then "both": a new route is a choice."""
    import argparse

    from analyzer.cli.commands import reconcile as command
    from analyzer.usage import routes

    book = load_routes((write(tmp_path, PROXY_RULES),))
    assert routes.route_choices(book) == ("pi-ai", "deepseek-native", "proxy", "both")
    monkeypatch.setattr(routes, "load_routes", lambda extra=(): book)
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    route = next(a for a in parser._actions if a.dest == "route")
    assert list(route.choices or []) == ["pi-ai", "deepseek-native", "proxy", "both"] and route.default == "both"
    assert parser.parse_args(["--route", "proxy"]).route == "proxy"
