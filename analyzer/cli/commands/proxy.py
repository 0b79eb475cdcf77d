"""`analyze proxy --upstream URL --out DIR`: record what an application really sends to an OpenAI-compatible API."""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from analyzer.cli.context import CliContext

NAME = "proxy"
ORDER = 46
HELP = "a recording pass-through in front of an OpenAI-compatible API (one JSON row per exchange)"
DESCRIPTION = (
    "Listens on 127.0.0.1, prints the base URL to hand to an application, forwards every request unchanged to "
    "--upstream (streamed responses are passed on chunk by chunk) and appends one JSON row per exchange to "
    "DIR/<name>-<UTC time>.jsonl in observe's row schema plus the request body verbatim, the client's path and "
    "the upstream URL. Authorization headers and keys are never written. Runs until Ctrl-C (exit 0); "
    "`analyze prefix LOG` then says where consecutive requests stopped sharing a prefix."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--upstream", required=True, metavar="URL",
                        help="the OpenAI-compatible base URL to forward to, e.g. http://127.0.0.1:8080/v1")
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

    proxy = start_proxy(args.upstream, args.out, port=args.port, api_key_env=args.api_key_env, log_name=args.name,
                        say=say)
    if ctx.json:
        ctx.emit_json({"base_url": proxy.base_url, "upstream": proxy.upstream, "log": str(proxy.log_path)})
    else:
        ctx.out.print(proxy.base_url, markup=False)
        say(f"proxy: forwarding {proxy.base_url} → {proxy.upstream}; rows in {proxy.log_path}; Ctrl-C stops")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        proxy.stop()
    dropped = f"; {proxy.dropped} exchange(s) still in flight were dropped" if proxy.dropped else ""
    say(f"stopped: {proxy.rows} exchange(s) recorded in {proxy.log_path}{dropped}")
    return 0
