"""`analyze native build|status`: compile the index and graph hot paths with mypyc (optional, cached)."""

from __future__ import annotations

import argparse

from analyzer.cli.context import CliContext

NAME = "native"
HELP = "compile the indexer and resolver with mypyc for a faster cold index (1–2 minutes, once per version)"
ORDER = 74
DESCRIPTION = (
    "The extractor and the resolver passes are compiled to C with mypyc and cached machine-wide "
    "($ANALYZER_NATIVE_DIR, default ~/.cache/analyzer/native), keyed by their sources: an edited .py file is "
    "never shadowed by a stale binary. Without a build, or with ANALYZER_NATIVE=0, everything runs as pure "
    "Python with the same results."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="native_action", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="compile and cache the modules (reuses a build for the same sources)")
    build.add_argument("--force", action="store_true", help="rebuild even if a build for these sources exists")
    sub.add_parser("status", help="whether this process would run compiled, from where, or why not "
                                  "(exit 1 when not)")
    from analyzer.cli import _global_options

    for p in sub.choices.values():
        _global_options(p, suppress=True)


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    if args.native_action == "build":
        return _build(ctx, force=args.force)
    return _status(ctx)


def _build(ctx: CliContext, *, force: bool) -> int:
    from analyzer.native.build import build_native

    result = build_native(force=force, say=lambda line: ctx.err.print(line, markup=False))
    if ctx.json:
        ctx.emit_json({"directory": str(result.directory), "reused": result.reused, **result.manifest})
        return 0
    how = "cached build reused" if result.reused else f"built in {result.manifest.get('build_seconds', '?')} s"
    ctx.out.print(f"compiled modules: {how} (mypy {result.manifest.get('mypy', '?')})", markup=False)
    ctx.out.print(f"directory: {result.directory}", markup=False)
    return 0


def _status(ctx: CliContext) -> int:
    from analyzer.native.compiled import COMPILED, native_root, source_key
    from analyzer.native.loader import native_state

    state = native_state()
    info = {"loaded": state.loaded, "reason": state.reason, "root": str(native_root()), "key": source_key(),
            "directory": str(state.directory) if state.directory else None, "modules": list(COMPILED),
            "built_at": state.manifest.get("built_at"), "mypy": state.manifest.get("mypy")}
    if ctx.json:
        ctx.emit_json(info)
    else:
        ctx.out.print(f"compiled: {'yes' if state.loaded else 'no'} — {state.reason}", markup=False)
        ctx.out.print(f"sources key: {info['key']} ({len(COMPILED)} modules); builds live in {info['root']}",
                      markup=False)
    return 0 if state.loaded else 1
