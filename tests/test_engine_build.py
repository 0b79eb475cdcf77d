"""The engine build pipeline against a fake sdist (a tiny CMake project), the model writer and process control.

No real llama.cpp here: a fixture tarball with the sdist's layout builds a `llama-server` that only answers
`--version`, so configure → compile → install → cache reuse runs for real in seconds.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.engine.build import build_engine, engine_available
from analyzer.engine.paths import SDIST_ENV, EnginePaths
from analyzer.engine.process import process_start_ticks, stop_process
from analyzer.engine.state import load_state, save_state, state_path
from analyzer.errors import AnalyzerError

VERSION = "0.0.0-fixture"
needs_toolchain = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("cc") is None,
                                     reason="needs cmake and a C compiler")

CMAKELISTS = """cmake_minimum_required(VERSION 3.14)
project(fake_llama C)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
add_executable(llama-server server.c)
add_executable(not-wanted server.c)
"""
SERVER_C = """#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--version") == 0) { fprintf(stderr, "version: 4242 (fixture)\\n"); return 0; }
    return 1;
}
"""


CHANGELOG = """# Changelog

## [Unreleased]

## [{version}]

- feat: update llama.cpp to ggml-org/llama.cpp@abc1234

## [0.0.0-older]

- feat: update llama.cpp to ggml-org/llama.cpp@deadbee
"""


def fake_sdist(path: Path, version: str = VERSION, cmakelists: str = CMAKELISTS) -> Path:
    """A tarball shaped like the llama-cpp-python sdist: CHANGELOG.md, vendor/llama.cpp/{CMakeLists.txt,server.c}."""
    root = f"llama_cpp_python-{version}"
    prefix = f"{root}/vendor/llama.cpp"
    files = {f"{prefix}/CMakeLists.txt": cmakelists, f"{prefix}/server.c": SERVER_C,
             f"{root}/CHANGELOG.md": CHANGELOG.format(version=version)}
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def sdist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = fake_sdist(tmp_path / f"llama_cpp_python-{VERSION}.tar.gz")
    monkeypatch.setenv(SDIST_ENV, str(path))
    return path


@needs_toolchain
def test_build_installs_only_the_server_and_reuses_the_cache(tmp_path: Path, sdist: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    seen: list[tuple[str, int, int | None]] = []
    first = build_engine(cache, version=VERSION, progress=lambda *a: seen.append(a), say=lambda s: None)
    paths = EnginePaths(cache, VERSION)
    assert not first.reused and first.binary == paths.binary and paths.binary.is_file()
    assert first.info["llama_server_version"] == "4242 (fixture)"
    assert first.info["llama_cpp_commit"] == "abc1234", "the commit of this version's CHANGELOG section"
    assert paths.install.stat().st_mode & 0o777 == 0o755
    assert json.loads(paths.build_info.read_text())["llama_cpp_python"] == VERSION
    assert "-DGGML_NATIVE=OFF" in first.info["cmake_options"] and "-DLLAMA_USE_PREBUILT_UI=OFF" in first.info[
        "cmake_options"]
    assert not paths.work.exists(), "the build tree is removed once the binary is installed"
    stages = [s for s, _, _ in seen]
    assert stages.index("configure") < stages.index("compile") < stages.index("install")
    done, total = [(d, t) for s, d, t in seen if s == "compile"][-1]
    assert total and done == total
    assert engine_available(cache, VERSION)

    before = paths.binary.stat()
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no cmake, no compiler: only a cache hit can succeed
    second = build_engine(cache, version=VERSION, say=lambda s: None)
    assert second.reused and second.info == first.info
    after = paths.binary.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@needs_toolchain
def test_two_concurrent_builds_compile_once(tmp_path: Path, sdist: Path) -> None:
    cache = tmp_path / "cache"
    results = []

    def one() -> None:
        results.append(build_engine(cache, version=VERSION, say=lambda s: None))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.reused for r in results) == [False, True]
    log = (EnginePaths(cache, VERSION).logs / f"build-{VERSION}.log").read_text()
    assert log.count("$ cmake -S") == 1


@needs_toolchain
def test_failed_build_installs_nothing_and_names_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = fake_sdist(tmp_path / "broken.tar.gz", cmakelists="this is not cmake(\n")
    monkeypatch.setenv(SDIST_ENV, str(broken))
    cache = tmp_path / "cache"
    with pytest.raises(AnalyzerError, match=r"build-0\.0\.0-fixture\.log"):
        build_engine(cache, version=VERSION, say=lambda s: None)
    paths = EnginePaths(cache, VERSION)
    assert not engine_available(cache, VERSION) and not paths.install.exists()
    assert not [p for p in paths.root.iterdir() if p.name.startswith(".install-")]


def test_pinned_version_refuses_an_sdist_with_another_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SDIST_ENV, str(fake_sdist(tmp_path / "impostor.tar.gz")))
    cache = tmp_path / "cache"
    if shutil.which("cmake") is None:
        pytest.skip("needs cmake to get past the tool check")
    with pytest.raises(AnalyzerError, match="sha256"):
        build_engine(cache, say=lambda s: None)
    assert not EnginePaths(cache).sdist.exists()


def test_state_never_holds_a_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        save_state(tmp_path, {"pid": 1, "api_key": "secret"})
    assert not state_path(tmp_path).exists()
    save_state(tmp_path, {"pid": 1, "api_key_required": True})
    assert load_state(tmp_path) == {"pid": 1, "api_key_required": True}


def test_stop_signals_only_the_recorded_process(tmp_path: Path) -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    target = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ticks = process_start_ticks(bystander.pid)
        assert ticks is not None
        # a pid whose start time does not match is some other process now: leave it alone
        assert stop_process(bystander.pid, ticks + 1, process=None) is False
        assert bystander.poll() is None
        assert stop_process(target.pid, process_start_ticks(target.pid), process=target) is True
        assert target.poll() is not None and bystander.poll() is None
    finally:
        for p in (bystander, target):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_stop_with_stale_state_leaves_the_pid_alone(tmp_path: Path) -> None:
    from analyzer.api.engine import engine_status, stop

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ticks = process_start_ticks(other.pid)
        assert ticks is not None
        recorded = {"pid": other.pid, "start_ticks": ticks - 1, "base_url": "http://127.0.0.1:9/v1"}
        save_state(tmp_path, recorded)
        status = engine_status(tmp_path)
        assert not status.running and status.report["pid"] is None and status.state == recorded
        done = stop(tmp_path)
        assert done.stopped is False and done.state == recorded
        assert other.poll() is None and load_state(tmp_path) is None
        assert stop(tmp_path) == type(done)(False, None)  # nothing recorded any more
    finally:
        other.kill()
        other.wait()


def test_cli_stop_with_stale_state_leaves_the_pid_alone(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ticks = process_start_ticks(other.pid)
        assert ticks is not None
        save_state(tmp_path, {"pid": other.pid, "start_ticks": ticks - 1, "base_url": "http://127.0.0.1:9/v1"})
        assert main(["--cache-dir", str(tmp_path), "engine", "status"]) == 1
        assert "not running" in capsys.readouterr().out
        assert main(["--cache-dir", str(tmp_path), "engine", "stop"]) == 0
        assert "already exited" in capsys.readouterr().out
        assert other.poll() is None and load_state(tmp_path) is None
    finally:
        other.kill()
        other.wait()


def test_cli_start_with_an_unset_key_variable_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANALYZER_TEST_NO_SUCH_KEY", raising=False)
    code = main(["--cache-dir", str(tmp_path), "engine", "start", "--api-key-env", "ANALYZER_TEST_NO_SUCH_KEY"])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1 and err.startswith("error: ") and "export" in err
    assert not state_path(tmp_path).exists()


def test_cli_status_when_not_built(tmp_path: Path, capsys: pytest.CaptureFixture,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANALYZER_ENGINE_CACHE", raising=False)
    from analyzer.api.engine import engine_status

    report = engine_status(tmp_path).report
    assert report["running"] is False and report["built"] is False and report["binary"] is None
    assert main(["--cache-dir", str(tmp_path), "engine", "status", "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == report


def test_build_progress_lines_without_a_terminal(capsys: pytest.CaptureFixture) -> None:
    from analyzer.engine.build import stage_printer

    lines: list[str] = []
    progress = stage_printer(lines.append)
    progress("configure", 0, None)
    progress("configure", 0, None)
    for i in range(1, 201):
        progress("compile", i, 200)
    assert lines[0] == "engine: configure" and lines.count("engine: configure") == 1
    assert lines[-1] == "engine: compile 100% (200/200)"
    assert len([x for x in lines if x.startswith("engine: compile")]) == 11  # 0%, 10%, …, 100%


def test_build_progress_bar_on_a_terminal() -> None:
    from rich.console import Console

    from analyzer.engine.progress import build_progress

    class Ctx:
        interactive = True
        err = Console(file=io.StringIO(), force_terminal=True, width=100)

    with build_progress(Ctx()) as progress:
        progress("configure", 0, None)
        for i in range(1, 11):
            progress("compile", i, 10)
        progress("install", 0, None)
    text = Ctx.err.file.getvalue()
    assert "engine: compile" in text and "10/10" in text


def test_kept_build_tree_of_another_generator_is_dropped(tmp_path: Path) -> None:
    from analyzer.engine.build import _drop_if_other_generator

    tree = tmp_path / "build"
    tree.mkdir()
    (tree / "CMakeCache.txt").write_text("CMAKE_BUILD_TYPE:STRING=Release\nCMAKE_GENERATOR:INTERNAL=Ninja\n")
    _drop_if_other_generator(tree, "Ninja")
    assert tree.is_dir(), "same generator: the objects are reused"
    _drop_if_other_generator(tree, "Unix Makefiles")
    assert not tree.exists(), "CMake refuses to switch generators in place"
