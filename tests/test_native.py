"""The compiled (mypyc) build: used only when it matches the sources, same results as pure Python, and a
damaged or foreign build falls back to pure Python with one warning.

Tests that need a real build use the machine's (`analyze native build`, which `.ci/run` runs); they skip
when there is none, and fail instead under `ANALYZER_REQUIRE_NATIVE=1` (CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.native.compiled import COMPILED, MANIFEST, NATIVE_DIR_ENV, NATIVE_ENV, native_root, source_key

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
REQUIRE_ENV = "ANALYZER_REQUIRE_NATIVE"
WHICH_FILES = ("import analyzer, importlib, json; "
               "print(json.dumps({m: importlib.import_module(m).__file__ for m in %r}))")


def clean_env(**env: str) -> dict[str, str]:
    """This process's environment without the native switches (the suite may run with them set), plus `env`."""
    full = {k: v for k, v in os.environ.items() if k not in (NATIVE_ENV, NATIVE_DIR_ENV)}
    full.update(env)
    return full


def run_py(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=clean_env(**env),
                          cwd=ROOT, timeout=600)


def module_files(**env: str) -> tuple[dict[str, str], str]:
    proc = run_py(WHICH_FILES % (COMPILED,), **env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


@pytest.fixture(scope="module")
def built() -> Path:
    """The machine's build for these sources (skip, or fail under ANALYZER_REQUIRE_NATIVE=1, when absent)."""
    where = native_root() / source_key()
    if not (where / MANIFEST).exists():
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"no compiled build in {where} and {REQUIRE_ENV}=1: run `analyze native build`")
        pytest.skip("no compiled build for these sources (`analyze native build` makes one)")
    return where


def copy_build(built: Path, root: Path, name: str | None = None) -> Path:
    dest = root / (name or built.name)
    shutil.copytree(built, dest)
    return dest


# --- without a build ---------------------------------------------------------------------------------

def test_the_key_follows_every_compiled_source_byte(tmp_path: Path) -> None:
    for module in COMPILED:
        path = tmp_path / (module.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {module}\n")
    first = source_key(tmp_path)
    assert source_key(tmp_path) == first
    last = tmp_path / (COMPILED[-1].replace(".", "/") + ".py")
    last.write_text(last.read_text() + " ")
    assert source_key(tmp_path) != first
    assert source_key() != first  # the real sources are something else again


def test_without_a_build_everything_is_pure_python_and_silent(tmp_path: Path) -> None:
    files, err = module_files(**{NATIVE_DIR_ENV: str(tmp_path / "empty")})
    assert all(f.endswith(".py") for f in files.values()), files
    assert err == ""
    status = subprocess.run([sys.executable, "-m", "analyzer", "native", "status"], capture_output=True,
                            text=True, env=clean_env(**{NATIVE_DIR_ENV: str(tmp_path / "empty")}), cwd=ROOT)
    assert status.returncode == 1
    assert "compiled: no" in status.stdout and "analyze native build" in status.stdout


def test_a_failed_build_says_why_in_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    """No C compiler on PATH: one error line, exit 3, no traceback, no build directory."""
    root = tmp_path / "native"
    env = clean_env(**{NATIVE_DIR_ENV: str(root), "PATH": str(tmp_path / "nothing-here"), "CC": "no-such-cc"})
    proc = subprocess.run([sys.executable, "-m", "analyzer", "native", "build", "--force"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 3, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "C compiler" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (root / source_key()).exists()


# --- with the machine's build --------------------------------------------------------------------------

def test_every_compiled_module_loads_from_the_build(built: Path, tmp_path: Path) -> None:
    files, err = module_files(**{NATIVE_DIR_ENV: str(built.parent)})
    assert err == ""
    assert all(Path(f).is_relative_to(built) and not f.endswith(".py") for f in files.values()), files
    off, _ = module_files(**{NATIVE_DIR_ENV: str(built.parent), NATIVE_ENV: "0"})
    assert all(f.endswith(".py") for f in off.values())


def test_a_build_for_other_sources_is_never_used(built: Path, tmp_path: Path) -> None:
    copy_build(built, tmp_path, name="0" * 20)  # another key: binaries of some other version of the .py files
    files, err = module_files(**{NATIVE_DIR_ENV: str(tmp_path)})
    assert all(f.endswith(".py") for f in files.values())
    assert err == ""


@pytest.mark.parametrize("damage", ["truncated library", "garbage library", "unreadable manifest",
                                    "missing module", "garbage module"])
def test_a_damaged_build_warns_once_and_runs_pure_python(built: Path, tmp_path: Path, damage: str) -> None:
    where = copy_build(built, tmp_path)
    manifest = json.loads((where / MANIFEST).read_text())
    library = where / manifest["group_file"]["path"]
    if damage == "truncated library":
        library.write_bytes(library.read_bytes()[:4096])
    elif damage == "garbage library":  # right size, not a shared library: the loader must not crash
        library.write_bytes(b"\0" * manifest["group_file"]["size"])
    elif damage == "garbage module":  # right size: found only by its hash, before any module is bound
        stub = where / manifest["modules"][COMPILED[-1]]["path"]
        stub.write_bytes(b"\0" * stub.stat().st_size)
    elif damage == "unreadable manifest":
        (where / MANIFEST).write_text('{"key": ')
    else:
        (where / manifest["modules"][COMPILED[0]]["path"]).unlink()
    files, err = module_files(**{NATIVE_DIR_ENV: str(tmp_path)})
    assert all(f.endswith(".py") for f in files.values()), files
    warnings = [ln for ln in err.splitlines() if ln.strip()]
    assert len(warnings) == 1 and warnings[0].startswith("warning:") and "damaged" in warnings[0], err
    assert "native build --force" in warnings[0]


def test_a_matching_build_is_reused_not_recompiled(built: Path, tmp_path: Path) -> None:
    from analyzer.native.build import build_native

    copy_build(built, tmp_path)
    said: list[str] = []
    result = build_native(root=tmp_path, say=said.append)
    assert result.reused and result.directory == tmp_path / built.name and said == []


SNAPSHOT = """
import json, marshal, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from graphfixtures import FIXTURES, build_world, graph_snapshot
from analyzer.index.cache import encode_rows
from analyzer.parse.extract import extract_facts
from analyzer.parse.languages import language_for_path
facts, errors = {{}}, {{}}
for path in sorted(FIXTURES.parent.rglob("*")):
    if path.is_file() and language_for_path(path.name):
        name = str(path.relative_to(FIXTURES.parent))
        found = extract_facts(path.read_bytes(), path.name)
        facts[name], errors[name] = repr(marshal.loads(encode_rows(found))), found.extract_errors
g = build_world(Path({tmp!r})).analysis(rebuild=True).graph
print(json.dumps({{"facts": facts, "errors": errors, "graph": repr(graph_snapshot(g))}}))
"""


def test_compiled_and_pure_python_give_the_same_facts_and_graph(built: Path, tmp_path: Path) -> None:
    out = {}
    for mode, env in (("compiled", {NATIVE_DIR_ENV: str(built.parent)}),
                      ("pure", {NATIVE_DIR_ENV: str(built.parent), NATIVE_ENV: "0"})):
        (tmp_path / mode).mkdir()
        proc = run_py(SNAPSHOT.format(tests=str(TESTS), tmp=str(tmp_path / mode)), **env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out[mode] = json.loads(proc.stdout.splitlines()[-1])
    assert len(out["pure"]["facts"]) > 30
    # a wrong annotation surfaces in compiled code as a TypeError the extractor counts and skips
    assert not any(out["compiled"]["errors"].values()), out["compiled"]["errors"]
    assert out["compiled"]["facts"] == out["pure"]["facts"]
    assert out["compiled"]["graph"] == out["pure"]["graph"]
    assert "'direct'" in out["pure"]["graph"]


@pytest.mark.parametrize("mode", ["compiled", "pure"])
def test_index_stats_say_what_the_build_ran_on(built: Path, tmp_path: Path, mode: str) -> None:
    sys.path.insert(0, str(TESTS))
    from graphfixtures import build_world

    world = build_world(tmp_path)
    env = clean_env(**{NATIVE_DIR_ENV: str(built.parent)})
    if mode == "pure":
        env[NATIVE_ENV] = "0"
    proc = subprocess.run([sys.executable, "-m", "analyzer", "--lock", str(world.lock_path), "--cache-dir",
                           str(tmp_path / "cache"), "index", "--stats", "--rebuild"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    row = next(ln for ln in proc.stdout.splitlines() if "compiled indexer" in ln)
    assert ("yes (mypyc)" in row) == (mode == "compiled"), row
    if mode == "pure":
        assert "turned off by ANALYZER_NATIVE=0" in row


def test_a_damaged_build_is_not_reused_by_build(built: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`analyze native build` checks the cached build as the loader would before reusing it (here it is
    made to rebuild into a tmp root; the compile itself is stubbed so the test stays fast)."""
    from analyzer.native import build as native_build

    where = copy_build(built, tmp_path)
    manifest = json.loads((where / MANIFEST).read_text())
    (where / manifest["modules"][COMPILED[0]]["path"]).write_bytes(b"not a module")
    said: list[str] = []
    rebuilt: list[Path] = []

    def fake_build(key: str, root: Path, dest: Path, say) -> native_build.NativeBuild:
        rebuilt.append(dest)
        return native_build.NativeBuild(dest, False, {})

    monkeypatch.setattr(native_build, "_build", fake_build)
    result = native_build.build_native(root=tmp_path, say=said.append)
    assert not result.reused and rebuilt == [tmp_path / built.name]
    assert len(said) == 1 and "damaged" in said[0] and "rebuilding" in said[0]


def test_a_second_builder_waits_for_the_first_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One builder per native dir (the cache's writer lock): the second prints one waiting line, then goes on."""
    import time

    from analyzer.native import build as native_build

    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
                               "from analyzer.cachelock import cache_writer\n"
                               "with cache_writer(Path(sys.argv[1])):\n    print('held', flush=True)\n"
                               "    time.sleep(2)\n", str(tmp_path)], stdout=subprocess.PIPE, text=True,
                              env=clean_env(), cwd=ROOT)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    built_at: list[float] = []

    def fake_build(key: str, root: Path, dest: Path, say) -> native_build.NativeBuild:
        built_at.append(time.monotonic())
        return native_build.NativeBuild(dest, False, {})

    monkeypatch.setattr(native_build, "_build", fake_build)
    said: list[str] = []
    native_build.build_native(root=tmp_path, say=said.append)
    holder.wait(timeout=30)
    assert holder.returncode == 0 and built_at
    assert len(said) == 1 and said[0].startswith("waiting for another analyze on"), said
