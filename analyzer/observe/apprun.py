"""`analyze observe APP-EXPERIMENT`: install the app at its pin, run the experiment through the proxy, print it all."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from analyzer.errors import AnalyzerError
from analyzer.observe.appexperiment import AppExperiment

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def observe_app(exp: AppExperiment, args: Any, ctx: Any) -> int:
    from analyzer.apps.setup import default_base_url, install_app
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

    app = install_app(ctx, exp.profile, getattr(args, "at", None), say=say)
    lookup, note = app_lookup(ctx, app)
    result = run_app_experiment(exp, app, upstream=upstream, out_dir=Path(args.out), engine_url=engine_url, say=say,
                                lookup=lookup)
    result.lookup_note = note
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


def app_lookup(ctx: Any, app: Any) -> tuple[Any, str]:
    """A literal lookup over the app's own repo at the commit it was installed from (None when not indexable)."""
    from analyzer.graph.build import is_test_path
    from analyzer.index.build import index_repo
    from analyzer.index.cache import FactsCache
    from analyzer.lock import RepoPin
    from analyzer.prefix.literals import IndexLiterals
    from analyzer.sources.workspace import open_repo

    if not app.commit:
        return None, "no commit behind this install (--version): the divergence is not traced to code"
    try:
        pin = ctx.lock.get(app.profile.repo)
        repo = open_repo(ctx, RepoPin(pin.name, pin.url, app.commit, None, pin.aliases), fetch=False)
        with FactsCache(ctx.cache_dir) as cache:
            index = index_repo(repo, app.commit, repo_name=pin.name, cache=cache)
    except AnalyzerError as exc:
        return None, f"the divergence is not traced to code ({exc})"
    literals = IndexLiterals([index])

    def outside_tests(needle: str) -> list[Any]:
        # a test that repeats the app's prompt text is not what wrote the request
        return [site for site in literals(needle) if not is_test_path(site.path)]

    return outside_tests, f"literals looked up in {index.name} @ {index.commit[:12]} (test files left out)"
