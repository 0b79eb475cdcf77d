"""Build llama.cpp's `llama-server` from the vendored sdist source, once per machine and version.

Why this shape: a build takes 8–30 minutes on two cores, so it is cached under the analyzer cache dir by
llama-cpp-python version, guarded by a file lock (two processes never build at once; the second waits and
reuses), kept incremental across interruptions (the work tree survives a failure), and installed by one
rename so a reader sees either no engine or a complete one.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from analyzer.engine.paths import LLAMA_CPP_PYTHON_VERSION, EnginePaths, build_jobs
from analyzer.engine.sdist import ensure_sdist, extract_source, vendored_llama_cpp_commit
from analyzer.errors import AnalyzerError

# progress(stage, done, total): total None for stages without a count.
Progress = Callable[[str, int, "int | None"], None]

TARGET = "llama-server"
_NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\]")
_MAKE_PERCENT = re.compile(r"^\[\s*(\d+)%\]")


@dataclass(frozen=True)
class BuildResult:
    binary: Path
    reused: bool
    info: dict


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def cmake_options() -> list[str]:
    """Configure flags: only what llama-server needs, nothing fetched from the network, portable x86 code.

    GGML_NATIVE=OFF avoids -march=native (a cached build copied to another CPU must not crash); AVX2/FMA/F16C
    stay on when this CPU has them, off otherwise. Static libraries make bin/ self-contained.
    """
    opts = [
        "-DCMAKE_BUILD_TYPE=Release",
        "-DBUILD_SHARED_LIBS=OFF",
        "-DGGML_NATIVE=OFF",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_BUILD_TOOLS=ON",
        "-DLLAMA_BUILD_SERVER=ON",
        "-DLLAMA_OPENSSL=OFF",
        "-DLLAMA_BUILD_UI=OFF",
        "-DLLAMA_USE_PREBUILT_UI=OFF",
    ]
    if platform.machine() in ("x86_64", "AMD64"):
        flags = _cpu_flags()
        if flags and not {"avx2", "fma", "f16c"} <= flags:
            opts += ["-DGGML_AVX2=OFF", "-DGGML_FMA=OFF", "-DGGML_F16C=OFF", "-DGGML_BMI2=OFF"]
            if "avx" not in flags:
                opts.append("-DGGML_AVX=OFF")
    return opts


def engine_available(cache_dir: Path, version: str = LLAMA_CPP_PYTHON_VERSION) -> bool:
    """True when the llama-server binary for the pinned version is already built and installed."""
    paths = EnginePaths(Path(cache_dir), version)
    return paths.binary.is_file() and os.access(paths.binary, os.X_OK) and paths.build_info.is_file()


def stage_printer(say: Callable[[str], None]) -> Progress:
    """A line per stage and per 10% of compiling, for logs and non-terminals."""
    last: dict[str, int] = {}

    def progress(stage: str, done: int, total: int | None) -> None:
        if total:
            pct = done * 100 // total
            bucket = pct // 10
            if last.get(stage) != bucket:
                last[stage] = bucket
                say(f"engine: {stage} {pct}% ({done}/{total})")
        elif stage not in last:
            last[stage] = -1
            say(f"engine: {stage}")

    return progress


def _run_logged(cmd: list[str], log: Path, on_line: Callable[[str], None] | None = None,
                cwd: Path | None = None) -> None:
    """Run `cmd`, appending its output to `log`; raise an AnalyzerError naming the log on failure."""
    from analyzer.procs import stream_to_log

    code = stream_to_log(cmd, log, on_line=on_line, cwd=cwd)
    if code != 0:
        raise AnalyzerError(f"`{cmd[0]} {cmd[1]}` failed (exit {code}); see {log} — fix the cause and run "
                            "`analyze engine build` again (finished objects are reused)")


def _generator() -> list[str]:
    return ["-G", "Ninja"] if shutil.which("ninja") else []


def _drop_if_other_generator(build_dir: Path, generator: str) -> None:
    """A kept build tree configured with another generator (ninja installed since) cannot be reused by CMake."""
    cache = build_dir / "CMakeCache.txt"
    try:
        text = cache.read_text(errors="replace")
    except OSError:
        return
    for line in text.splitlines():
        if line.startswith("CMAKE_GENERATOR:") and line.split("=", 1)[-1] != generator:
            shutil.rmtree(build_dir, ignore_errors=True)
            return


def build_engine(cache_dir: Path, *, progress: Progress | None = None, say: Callable[[str], None] = print,
                 force: bool = False, version: str = LLAMA_CPP_PYTHON_VERSION) -> BuildResult:
    """Build and install llama-server unless it is already cached; returns where the binary is."""
    from filelock import FileLock

    paths = EnginePaths(Path(cache_dir), version)
    paths.root.mkdir(parents=True, exist_ok=True)
    progress = progress or stage_printer(say)
    with FileLock(str(paths.lock)):
        if engine_available(paths.cache_dir, version) and not force:
            return BuildResult(paths.binary, True, json.loads(paths.build_info.read_text()))
        if shutil.which("cmake") is None:
            raise AnalyzerError("cmake is not installed; install cmake and a C++ compiler (e.g. `apt-get install "
                                "cmake g++`) and run `analyze engine build` again")
        started = time.monotonic()
        progress("download sdist", 0, None)
        ensure_sdist(paths, say=say)
        paths.work.mkdir(parents=True, exist_ok=True)
        progress("extract source", 0, None)
        src = extract_source(paths, paths.work)
        build_dir = paths.work / "build"
        paths.logs.mkdir(parents=True, exist_ok=True)
        log = paths.logs / f"build-{paths.version}.log"
        options = cmake_options()
        generator = _generator()
        _drop_if_other_generator(build_dir, "Ninja" if generator else "Unix Makefiles")
        progress("configure", 0, None)
        _run_logged(["cmake", "-S", str(src), "-B", str(build_dir), *generator, *options], log)

        def on_line(line: str) -> None:
            m = _NINJA_STEP.match(line)
            if m:
                progress("compile", int(m.group(1)), int(m.group(2)))
                return
            m = _MAKE_PERCENT.match(line)
            if m:
                progress("compile", int(m.group(1)), 100)

        jobs = build_jobs()
        _run_logged(["cmake", "--build", str(build_dir), "--target", TARGET, "-j", str(jobs)], log, on_line)
        built = build_dir / "bin" / TARGET
        if not built.is_file():
            raise AnalyzerError(f"the build finished but {built} is missing; see {log}")
        progress("install", 0, None)
        version = _binary_version(built)
        info = {"llama_cpp_python": paths.version, "llama_server_version": version,
                "llama_cpp_commit": vendored_llama_cpp_commit(paths), "cmake_options": options,
                "jobs": jobs, "build_seconds": round(time.monotonic() - started, 1),
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        _install(paths, built, info)
        shutil.rmtree(paths.work, ignore_errors=True)  # ~1 GB of objects; the binary is all that is needed
        return BuildResult(paths.binary, False, info)


def _binary_version(binary: Path) -> str:
    """`llama-server --version` (it prints `version: N (commit)` to stderr); '' when it says nothing."""
    try:
        proc = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    for line in (proc.stderr + proc.stdout).splitlines():
        if line.startswith("version:"):
            return line.split(":", 1)[1].strip()
    return ""


def _install(paths: EnginePaths, built: Path, info: dict) -> None:
    """Copy the binary and build.json into a temporary sibling, then rename it into place in one step."""
    tmp = Path(tempfile.mkdtemp(dir=paths.root, prefix=f".install-{paths.version}-"))
    try:
        tmp.chmod(0o755)  # mkdtemp makes it private; the installed engine is readable like any cache entry
        (tmp / "bin").mkdir()
        shutil.copy2(built, tmp / "bin" / TARGET)
        (tmp / "build.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        if paths.install.exists():
            old = paths.install.with_name(paths.install.name + ".old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(paths.install, old)
            os.replace(tmp, paths.install)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, paths.install)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
