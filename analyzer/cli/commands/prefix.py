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
HELP = "where consecutive recorded requests stop sharing a prefix; predicted vs reported cached tokens"
DESCRIPTION = (
    "Reads a log written by `analyze proxy` (rows with the request body). For each request and the one before it "
    "in its series (or --against a row or the control series) it prints where they first differ in the request "
    "structure (system / tools[i] and key / messages[j], role, character offset), in the rendered prompt and in "
    "tokens (asked of a llama.cpp server with --engine-url, else estimated and said so), the cached tokens the "
    "endpoint's rule predicts (analyzer/rules/prefix/cache.toml), the cached tokens the server reported and the "
    "difference, and the pinned code that wrote the first differing text (a hazard finding from --hazards, and "
    "the literal in the pinned sources found through the index)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", type=Path, metavar="LOG", help="a JSONL log written by `analyze proxy`")
    parser.add_argument("--against", default=None, metavar="ROW|control",
                        help="compare every request with row ROW (1-based line of the log), or each with the control "
                             "request at the same index (default: the request before it in its series)")
    parser.add_argument("--engine-url", default=None, metavar="URL",
                        help="a llama.cpp server to render and tokenize with (/apply-template, /tokenize); default: "
                             "the running `analyze engine`, when the log's endpoint is llama.cpp")
    parser.add_argument("--rule", default=None, help="prediction rule (llama.cpp, vllm, deepseek); default: detected")
    parser.add_argument("--hazards", type=Path, default=None, metavar="FILE",
                        help="findings of `analyze hazards --json` to attribute divergences to")
    parser.add_argument("--no-source", action="store_true",
                        help="do not look the differing text up in the pinned sources (no index needed)")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.observe.jsonl import read_rows
    from analyzer.prefix import analyse, report_lines
    from analyzer.prefix.predict import detect_rule

    rows = read_rows(args.log)
    if not rows:
        raise AnalyzerError(f"{args.log} holds no rows; pass a log written by `analyze proxy`")
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
            engine_url = _running_engine(ctx)
    lookup, note = (None, "source lookup skipped (--no-source)") if args.no_source else _lookup(ctx)
    report = analyse(rows, against=against, engine_url=engine_url, rule=args.rule, findings=findings,
                     lookup=lookup, log=str(args.log))
    report.attribution_note = note
    if ctx.json:
        ctx.emit_json(report.as_json())
    else:
        for line in report_lines(report):
            ctx.out.print(line, markup=False)
    return 0


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


def _running_engine(ctx: CliContext) -> str | None:
    """The base URL of the engine `analyze engine start` started, if it is still running."""
    from analyzer.engine.state import is_live, load_state

    state = load_state(ctx.cache_dir)
    if state is None or not is_live(state):
        return None
    url = state.get("base_url")
    return url if isinstance(url, str) else None


def _lookup(ctx: CliContext) -> tuple[Any, str | None]:
    """A literal lookup over the index of every pinned repo whose checkout is in the cache."""
    from analyzer.index.build import index_repo
    from analyzer.index.cache import FactsCache
    from analyzer.prefix.literals import IndexLiterals
    from analyzer.sources.workspace import open_repo

    indexes, missing = [], []
    try:
        pins = list(ctx.lock.repos.values())
    except AnalyzerError as exc:
        return None, f"no pinned sources ({exc}); the divergence is not traced to code"
    with FactsCache(ctx.cache_dir) as cache:
        for pin in pins:
            try:
                repo = open_repo(ctx, pin, fetch=False)
            except AnalyzerError as exc:
                missing.append(f"{pin.name} ({exc})")
                continue
            indexes.append(index_repo(repo, pin.commit, repo_name=pin.name, cache=cache))
    note = None
    if missing:
        note = "not looked up in " + "; ".join(missing)
    if not indexes:
        return None, note or "no pinned sources in the cache"
    pinned = ", ".join(f"{i.name} @ {i.commit[:12]}" for i in indexes)
    return IndexLiterals(indexes), f"literals looked up in {pinned}" + (f"; {note}" if note else "")
