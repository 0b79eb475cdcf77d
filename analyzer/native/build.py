"""Build the compiled modules with mypyc into the native cache, once per source version.

mypyc type-checks the `COMPILED` modules, translates them to C and gcc compiles them; that takes one to
two minutes on 2 cores, so the result is cached by `source_key` and reused until a compiled source
changes. The compiler runs in a child process (setuptools exits and logs as it likes) with its
output in a log file; the finished build appears in one rename, so a reader never sees half of one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from analyzer.errors import AnalyzerError
from analyzer.native.compiled import (
    COMPILED,
    MANIFEST,
    NATIVE_ENV,
    build_dir,
    native_root,
    package_parent,
    source_file,
    source_key,
)

OPT_LEVEL = "2"  # -O3 measured no faster here and compiles longer


@dataclass
class NativeBuild:
    directory: Path
    reused: bool
    manifest: dict


def group_name(key: str) -> str:
    """The shared library's module name: one per build, so two builds never claim one name."""
    return f"analyzer_native_{key}"


def build_native(*, force: bool = False, root: Path | None = None,
                 say: Callable[[str], None] = lambda line: None) -> NativeBuild:
    """The build for the current sources: the cached one, or a new one (`force`: always new)."""
    from analyzer.cachelock import cache_writer

    root = root or native_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AnalyzerError(f"cannot create the native build dir {root} ({exc.strerror}); "
                            "set ANALYZER_NATIVE_DIR to a writable directory") from None
    key = source_key()
    dest = build_dir(key, root)
    with cache_writer(root, notify=say):  # one builder per native dir; a second one waits, says so once
        if not force and (dest / MANIFEST).exists():
            from analyzer.native.loader import check_build

            try:
                manifest = json.loads((dest / MANIFEST).read_text())
                check_build(dest, key, manifest)
                return NativeBuild(dest, True, manifest)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                say(f"the build in {dest} is damaged ({type(exc).__name__}: {exc}); rebuilding")
        return _build(key, root, dest, say)


def _build(key: str, root: Path, dest: Path, say: Callable[[str], None]) -> NativeBuild:
    try:
        import mypyc  # noqa: F401  (only to say clearly what is missing)
    except ImportError:
        raise AnalyzerError("compiling needs mypyc, which comes with mypy: pip install 'mypy>=1.10'") from None
    if shutil.which(os.environ.get("CC", "gcc")) is None and shutil.which("cc") is None:
        raise AnalyzerError("compiling needs a C compiler (gcc or cc) on PATH; install one, e.g. apt-get install gcc")
    work = root / f".work-{key}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    (work / "out").mkdir(parents=True)
    log_path = work / "build.log"
    started = time.monotonic()
    say(f"compiling {len(COMPILED)} modules with mypyc into {dest} (1–2 minutes on 2 cores)…")
    env = {**os.environ, "MYPY_CACHE_DIR": str(work / "mypy-cache"), NATIVE_ENV: "0"}
    cmd = [sys.executable, "-c", "from analyzer.native.build import compile_main; compile_main()",
           str(work), group_name(key)]
    compiled = 0
    with log_path.open("w") as log:
        proc = subprocess.Popen(cmd, cwd=package_parent(), env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            if re.match(r"^\S*(gcc|cc|clang)\S* .* -c ", line):
                compiled += 1
                if compiled == 1:
                    say(f"  translated to C in {time.monotonic() - started:.0f} s; compiling the C…")
        status = proc.wait()
    if status != 0:
        tail = [ln.strip() for ln in log_path.read_text().splitlines() if ln.strip()][-1:]
        raise AnalyzerError(f"mypyc failed ({tail[0][:200] if tail else 'no output'}); full log: {log_path}")
    manifest = _manifest(key, work / "out", time.monotonic() - started)
    (work / "out" / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
    old = None
    if dest.exists():
        old = root / f".old-{key}-{os.getpid()}"
        dest.rename(old)
    (work / "out").rename(dest)
    shutil.rmtree(work, ignore_errors=True)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    say(f"  compiled {compiled} C files; done in {manifest['build_seconds']} s")
    return NativeBuild(dest, False, manifest)


def _manifest(key: str, out: Path, seconds: float) -> dict:
    from importlib.metadata import version

    def entry(binary: Path) -> dict:
        return {"path": binary.relative_to(out).as_posix(), "size": binary.stat().st_size,
                "sha256": hashlib.sha256(binary.read_bytes()).hexdigest()}

    modules = {}
    for module in COMPILED:
        found = sorted((out / Path(*module.split(".")[:-1])).glob(module.split(".")[-1] + ".*.so"))
        if len(found) != 1:
            raise AnalyzerError(f"mypyc left {len(found)} binaries for {module} in {out}; see its build.log")
        modules[module] = entry(found[0])
    group = group_name(key) + "__mypyc"  # the module name mypyc gives the group's shared library
    libs = sorted(out.glob(f"{group}.*.so"))
    if len(libs) != 1:
        raise AnalyzerError(f"mypyc left {len(libs)} shared libraries {group}*.so in {out}")
    return {"key": key, "modules": modules, "group": group, "group_file": entry(libs[0]), "mypy": version("mypy"),
            "python": sys.version.split()[0], "opt_level": OPT_LEVEL, "build_seconds": round(seconds, 1),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def compile_main() -> None:
    """Child process: `setup(ext_modules=mypycify(…))` into WORK/out (argv: WORK GROUP)."""
    from mypyc.build import mypycify
    from setuptools import setup

    work, group = Path(sys.argv[1]), sys.argv[2]
    paths = [str(source_file(m).relative_to(package_parent())) for m in COMPILED]
    setup(name="analyzer-native", packages=[],
          ext_modules=mypycify(paths, opt_level=OPT_LEVEL, group_name=group, target_dir=str(work / "c")),
          script_args=["build_ext", "--build-lib", str(work / "out"), "--build-temp", str(work / "tmp"),
                       "--parallel", str(min(2, os.cpu_count() or 1))])
