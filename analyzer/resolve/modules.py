"""Module resolution across the locked repos: relative paths, tsconfig `paths`, workspace packages
(with `exports` subpath patterns mapped from built files back to source) and cross-repo packages.

Every answer carries `how`, a short human-readable reason that ends up in edge evidence.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from analyzer.index.configs import PackageManifest, RepoConfigs, TsConfig

SOURCE_EXTS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
BUILT_TO_SOURCE_EXT = {".js": (".ts", ".tsx", ".js", ".jsx"), ".mjs": (".mts", ".mjs", ".ts"),
                       ".cjs": (".cts", ".cjs", ".ts"), ".jsx": (".tsx", ".jsx")}
BUILD_DIRS = ("dist", "lib", "build", "out", "esm", "cjs", "types")
CONDITION_ORDER = ("source", "import", "module", "default", "node", "require", "types")


class ModuleRef(NamedTuple):
    """A module of a locked repo (a named tuple: a memo key everywhere in resolution, hashed in C)."""

    repo: str
    path: str


@dataclass(frozen=True)
class Resolution:
    """Where a specifier leads: an indexed module, an external package, or nowhere (with a reason)."""

    specifier: str
    module: ModuleRef | None = None
    external: str | None = None  # npm package name for third-party imports
    how: str = ""

    @property
    def resolved(self) -> bool:
        return self.module is not None


@dataclass
class RepoModules:
    """What module resolution needs to know about one repo."""

    name: str
    files: set[str]
    configs: RepoConfigs
    aliases: tuple[str, ...] = ()
    packages: dict[str, PackageManifest] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for pkg in self.configs.packages:
            # the first manifest wins for duplicate names (fixtures, examples); the shortest folder is the real one
            current = self.packages.get(pkg.name)
            if current is None or len(pkg.folder) < len(current.folder):
                self.packages[pkg.name] = pkg


class ModuleResolver:
    """Resolve import specifiers for files of any locked repo."""

    def __init__(self, repos: Iterable[RepoModules]) -> None:
        self.repos = {r.name: r for r in repos}
        self._cache: dict[tuple[str, str, str], Resolution] = {}
        # (repo, folder) → its tsconfigs with `paths`, nearest first: the same for every file of a folder
        self._nearest: dict[tuple[str, str], list[TsConfig]] = {}

    def resolve(self, repo: str, from_path: str, specifier: str) -> Resolution:
        key = (repo, posixpath.dirname(from_path), specifier)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._resolve(repo, from_path, specifier)
            self._cache[key] = hit
        return hit

    # --- strategies -----------------------------------------------------------------------------
    def _resolve(self, repo: str, from_path: str, spec: str) -> Resolution:
        rm = self.repos[repo]
        if spec.startswith((".", "/")):
            base = posixpath.normpath(posixpath.join(posixpath.dirname(from_path), spec))
            found = self._file_candidates(rm, base)
            if found:
                return Resolution(spec, ModuleRef(repo, found), how=f"relative import → {found}")
            return Resolution(spec, how=f"relative import {spec!r} matches no indexed file")
        via_paths = self._tsconfig_paths(rm, from_path, spec)
        if via_paths:
            return via_paths
        name, sub = split_package(spec)
        own = rm.packages.get(name)
        if own is not None:
            return self._package_entry(rm, own, sub, spec, "workspace package")
        for other in self.repos.values():
            if other.name == repo:
                continue
            pkg = other.packages.get(name)
            how = f"package of locked repo {other.name}"
            if pkg is None:
                pkg = _alias_target(other, name)
                how = f"alias {name} of locked repo {other.name}"
            if pkg is not None:
                return self._package_entry(other, pkg, sub, spec, how)
        return Resolution(spec, external=name, how="third-party package")

    def _tsconfig_paths(self, rm: RepoModules, from_path: str, spec: str) -> Resolution | None:
        key = (rm.name, posixpath.dirname(from_path))
        nearest = self._nearest.get(key)
        if nearest is None:
            nearest = self._nearest[key] = _nearest_first(rm.configs.tsconfigs, from_path)
        for cfg in nearest:
            for pattern, targets in cfg.paths.items():
                star = _match_pattern(pattern, spec)
                if star is None:
                    continue
                base = cfg.base_url if cfg.base_url is not None else cfg.folder
                for target in targets:
                    cand = posixpath.normpath(posixpath.join(base or ".", target.replace("*", star)))
                    found = self._file_candidates(rm, cand) or self._source_for_built(rm, cand)
                    if found:
                        return Resolution(spec, ModuleRef(rm.name, found),
                                          how=f"tsconfig paths {pattern!r} in {cfg.path} → {found}")
        return None

    def _package_entry(self, rm: RepoModules, pkg: PackageManifest, sub: str, spec: str,
                       how: str) -> Resolution:
        targets: list[str] = []
        rule = ""
        if pkg.exports is not None:
            hit = _exports_target(pkg.exports, sub)
            if hit is not None:
                rule, targets = hit
        if not targets:
            if sub == ".":
                targets = [t for t in (pkg.types, pkg.module, pkg.main, "index") if t]
                rule = "main/types"
            else:
                targets = [sub]
                rule = "package subpath"
        for target in targets:
            cand = posixpath.normpath(posixpath.join(pkg.folder or ".", target))
            found = self._file_candidates(rm, cand) or self._source_for_built(rm, cand)
            if found:
                exp = f" exports {rule!r}" if pkg.exports is not None and rule else f" {rule}"
                return Resolution(spec, ModuleRef(rm.name, found),
                                  how=f"{how} {pkg.name} ({pkg.path}{exp}) → {found}")
        return Resolution(spec, how=f"{how} {pkg.name}: no source file for {sub!r} (targets {targets})")

    def _file_candidates(self, rm: RepoModules, base: str) -> str | None:
        files = rm.files
        base = base.lstrip("./") if base.startswith("./") else base
        root, ext = posixpath.splitext(base)
        if ext in SOURCE_EXTS and not base.endswith(".d.ts") and base in files:
            return base
        if ext in BUILT_TO_SOURCE_EXT:
            for alt in BUILT_TO_SOURCE_EXT[ext]:
                if root + alt in files:
                    return root + alt
        for alt in SOURCE_EXTS:
            if base + alt in files:
                return base + alt
        for alt in SOURCE_EXTS:
            if f"{base}/index{alt}" in files:
                return f"{base}/index{alt}"
        for decl in (".d.ts", ".d.mts"):
            stem = base[: -len(".d.ts")] if base.endswith(".d.ts") else root if ext in BUILT_TO_SOURCE_EXT else base
            if stem + decl in files:
                return stem + decl
        return None

    def _source_for_built(self, rm: RepoModules, path: str) -> str | None:
        """`pkg/dist/api/x.js` or `pkg/lib/types/index.d.ts` → `pkg/src/api/x.ts` when that exists."""
        parts = path.split("/")
        stem = path[: -len(".d.ts")] + ".js" if path.endswith(".d.ts") else path
        parts = stem.split("/")
        for i, part in enumerate(parts):
            if part not in BUILD_DIRS:
                continue
            rest = parts[i + 1:]
            while rest and rest[0] in BUILD_DIRS:  # lib/types/…, dist/esm/…
                rest = rest[1:]
            for replacement in (["src"], []):
                cand = "/".join(parts[:i] + replacement + rest)
                found = self._file_candidates(rm, cand)
                if found and not found.endswith(".d.ts"):
                    return found
        return None


def split_package(spec: str) -> tuple[str, str]:
    """`@a/b/c/d` → (`@a/b`, `./c/d`); `lodash/fp` → (`lodash`, `./fp`); bare names → (name, `.`)."""
    parts = spec.split("/")
    n = 2 if spec.startswith("@") and len(parts) > 1 else 1
    name = "/".join(parts[:n])
    rest = "/".join(parts[n:])
    return name, ("./" + rest) if rest else "."


def _alias_target(rm: RepoModules, name: str) -> PackageManifest | None:
    """An alias is an old package name (`@old/pkg`) or scope (`@old`) for packages of this repo."""
    scope, _, bare = name.partition("/")
    for alias in rm.aliases:
        if alias == name or alias == scope:
            wanted_bare = bare if alias == scope else alias.rpartition("/")[2]
            for pkg_name, pkg in rm.packages.items():
                if pkg_name.rpartition("/")[2] == wanted_bare:
                    return pkg
    return None


def _match_pattern(pattern: str, spec: str) -> str | None:
    """tsconfig/exports pattern with at most one `*`; returns what `*` matched ('' for exact)."""
    if "*" not in pattern:
        return "" if pattern == spec else None
    prefix, _, suffix = pattern.partition("*")
    if spec.startswith(prefix) and spec.endswith(suffix) and len(spec) >= len(prefix) + len(suffix):
        return spec[len(prefix): len(spec) - len(suffix)]
    return None


def _exports_target(exports: Any, sub: str) -> tuple[str, list[str]] | None:
    """Apply the `exports` field: exact subpaths, then `*` patterns (longest prefix first)."""
    if isinstance(exports, (str, list)) or (isinstance(exports, dict) and not any(k.startswith(".") for k in exports)):
        return (".", _conditions(exports)) if sub == "." else None
    if not isinstance(exports, dict):
        return None
    if sub in exports:
        return sub, _conditions(exports[sub])
    best: tuple[int, str, str] | None = None
    for key in exports:
        star = _match_pattern(key, sub)
        if star is not None and "*" in key and (best is None or len(key) > best[0]):
            best = (len(key), key, star)
    if best is None:
        return None
    _, key, star = best
    return key, [t.replace("*", star) for t in _conditions(exports[key])]


def _conditions(value: Any) -> list[str]:
    """Targets of an exports entry, in preference order (source-ish conditions first)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _conditions(v)]
    if isinstance(value, dict):
        ordered = [k for k in CONDITION_ORDER if k in value] + [k for k in value if k not in CONDITION_ORDER]
        return [t for k in ordered for t in _conditions(value[k])]
    return []


def _nearest_first(configs: list[TsConfig], from_path: str) -> list[TsConfig]:
    """tsconfigs whose folder contains the file, nearest first, then the rest (extends chains)."""
    with_paths = [c for c in configs if c.paths]
    inside = [c for c in with_paths if not c.folder or from_path.startswith(c.folder + "/")]
    inside.sort(key=lambda c: -len(c.folder))
    rest = [c for c in with_paths if c not in inside and "/" not in c.path]
    return inside + rest
