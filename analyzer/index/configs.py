"""Package manifests and tsconfig files of a repo at a commit: the inputs of module resolution.

Read straight from git objects (no work tree), like the sources, so any commit can be analysed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import git

SKIP_DIRS = {"node_modules", ".git"}


@dataclass
class PackageManifest:
    """One `package.json` that names a package."""

    name: str
    folder: str  # repo-relative folder ("" for the root)
    path: str  # the package.json path
    exports: Any = None
    main: str | None = None
    types: str | None = None
    module: str | None = None


@dataclass
class TsConfig:
    path: str
    folder: str
    base_url: str | None = None  # repo-relative folder
    paths: dict[str, list[str]] = field(default_factory=dict)
    extends: str | None = None


@dataclass
class RepoConfigs:
    packages: list[PackageManifest] = field(default_factory=list)
    tsconfigs: list[TsConfig] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # unreadable manifests (counted, not fatal)


def read_configs(repo: git.Repo, commit: str) -> RepoConfigs:
    """Every package.json and tsconfig*.json outside node_modules at `commit`."""
    listing = repo.git.ls_tree("-r", "-z", "--name-only", commit).split("\0")
    wanted = [p for p in listing if p and _is_config(p)]
    texts = _read_many(repo, commit, wanted)
    out = RepoConfigs()
    for path in wanted:
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        data = _loads_jsonc(texts.get(path, ""))
        if data is None:
            out.problems.append(f"{path}: not valid JSON; ignored for module resolution")
            continue
        if path.endswith("package.json"):
            name = data.get("name")
            if isinstance(name, str) and name:
                out.packages.append(PackageManifest(
                    name=name, folder=folder, path=path, exports=data.get("exports"),
                    main=_str(data.get("main")), types=_str(data.get("types") or data.get("typings")),
                    module=_str(data.get("module"))))
        else:
            opts = data.get("compilerOptions") or {}
            base = opts.get("baseUrl")
            paths = opts.get("paths") or {}
            out.tsconfigs.append(TsConfig(
                path=path, folder=folder,
                base_url=_join(folder, base) if isinstance(base, str) else None,
                paths={k: [v for v in vs if isinstance(v, str)] for k, vs in paths.items() if isinstance(vs, list)},
                extends=_str(data.get("extends"))))
    return out


def _is_config(path: str) -> bool:
    parts = path.split("/")
    if any(p in SKIP_DIRS for p in parts[:-1]):
        return False
    name = parts[-1]
    return name == "package.json" or (name.startswith("tsconfig") and name.endswith(".json"))


def _read_many(repo: git.Repo, commit: str, paths: list[str]) -> dict[str, str]:
    if not paths:
        return {}
    request = "".join(f"{commit}:{p}\n" for p in paths).encode()
    raw = _cat_file_batch(repo, request)
    out: dict[str, str] = {}
    pos = 0
    for p in paths:
        header_end = raw.index(b"\n", pos)
        header = raw[pos:header_end].split()
        pos = header_end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        out[p] = raw[pos:pos + size].decode("utf-8", errors="replace")
        pos += size + 1
    return out


def _cat_file_batch(repo: git.Repo, request: bytes) -> bytes:
    import subprocess

    proc = subprocess.run(["git", "--git-dir", str(repo.git_dir), "cat-file", "--batch"], input=request,
                          capture_output=True, check=True)
    return proc.stdout


_COMMENT_RE = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA_RE = re.compile(r",(\s*[}\]])")


def _loads_jsonc(text: str) -> dict[str, Any] | None:
    """tsconfig files allow comments and trailing commas; package.json does not, but this is harmless."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        stripped = _COMMENT_RE.sub(lambda m: m.group(1) or "", text)
        try:
            data = json.loads(_TRAILING_COMMA_RE.sub(r"\1", stripped))
        except json.JSONDecodeError:
            return None
    return data if isinstance(data, dict) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _join(folder: str, rel: str) -> str:
    parts = [p for p in (folder + "/" + rel).split("/") if p and p != "."]
    out: list[str] = []
    for p in parts:
        if p == "..":
            if out:
                out.pop()
        else:
            out.append(p)
    return "/".join(out)
