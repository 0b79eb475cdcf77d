"""Import the compiled build of `COMPILED` in place of the .py files, when one matches the sources.

All or nothing, decided once per process at the first import of a compiled module: the build must be
for exactly these sources (`source_key`), complete (every file of its manifest at its recorded size, the
per-module stubs also at their recorded sha256), and its shared library must load. Otherwise every
module comes from its .py file as usual — silently when there is simply no build (`analyze native build`
makes one), with one warning line when a build is there but damaged. Mixing is never allowed: compiled
code reaches into its siblings' native classes, so a sibling already imported from source turns the
build off for the whole process.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from analyzer.native.compiled import COMPILED, MANIFEST, NATIVE_ENV, build_dir, source_key


class NativeState:
    """What the loader decided: `loaded` and from where, or why not (a plain class: dataclasses would
    cost every start-up their import)."""

    def __init__(self, *, loaded: bool = False, reason: str, directory: Path | None = None,
                 files: dict[str, Path] | None = None, manifest: dict[str, Any] | None = None) -> None:
        self.loaded = loaded
        self.reason = reason
        self.directory = directory
        self.files = files or {}  # module (and the shared library) → binary
        self.manifest = manifest or {}


def _warn(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()


class NativeFinder:
    """First on `sys.meta_path`; answers only for the compiled modules (a duck-typed meta path finder:
    `importlib.abc` would cost every start-up 10 ms of imports)."""

    def __init__(self) -> None:
        self.state: NativeState | None = None  # None until the first compiled module is asked for

    def find_spec(self, fullname: str, path: object = None, target: ModuleType | None = None) -> Any:
        if fullname not in _WANTED:
            return None
        if self.state is None:
            self.state = decide()
        binary = self.state.files.get(fullname) if self.state.loaded else None
        if binary is None:
            return None
        import importlib.machinery
        import importlib.util

        loader = importlib.machinery.ExtensionFileLoader(fullname, str(binary))
        return importlib.util.spec_from_file_location(fullname, binary, loader=loader)


_WANTED = frozenset(COMPILED)


def decide(root: Path | None = None) -> NativeState:
    """Use the build for the current sources, or say why not (and warn when a build is there but broken)."""
    if os.environ.get(NATIVE_ENV, "") == "0":
        return NativeState(reason=f"turned off by {NATIVE_ENV}=0")
    early = sorted(m for m in COMPILED if m in sys.modules)
    if early:
        return NativeState(reason=f"{early[0]} was imported from source before the loader ran")
    try:
        key = source_key()
    except OSError as exc:
        return NativeState(reason=f"sources unreadable ({exc})")
    import json

    where = build_dir(key, root)
    manifest_path = where / MANIFEST
    if not manifest_path.exists():
        return NativeState(reason=f"not built for these sources (key {key}); `analyze native build` makes it")
    try:
        return _load(where, key, json.loads(manifest_path.read_text()))
    except (OSError, ValueError, KeyError, TypeError, ImportError) as exc:
        why = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        _warn(f"the compiled build in {where} is damaged ({why}); running pure Python — "
              f"`analyze native build --force` rebuilds it")
        return NativeState(reason=f"damaged build: {why}", directory=where)


def _load(where: Path, key: str, manifest: dict[str, Any]) -> NativeState:
    import importlib.machinery
    import importlib.util

    files = check_build(where, key, manifest)
    group = manifest["group"]
    # the shared library first: a truncated or foreign binary fails here, before any module is bound to it
    spec = importlib.util.spec_from_file_location(
        group, files[group], loader=importlib.machinery.ExtensionFileLoader(group, str(files[group])))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[group] = module
    return NativeState(loaded=True, reason=f"loaded from {where}", directory=where, files=files, manifest=manifest)


def check_build(where: Path, key: str, manifest: dict[str, Any]) -> dict[str, Path]:
    """module (and the shared library) → binary, if the build in `where` is whole and for `key`; else
    ValueError/KeyError/TypeError/OSError saying what is wrong (nothing is loaded)."""
    if manifest.get("key") != key or sorted(manifest["modules"]) != sorted(COMPILED):
        raise ValueError("its manifest is for other sources")
    import hashlib

    files: dict[str, Path] = {}
    for name, entry in [*manifest["modules"].items(), (manifest["group"], manifest["group_file"])]:
        binary = where / entry["path"]
        if binary.stat().st_size != entry["size"]:
            raise ValueError(f"{entry['path']} is {binary.stat().st_size} bytes, built as {entry['size']}")
        # the per-module stubs are small: checked in full, since one fails only when its module is imported,
        # too late to fall back; the shared library (5 MB) is checked by loading it, below
        if name != manifest["group"] and hashlib.sha256(binary.read_bytes()).hexdigest() != entry["sha256"]:
            raise ValueError(f"{entry['path']} differs from the file that was built")
        files[name] = binary
    return files


def install() -> NativeFinder:
    """Put the finder first on `sys.meta_path` (once); cheap: nothing is read until a compiled module is."""
    for finder in sys.meta_path:
        if isinstance(finder, NativeFinder):
            return finder
    finder = NativeFinder()
    sys.meta_path.insert(0, finder)
    return finder


def native_state() -> NativeState:
    """The process's decision (made now if no compiled module was imported yet)."""
    finder = install()
    if finder.state is None:
        finder.state = decide()
    return finder.state


__all__ = ["NativeFinder", "NativeState", "check_build", "decide", "install", "native_state"]
