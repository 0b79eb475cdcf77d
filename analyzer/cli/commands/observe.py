"""`analyze observe EXPERIMENT`: send one controlled comparison to a real engine and keep the raw usage."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.cli.context import CliContext
from analyzer.cli.options import add_record_option, record_file
from analyzer.errors import AnalyzerError

if TYPE_CHECKING:
    from analyzer.observe.experiment import Experiment

NAME = "observe"
ORDER = 45
HELP = "send a controlled comparison to a real engine and record its raw cache usage"
DESCRIPTION = (
    "Reads an experiment file (a shipped name or a TOML path; --list shows the shipped ones), sends a control "
    "series and a treatment series that differ in exactly one factor to an OpenAI-compatible /chat/completions "
    "endpoint (streaming, stream_options.include_usage) — built by the tool from the file's [request], or by a "
    "real app (the file's [app]) behind the recording proxy — appends one JSON row per request to "
    "DIR/<name>-<UTC time>.jsonl with the provider's raw usage verbatim, and prints a summary: prompt and cached "
    "tokens, hit %, TTFT and total time per series, and where hits dropped. The API key is read from the "
    "environment variable the experiment names and is never written anywhere. Exit 0 when every request "
    "succeeded, 1 when some failed, 130 when interrupted."
)
BASE_URL_ENV = "ANALYZER_OBSERVE_BASE_URL"
MODEL_ENV = "ANALYZER_OBSERVE_MODEL"
EXIT_INTERRUPTED = 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment", nargs="?", metavar="EXPERIMENT",
                        help="a shipped experiment name or a path to an experiment TOML file")
    parser.add_argument("--list", action="store_true", help="list the shipped experiments and exit")
    parser.add_argument("--summarize", default=None, metavar="LOG.jsonl",
                        help="print the summary of a log an earlier run wrote (nothing is sent)")
    parser.add_argument("--out", type=Path, default=Path("observations"), metavar="DIR",
                        help="directory for the JSONL log (default: observations/)")
    add_record_option(parser, "the research record (问题 … 下一次只验证)")
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the record (en)")
    parser.add_argument("--base-url", default=None, metavar="URL",
                        help=f"use this OpenAI-compatible base URL instead of the file's (also ${BASE_URL_ENV})")
    parser.add_argument("--model", default=None, help=f"use this model name instead of the file's (also ${MODEL_ENV})")
    parser.add_argument("--api-key-env", default=None, metavar="NAME",
                        help="read the API key from this environment variable (the NAME, never the key)")
    parser.add_argument("--stop-on-error", action="store_true", help="stop at the first failed request")
    parser.add_argument("--dry-run", action="store_true", help="validate and print the planned requests; send nothing")
    parser.add_argument("--at", action="append", metavar="NAME=SHA",
                        help="for an [app] experiment: install the app at NAME's commit SHA (the lock is not edited)")
    parser.add_argument("--app-version", default=None, metavar="VERSION",
                        help="for an [app] experiment: install this npm release of the app instead of the pinned "
                             "commit's (its code is then not looked up at a commit)")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.observe.experiment import load_experiment, shipped_names

    if args.list:
        names = shipped_names()
        if ctx.json:
            ctx.emit_json({"experiments": names})
        else:
            for name in names:
                ctx.out.print(name, markup=False)
        return 0
    if args.summarize:
        return _summarize(Path(args.summarize), ctx)
    if not args.experiment:
        raise AnalyzerError("name an experiment: analyze observe EXPERIMENT.toml (analyze observe --list shows the "
                            "shipped ones)", exit_code=2)
    if args.api_key_env is not None and not args.api_key_env.isidentifier():
        raise AnalyzerError("--api-key-env takes the NAME of an environment variable (e.g. DEEPSEEK_API_KEY), "
                            "never the key itself")
    exp = load_experiment(args.experiment).with_endpoint(
        base_url=args.base_url or os.environ.get(BASE_URL_ENV) or None,
        model=args.model or os.environ.get(MODEL_ENV) or None, api_key_env=args.api_key_env)
    if args.dry_run:
        return _dry_run(exp, ctx)
    # an app run's key is read by the recording proxy, which sends it upstream in the app's place
    api_key = _api_key(exp.endpoint.api_key_env) if exp.mode == "request" else None
    return _observe(exp, api_key, args, ctx)


def _summarize(path: Path, ctx: CliContext) -> int:
    from analyzer.api.observe import summarize_log
    from analyzer.observe.summary import summary_lines

    summary = summarize_log(path)
    if ctx.json:
        ctx.emit_json(summary)
    else:
        for line in summary_lines(summary):
            ctx.out.print(line, markup=False)
    return 0


def _api_key(name: str | None) -> str | None:
    if not name:
        return None
    value = os.environ.get(name, "")
    if not value:
        raise AnalyzerError(f"the experiment reads its API key from ${name}, which is not set; export {name}=… "
                            "(the key is never written anywhere) or drop api_key_env for a server without a key")
    return value


def _dry_run(exp: Experiment, ctx: CliContext) -> int:
    if exp.mode == "app":
        ctx.out.print(f"{exp.name}: app {exp.app.profile}, {len(exp.app.turns)} turns per series, series "
                      f"{', '.join(f'{s} ({v!r})' for s, v in exp.vary.series())}, factor {exp.vary.describe()}; "
                      "nothing run", markup=False)
        return 0
    from analyzer.observe.plan import plan

    planned = plan(exp)
    rows = [{"series": p.series, "index": p.index, "measured": p.measured, "value": p.value, "wait_s": p.wait_s,
             "parts": p.parts()} for p in planned]
    if ctx.json:
        ctx.emit_json({"experiment": exp.name, "factor": exp.vary.factor, "url": exp.endpoint.url,
                       "model": exp.endpoint.model, "requests": rows})
        return 0
    ctx.out.print(f"{exp.name}: {len(rows)} requests to {exp.endpoint.url} (model {exp.endpoint.model}); "
                  f"nothing sent", markup=False)
    for r in rows:
        digests = " ".join(f"{k} {v['sha256'][:10]} ({v['bytes']} B)" for k, v in r["parts"].items())
        ctx.out.print(f"  {r['series']:<9} {r['index'] if r['measured'] else 'w':>2} wait {r['wait_s']:g} s  "
                      f"value {r['value']!r}  {digests}", markup=False)
    return 0


def _observe(exp: Experiment, api_key: str | None, args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.api.observe import ObserveOptions, observe
    from analyzer.observe.jsonl import scrub
    from analyzer.observe.summary import summary_lines

    secrets = [api_key] if api_key else []
    to_file = args.record not in (None, "-")

    def say(line: str) -> None:
        ctx.err.print(line, markup=False)

    with _progress(ctx) as progress:
        options = ObserveOptions(args.out, api_key, args.stop_on_error, record=bool(args.record),
                                 record_file=Path(args.record) if to_file else None, lang=args.lang,
                                 on_row=progress, at=tuple(args.at or ()), version=args.app_version, say=say)
        done = observe(exp, options, ctx.session() if exp.mode == "app" else None)
    summary, result, path = done.summary, done.run, done.log
    if args.record:
        if record_file(args.record) is None:
            if ctx.json:
                summary["record"] = done.record
            else:
                ctx.out.print(done.record, markup=False)
        else:
            summary["record_file"] = args.record
    if ctx.json:
        ctx.emit_json(_scrubbed(summary, secrets))
    else:
        for line in summary_lines(summary):
            ctx.out.print(scrub(line, secrets), markup=False)
        if record_file(args.record):
            ctx.out.print(f"wrote {args.record}", markup=False)
    if result.interrupted:
        ctx.err.print(f"interrupted: {len(result.rows)} of {result.planned} requests finished and are in {path}",
                      markup=False)
    elif result.stopped_on_error:
        ctx.err.print(f"error: stopped at the first failed request ({len(result.rows)} of {result.planned} "
                      f"written to {path}); rerun without --stop-on-error to send the rest", markup=False)
    return done.exit_code


def _scrubbed(payload: Any, secrets: list[str]) -> Any:
    import json

    from analyzer.observe.jsonl import scrub

    return json.loads(scrub(json.dumps(payload, ensure_ascii=False), secrets))


class _NoProgress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _progress(ctx: CliContext) -> Any:
    """A progress bar on a terminal (stderr); nothing otherwise."""
    if not ctx.interactive or ctx.json:
        return _NoProgress()
    from contextlib import contextmanager

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    @contextmanager
    def bar() -> Any:
        with Progress(TextColumn("observe"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      TextColumn("{task.description}"), console=ctx.err, transient=True) as p:
            task = p.add_task("", total=None)

            def on_row(row: dict[str, Any], done: int, total: int) -> None:
                p.update(task, completed=done, total=total, description=f"{row['series']} {row['index']}")

            yield on_row

    return bar()
