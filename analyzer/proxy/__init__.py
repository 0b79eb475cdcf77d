"""A recording pass-through for LLM APIs (OpenAI chat completions and Responses, Anthropic Messages): what an
application really sends, one row per exchange, each request read by the request model (`analyzer.requests`).

`start_proxy(upstream, out_dir)` serves on 127.0.0.1 in a background thread; point the application at
`RunningProxy.base_url`. Every request is forwarded unchanged and every response passed back as it arrives
(streams chunk by chunk); each exchange becomes one row of observe's schema in `RunningProxy.log_path`, with the
request body verbatim. Credentials never reach the log.
"""

from __future__ import annotations

from analyzer.proxy.server import RunningProxy, start_proxy

__all__ = ["RunningProxy", "start_proxy"]
