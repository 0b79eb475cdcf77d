"""The cache model: what each endpoint's cache holds as a log of requests goes by, which entry each request
matches and how many tokens it should find cached — llama.cpp's slots and host prompt cache, vLLM's block
chain, DeepSeek's prefix units, OpenAI's automatic cache, Anthropic's breakpoints.

    from analyzer.cachemodel import Arrival, simulate, provider_rule
    matches = simulate([Arrival(1, tokens1, at=0.0), Arrival(2, tokens2, at=4.2)], "anthropic")
    rule = provider_rule("openai")       # rule.min_prefix, rule.granularity, rule.ttls, rule.cite

From a proxy log: `logged, _ = logged_requests(rows)`, then `arrival(e, rendered)` for each (rendered: the
request's tokens and block ends, e.g. `analyzer.prefix.tokens.render_request`); rows the server did not answer
with 2xx become arrivals that never enter the state.

Rule parameters, sources and dates: `analyzer/rules/cache/*.toml`.
"""

from analyzer.cachemodel.fromlog import LoggedRequest, arrival, logged_requests
from analyzer.cachemodel.miss_causes import Cause, explain, within
from analyzer.cachemodel.model import Arrival, Held, Lost, Marker, Match, Skipped, common_prefix
from analyzer.cachemodel.rules import Rule, all_rules, provider_rule, rule_names
from analyzer.cachemodel.simulate import simulate, skipped

__all__ = ["Arrival", "Cause", "Held", "LoggedRequest", "Lost", "Marker", "Match", "Rule", "Skipped", "all_rules",
           "arrival", "common_prefix", "explain", "logged_requests", "provider_rule", "rule_names", "simulate",
           "skipped", "within"]
