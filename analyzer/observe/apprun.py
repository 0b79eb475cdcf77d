"""`analyze observe APP-EXPERIMENT`: install the app at its pin, run the experiment through the proxy, print it all."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from analyzer.errors import AnalyzerError
from analyzer.observe.appexperiment import AppExperiment

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def observe_app(exp: AppExperiment, args: Any, ctx: Any) -> int:
    from analyzer.cli.commands.app import default_base_url, install_app
    from analyzer.observe.apprunner import run_app_experiment
    from analyzer.observe.appsummary import app_summary, app_summary_lines

    if getattr(args, "dry_run", False):
        ctx.out.print(f"{exp.name}: app {exp.profile}, {len(exp.turns)} turns per series, series "
                      f"{', '.join(f'{s} ({v!r})' for s, v in exp.vary.series())}, factor {exp.vary.describe()}; "
                      "nothing run", markup=False)
        return 0
    upstream = exp.base_url or default_base_url(ctx)
    host = urlparse(upstream).hostname or ""
    engine_url = upstream.rstrip("/").removesuffix("/v1") if host in LOOPBACK else None

    def say(line: str) -> None:
        ctx.err.print(line, markup=False)

    app = install_app(ctx, exp.profile, getattr(args, "at", None))
    result = run_app_experiment(exp, app, upstream=upstream, out_dir=Path(args.out), engine_url=engine_url, say=say)
    summary = app_summary(exp, app, result)
    if args.record:
        from analyzer.atomic import write_text_atomic
        from analyzer.observe.apprecord import build_app_record

        text = build_app_record(exp, app, summary, lang=args.lang).to_markdown(args.lang)
        if args.record == "-":
            ctx.out.print(text, markup=False)
        else:
            try:
                write_text_atomic(args.record, text)
            except OSError as exc:
                raise AnalyzerError(f"cannot write the record {args.record} ({exc.strerror}); the observations are "
                                    f"in {result.log}; choose a writable path") from None
    if ctx.json:
        ctx.emit_json(summary)
    else:
        for line in app_summary_lines(summary):
            ctx.out.print(line, markup=False)
        if args.record and args.record != "-":
            ctx.out.print(f"record: {args.record}", markup=False)
    return 1 if result.failed else 0
