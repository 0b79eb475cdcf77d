"""`analyze proxy --upstream URL --out DIR`: record what an application really sends to an LLM API (OpenAI chat
completions or Responses, Anthropic Messages)."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path

from analyzer.cli.context import CliContext

NAME = "proxy"
ORDER = 46
HELP = "a recording pass-through in front of an LLM API (chat, Responses, Anthropic Messages; a row per exchange)"
DESCRIPTION = (
    "Listens on 127.0.0.1, prints the base URL to hand to an application, forwards every request unchanged to "
    "--upstream (streamed responses are passed on chunk by chunk) and appends one JSON row per exchange to "
    "DIR/<name>-<UTC time>.jsonl in observe's row schema plus the request body verbatim, the client's path and "
    "the upstream URL, its API shape (chat, responses, anthropic) and cache control. Authorization, x-api-key and "
    "api-key headers and keys are never written. Runs until Ctrl-C or SIGTERM (exit 0, also as a background job "
    "of a script); "
    "`analyze prefix LOG` then says where consecutive requests stopped sharing a prefix."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--upstream", required=True, metavar="URL",
                        help="the base URL to forward to (OpenAI-compatible or Anthropic), e.g. "
                             "http://127.0.0.1:8080/v1")
    parser.add_argument("--port", type=int, default=0, metavar="N", help="listen on this port (default: a free one)")
    parser.add_argument("--out", type=Path, default=Path("observations"), metavar="DIR",
                        help="directory for the JSONL log (default: observations/)")
    parser.add_argument("--name", default=None, help="log name (default: proxy)")
    parser.add_argument("--api-key-env", default=None, metavar="NAME",
                        help="send the key held in $NAME upstream instead of the client's Authorization "
                             "(the NAME, never the key)")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.proxy import start_proxy

    def say(line: str) -> None:
        ctx.err.print(line, markup=False)

    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    # Installed explicitly, before the URL is printed: a job a script starts in the background inherits SIGINT
    # *ignored* (Python then installs no KeyboardInterrupt handler), and SIGTERM would end the process without
    # its closing line. Both stop it the same way.
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        proxy = start_proxy(args.upstream, args.out, port=args.port, api_key_env=args.api_key_env,
                            log_name=args.name, say=say)
        try:
            if ctx.json:
                ctx.emit_json({"base_url": proxy.base_url, "upstream": proxy.upstream, "log": str(proxy.log_path)})
            else:
                ctx.out.print(proxy.base_url, markup=False)
                say(f"proxy: forwarding {proxy.base_url} → {proxy.upstream}; rows in {proxy.log_path}; "
                    "Ctrl-C or SIGTERM stops")
            stop.wait()
        finally:
            proxy.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    dropped = f"; {proxy.dropped} exchange(s) still in flight were dropped" if proxy.dropped else ""
    say(f"stopped: {proxy.rows} exchange(s) recorded in {proxy.log_path}{dropped}")
    return 0
