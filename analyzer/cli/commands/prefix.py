"""`analyze prefix LOG`: where each recorded request stopped sharing a prefix, predicted vs reported cache hits."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from analyzer.cli.context import CliContext
from analyzer.errors import AnalyzerError

NAME = "prefix"
ORDER = 47
HELP = "where recorded requests stop sharing a prefix with their lineage; the cache model's prediction vs reported"
DESCRIPTION = (
    "Reads a log written by `analyze proxy` (chat completions, Responses and Anthropic Messages bodies). A cache "
    "model of the endpoint (analyzer/rules/cache/: llama.cpp slots and host prompt cache, vLLM blocks, DeepSeek "
    "units, OpenAI, Anthropic breakpoints and TTLs) runs over the whole log: which entry each request matches and "
    "the cached tokens it predicts, next to what the server reported, with the likely cause when they differ. "
    "Requests are grouped into conversations by their system/tool lineage; each is compared with the entry it "
    "matched, else the request before it in its conversation (or --against a row or the control series): where "
    "they first differ in the request segments (part, path, role, character), in the rendered prompt and in tokens "
    "(asked of a llama.cpp server with --engine-url, else estimated and said so), and the pinned code that wrote "
    "the first differing text. Rejected requests are listed as skipped and never enter the cache state."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", type=Path, nargs="+", metavar="LOG",
                        help="a JSONL log written by `analyze proxy`; several logs of one server are read as one "
                             "(rows numbered across them in the order given)")
    parser.add_argument("--against", default=None, metavar="ROW|control",
                        help="compare every request with row ROW (1-based line of the log), or each with the control "
                             "request at the same index (default: the request before it in its series)")
    parser.add_argument("--engine-url", default=None, metavar="URL",
                        help="a llama.cpp server to render and tokenize with (/apply-template, /tokenize); default: "
                             "the running `analyze engine`, when the log's endpoint is llama.cpp")
    parser.add_argument("--rule", default=None,
                        help="cache rule (llama.cpp, vllm, deepseek, openai, anthropic: analyzer/rules/cache/); "
                             "default: detected from the rows")
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE",
                        help="a server cache setting the rows do not record, e.g. slots=2, cache_ram_mib=0, "
                             "cache_reuse=256, slot_similarity=0.1 (repeatable; wins over the rows)")
    parser.add_argument("--hazards", type=Path, default=None, metavar="FILE",
                        help="findings of `analyze hazards --json` to attribute divergences to")
    parser.add_argument("--at", action="append", default=[], metavar="NAME=SHA",
                        help="look the differing text up with NAME at another commit for this run (full sha; the "
                             "lock is not edited; the commit is fetched from NAME's source when the cache lacks it)")
    parser.add_argument("--no-source", action="store_true",
                        help="do not look the differing text up in the pinned sources (no index needed)")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.api import PrefixOptions, prefix
    from analyzer.engine.state import running_base_url
    from analyzer.observe.jsonl import read_rows
    from analyzer.prefix import report_lines
    from analyzer.prefix.endpoint_rule import detect_rule

    rows = []
    for path in args.log:
        found = read_rows(path)
        if not found:
            raise AnalyzerError(f"{path} holds no rows; pass a log written by `analyze proxy`")
        rows += found
    against: int | str | None = args.against
    if isinstance(against, str):
        if against.isdigit():
            against = int(against)
        elif against != "control":
            raise AnalyzerError(f"--against {against!r}: expected a row number (1-based line of the log) or "
                                "'control'", exit_code=2)
    findings = _findings(args.hazards) if args.hazards else []
    engine_url = args.engine_url
    if engine_url is None:
        first = next((r for r in rows if isinstance(r.get("request_body"), str)), rows[0])
        if (args.rule or detect_rule(first)[0]) == "llama.cpp":
            engine_url = running_base_url(ctx.cache_dir)
    if args.no_source and args.at:
        raise AnalyzerError("--at and --no-source: --at moves the pins the text is looked up at; drop one",
                            exit_code=2)
    lookup, note = (None, "source lookup skipped (--no-source)") if args.no_source else _lookup(ctx, args.at)
    report = prefix(rows, PrefixOptions(against=against, engine_url=engine_url, rule=args.rule,
                                        settings=_settings(args.setting), findings=findings, lookup=lookup))
    report.log = ", ".join(str(p) for p in args.log)
    report.attribution_note = note
    if ctx.json:
        ctx.emit_json(report.as_json())
    else:
        for line in report_lines(report):
            ctx.out.print(line, markup=False)
    return 0


def _settings(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise AnalyzerError(f"--setting {pair!r}: expected NAME=VALUE, e.g. slots=2", exit_code=2)
        text = value.strip()
        try:
            out[name.strip()] = json.loads(text.lower() if text.lower() in ("true", "false") else text)
        except json.JSONDecodeError:
            out[name.strip()] = text
    return out


def _findings(path: Path) -> list[dict[str, Any]]:
    from analyzer.hazards.model import validate_hazards_json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise AnalyzerError(f"--hazards {path}: cannot read it as JSON ({exc}); write it with "
                            "`analyze --json hazards > FILE`") from None
    problems = validate_hazards_json(data) if isinstance(data, dict) else ["not a JSON object"]
    if problems:
        raise AnalyzerError(f"--hazards {path}: not an `analyze hazards --json` result ({problems[0]})")
    return list(data["findings"])


def _lookup(ctx: CliContext, at: list[str]) -> tuple[Any, str | None]:
    """The library's lookup on the pinned sources; without a lock (and no `--at`) the report goes on untraced."""
    from analyzer.api.prefix import pinned_lookup

    try:
        session = ctx.session()
    except AnalyzerError as exc:
        if at:
            raise
        return None, f"no pinned sources ({exc}); the divergence is not traced to code"
    found = pinned_lookup(session, at)
    return found.lookup, found.note
