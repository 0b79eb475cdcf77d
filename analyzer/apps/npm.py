"""npm packages installed into the analyzer cache: one directory per package and version, complete or absent.

Why this shape (like the engine build): an install takes minutes on a shared two-core machine, so it is done
once per version under `<cache>/apps/`, behind a file lock (a second process waits, then reuses it), into a
temporary sibling that is renamed into place in one step, so a reader sees no install or a whole one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from analyzer.errors import AnalyzerError
from analyzer.procs import stream_to_log

Say = Callable[[str], None]
HEARTBEAT_S = 30.0


@dataclass(frozen=True)
class NpmInstall:
    package: str
    version: str
    prefix: Path          # the npm prefix: node_modules/<package>/ is inside
    reused: bool

    @property
    def package_dir(self) -> Path:
        return self.prefix / "node_modules" / self.package

    @property
    def bin_dir(self) -> Path:
        return self.prefix / "node_modules" / ".bin"


def apps_dir(cache_dir: Path) -> Path:
    return Path(cache_dir) / "apps"


def _slug(package: str, version: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "+", package.lstrip("@")) + "-" + version


def npm_install(cache_dir: Path, package: str, version: str, *, say: Say = print,
                path_dirs: Sequence[Path] = ()) -> NpmInstall:
    """`package@version` under `<cache>/apps/npm/`, installed with npm unless already there.

    `path_dirs` go first on PATH for npm (the Node the package needs), so engine checks see that Node.
    """
    root = apps_dir(cache_dir) / "npm"
    root.mkdir(parents=True, exist_ok=True)
    slug = _slug(package, version)
    target = root / slug
    marker = target / "install.json"
    with FileLock(str(root / f".{slug}.lock")):
        if marker.is_file():
            return NpmInstall(package, version, target, True)
        npm = shutil.which("npm")
        if npm is None:
            raise AnalyzerError("npm is not installed; install it (e.g. `apt-get install npm`) and run "
                                "`analyze app install` again")
        tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".install-{slug}-"))
        log = apps_dir(cache_dir) / "logs" / f"npm-{slug}.log"
        try:
            tmp.chmod(0o755)
            say(f"app: npm install {package}@{version} (log {log})")
            started = time.monotonic()
            run_logged([npm, "install", "--prefix", str(tmp), "--no-save", "--no-audit", "--no-fund",
                        "--ignore-scripts", "--loglevel", "warn", f"{package}@{version}"], log,
                       what=f"npm install {package}@{version}", say=say, env=with_path(path_dirs))
            if not (tmp / "node_modules" / package / "package.json").is_file():
                raise AnalyzerError(f"npm finished but {package} is not in {tmp}; see {log}")
            info = {"package": package, "version": version, "seconds": round(time.monotonic() - started, 1),
                    "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            (tmp / "install.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
            os.replace(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return NpmInstall(package, version, target, False)


def published_versions(package: str) -> list[str]:
    """The versions the registry lists for `package` (one look-up; empty when npm cannot say)."""
    npm = shutil.which("npm")
    if npm is None:
        return []
    try:
        proc = subprocess.run([npm, "view", package, "versions", "--json"], capture_output=True, text=True,
                              timeout=120)
        data = json.loads(proc.stdout or "[]")
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return []
    return [str(v) for v in (data if isinstance(data, list) else [data])]


def with_path(dirs: Sequence[Path], env: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment with `dirs` first on PATH."""
    out = dict(os.environ if env is None else env)
    out["PATH"] = os.pathsep.join([*(str(d) for d in dirs), out.get("PATH", "")])
    return out


def run_logged(cmd: list[str], log: Path, *, what: str, say: Say, env: dict[str, str] | None = None,
               cwd: Path | None = None) -> None:
    """Run `cmd`, its output appended to `log`; a progress line every 30 s; one error naming the step on failure."""
    log.parent.mkdir(parents=True, exist_ok=True)
    last = [""]
    started = time.monotonic()
    done = threading.Event()

    def heartbeat() -> None:
        while not done.wait(HEARTBEAT_S):
            say(f"app: {what}: {time.monotonic() - started:.0f} s" + (f" — {last[0][:100]}" if last[0] else ""))

    def remember(line: str) -> None:
        if line.strip():
            last[0] = line.strip()

    threading.Thread(target=heartbeat, daemon=True).start()
    try:
        code = stream_to_log(cmd, log, on_line=remember, cwd=cwd, env=env)
    finally:
        done.set()
    if code != 0:
        raise AnalyzerError(f"{what} failed (exit {code}): {_last_error(log) or last[0] or 'no output'}; "
                            f"see {log}")


def _last_error(log: Path) -> str:
    """The last line of the log that looks like an error, for the one-line message."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    for line in reversed(lines[-200:]):
        if re.search(r"\b(ERR|error|Error|ENOENT|ETARGET|failed)\b", line):
            return line.strip()[:300]
    return ""
