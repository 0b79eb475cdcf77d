"""Several `analyze` processes on one cache dir: writers serialise on the cache's lock, the waiting one
says so in one line, and every process ends with the same answer."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from graphfixtures import build_world

from analyzer.cachelock import cache_writer, held

TRACE = ("PromptProjection", "parseChunkUsage")
ANALYZE = [sys.executable, "-c", "import sys; from analyzer.cli import main; sys.exit(main(sys.argv[1:]))"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANALYZER_")}
    env["ANALYZER_INDEX_WORKERS"] = "1"  # many processes at once: no extra pools on a small machine
    return env


def _start(lock: Path, cache: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*ANALYZE, "--lock", str(lock), "--cache-dir", str(cache), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())


def test_concurrent_sync_index_trace_on_a_fresh_cache_all_succeed_with_the_same_path(tmp_path: Path) -> None:
    world = build_world(tmp_path, trace=TRACE)
    cache = tmp_path / "shared-cache"
    commands = [("trace",), ("sync",), ("index",), ("trace",), ("sync",), ("index",), ("trace",), ("trace",)]
    procs = [_start(world.lock_path, cache, *c) for c in commands]
    results = [(c, *p.communicate(timeout=600), p.returncode) for c, p in zip(commands, procs, strict=True)]
    for command, _out, err, code in results:
        assert code == 0, (command, err)
        assert "internal error" not in err and "Traceback" not in err, (command, err)
    traces = {out for command, out, _err, _code in results if command == ("trace",)}
    assert len(traces) == 1
    path = traces.pop()
    assert "parseChunkUsage" in path and "PromptProjection" in path
    assert not list((cache / "repos").glob(".*partial*"))  # no half-built checkout left behind
    # and the answer is the one a single process gives on its own cache
    alone = _start(world.lock_path, tmp_path / "alone-cache", "trace")
    out, err = alone.communicate(timeout=600)
    assert alone.returncode == 0, err
    assert out == path


def test_a_writer_that_must_wait_says_so_once_and_then_proceeds(tmp_path: Path) -> None:
    world = build_world(tmp_path, trace=TRACE)
    cache = tmp_path / "cache"
    lines: list[str] = []
    with cache_writer(cache):
        assert held(cache)
        proc = _start(world.lock_path, cache, "sync")
        reader = threading.Thread(target=lambda: lines.append(proc.stderr.readline()), daemon=True)
        reader.start()
        reader.join(timeout=120)
        assert lines == [f"waiting for another analyze on {cache}…\n"]
        assert proc.poll() is None  # still waiting while we hold the lock
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "waiting" not in err  # the line was printed once
    assert out.count("fetched") == 2 or out.count("->") == 2


def test_the_lock_is_reentrant_within_a_process(tmp_path: Path) -> None:
    with cache_writer(tmp_path), cache_writer(tmp_path):
        assert held(tmp_path)
    assert not held(tmp_path)


@pytest.mark.parametrize("readers", [3])
def test_readers_of_a_warm_cache_take_no_lock(tmp_path: Path, readers: int) -> None:
    world = build_world(tmp_path, trace=TRACE)
    cache = tmp_path / "cache"
    first = _start(world.lock_path, cache, "trace")
    expected, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    with cache_writer(cache):  # a writer busy elsewhere must not block queries on the stored graph
        procs = [_start(world.lock_path, cache, "trace") for _ in range(readers)]
        outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert {o for o, _ in outs} == {expected}
    assert all("waiting" not in e for _, e in outs)
