"""Package exports loaded on first use (PEP 562), so importing one light submodule of a package does not
import what its siblings need (GitPython, the usage evaluator)."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, exports: dict[str, str], namespace: MutableMapping[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__`: `name` is imported from `package.<exports[name]>` when first asked for and then
    kept in the package's `namespace`."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{exports[name]}"), name)
        namespace[name] = value
        return value

    return __getattr__
