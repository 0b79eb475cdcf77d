"""The Pi model registry at a commit, read through the evaluator (which file and constant: `[registry]` of the
usage route file, `analyzer/rules/usage/routes.toml`).

Only the one entry asked for is evaluated (`MODELS[provider][id]`), so the registry's size and any
runtime-built parts of other providers do not matter. When the entry is not there, or is built from a file
that is not in the tree, the reason is returned and the caller falls back to the scenario's own prices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.usage.evaluator import Interpreter
from analyzer.usage.locate import FunctionLocator, unwrap
from analyzer.usage.routes import RegistrySpec, load_routes
from analyzer.usage.values import JSObject, Site


@dataclass(frozen=True)
class RegistryEntry:
    """A model found in the registry (`model` is the JS object), or why it was not (`reason`)."""

    model: JSObject | None
    site: Site | None
    reason: str = ""


def lookup_model(interp: Interpreter, locator: FunctionLocator, provider: str, model_id: str,
                 spec: RegistrySpec | None = None) -> RegistryEntry:
    spec = spec or load_routes().registry
    path, name = spec.path, spec.table
    try:
        mod = locator.module(path)
    except AnalyzerError:
        return RegistryEntry(None, None, f"{path} is not in the tree")
    decl = mod.declarations.get(name)
    if decl is None or decl.type != "variable_declarator":
        return RegistryEntry(None, None, f"{path} declares no {name} constant")
    table = unwrap(decl.child_by_field_name("value"))
    if table is None or table.type != "object":
        return RegistryEntry(None, None, f"{name} is not an object literal")
    provider_node = _pair_value(mod, table, provider)
    if provider_node is None:
        return RegistryEntry(None, None, f"provider {provider!r} is not in {name}")
    scope = interp.module_scope(mod)
    try:
        if provider_node.type == "object":
            entry_node = _pair_value(mod, provider_node, model_id)
            if entry_node is None:
                return RegistryEntry(None, None, f"model {model_id!r} is not in {name}[{provider!r}]")
            value = interp.eval(entry_node, scope, mod)
            site = mod.site(entry_node)
        else:
            models = interp.eval(provider_node, scope, mod)
            value = models.get(model_id) if isinstance(models, JSObject) else None
            site = mod.site(provider_node)
            if not isinstance(value, JSObject):
                return RegistryEntry(None, None, f"model {model_id!r} is not in {name}[{provider!r}]")
    except AnalyzerError as exc:
        return RegistryEntry(None, None, f"{name}[{provider!r}] cannot be read at this commit: {exc}")
    if not isinstance(value, JSObject) or not isinstance(value.props.get("cost"), JSObject):
        return RegistryEntry(None, None, f"{name}[{provider!r}][{model_id!r}] has no cost table")
    return RegistryEntry(value, site)


def _pair_value(mod: Any, obj: Any, key: str) -> Any:
    for p in obj.named_children:
        if p.type == "pair" and mod.text(p.child_by_field_name("key")).strip("'\"") == key:
            return unwrap(p.child_by_field_name("value"))
    return None
