"""Usage reconciliation: replay the pinned upstream usage code (Pi → dsh) on provider usage scenarios.

Public API:
- `scenarios.load_scenario(name_or_path) -> Scenario`, `scenarios.shipped_names()`.
- `indexed.IndexedFunctionLocator(repo, commit, repo_name, cache_dir, trees=None)`: the `FunctionLocator`
  (`find(qualname, path_hint=None, search_under=())`, `module(path)`, `resolve_import(from_path, spec)`) —
  declarations found through the per-file index, imports through the graph's module resolver, syntax trees
  from the index's per-blob tree service; `locate.MemoryLocator(files)` for in-memory fixtures.
  `repos.open_git_dir(path)` opens clones and config-less bare snapshots alike.
- `ledger.reconcile(scenario, {"pi": locator, "dsh": locator}) -> dict`: the JSON-ready ledger (per request:
  provider fields, Pi `Usage`, dsh `TokenUsage` with the upstream line of each value, dropped fields, checks;
  then meter buckets, cache-hit %, session checks, `ok`). The hops and routes it runs are data:
  `analyzer/rules/usage/routes.toml`, read by `routes.load_routes()`.
- `delta.ledger_deltas(old, new)`: changed numbers/invariants between two ledgers (for re-checks).
- `ledger_for_pins(ctx, pins)`: the default scenario's ledger replayed at a pin set (`analyze recheck`).
- `evaluator.Interpreter(locator)`: `function_value(located)`, `call(fn, args)`; values in `values`
  (`UNDEFINED`, `JSObject`, `from_python`, `to_python`, `json_stringify`).
- Errors: `errors.UnsupportedSyntax`, `UnresolvedName`, `JSThrow`, `LocateError` (all `AnalyzerError`s).
"""

from __future__ import annotations

from analyzer.lazyexports import lazy_exports

# re-exported for analyzer.recheck, loaded on first use: the command line reads `routes` (the `--route`
# choices) when it builds its parser, and that must not import the evaluator or GitPython
_EXPORTS = {"ledger_for_pins": "pins"}
__all__ = list(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())
