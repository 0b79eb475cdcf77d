"""A damaged cache (a truncated or corrupt stored graph, index database or checkout file) is detected,
discarded with a one-line warning and rebuilt: the answer stays the same, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from graphfixtures import build_world

from analyzer.cli import main

TRACE = ("PromptProjection", "parseChunkUsage")


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory):
    """A fixture world with a warm cache and the trace every damaged copy must still print."""
    tmp = tmp_path_factory.mktemp("damage")
    world = build_world(tmp, trace=TRACE)
    template = tmp / "template-cache"
    code, out, err = _trace(world.lock_path, template)
    assert code == 0, err
    return world.lock_path, template, out


def _trace(lock: Path, cache: Path, *extra: str) -> tuple[int, str, str]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--lock", str(lock), "--cache-dir", str(cache), *extra, "trace"])
    return code, out.getvalue(), err.getvalue()


def _files(cache: Path) -> list[Path]:
    return sorted(p.relative_to(cache) for p in cache.rglob("*") if p.is_file() and not p.is_symlink())


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _git_sees_damage(checkout: Path) -> bool:
    env_free = ["git", "-C", str(checkout)]
    fsck = subprocess.run([*env_free, "fsck", "--no-dangling", "--no-progress"], capture_output=True)
    status = subprocess.run([*env_free, "status", "--porcelain"], capture_output=True)
    return fsck.returncode != 0 or status.returncode != 0


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning:")]


def test_every_cache_file_truncated_in_turn_still_gives_the_same_trace(warm, tmp_path: Path) -> None:
    lock, template, expected = warm
    files = [f for f in _files(template) if f.parts[0] != "repos"]
    assert {f.parts[0] for f in files} >= {"graphs", "index.sqlite"}
    for rel in files:
        cache = tmp_path / f"c-{len(rel.parts)}-{rel.name}"
        shutil.copytree(template, cache, symlinks=True)
        _truncate(cache / rel)
        code, out, err = _trace(lock, cache)
        assert code == 0, (rel, err)
        assert out == expected, rel
        assert "Traceback" not in err and "internal error" not in err, (rel, err)
        if rel.parts[0] == "graphs" and rel.suffix in (".pickle", ".view") and ".unresolved" not in rel.name:
            assert len(_warnings(err)) == 1 and "damaged" in err, (rel, err)  # warned once, then rebuilt
            again = _trace(lock, cache)
            assert again[0] == 0 and again[1] == expected and not _warnings(again[2]), rel  # stored afresh
        shutil.rmtree(cache)


def test_a_truncated_index_database_is_set_aside_and_rebuilt(warm, tmp_path: Path) -> None:
    lock, template, expected = warm
    cache = tmp_path / "c"
    shutil.copytree(template, cache, symlinks=True)
    shutil.rmtree(cache / "graphs")  # so the index database is read
    _truncate(cache / "index.sqlite")
    code, out, err = _trace(lock, cache)
    assert code == 0 and out == expected, err
    assert len(_warnings(err)) == 1 and "index.sqlite" in err, err
    shutil.rmtree(cache / "graphs")
    code, out, err = _trace(lock, cache)  # the new database serves the next build without complaint
    assert code == 0 and out == expected and not _warnings(err), err


def test_every_checkout_file_truncated_in_turn_is_repaired_when_git_can_tell(warm, tmp_path: Path) -> None:
    """Checkout damage matters when the checkout is read: drop the stored graph and index so the next
    query re-reads every blob. What git itself sees as damage is warned about and fetched again."""
    lock, template, expected = warm
    files = [f for f in _files(template) if f.parts[0] == "repos" and ".git" in f.parts
             and "hooks" not in f.parts and "logs" not in f.parts]
    assert any("objects" in f.parts for f in files) and any(f.name == "HEAD" for f in files)
    seen_damage = 0
    for rel in files:
        cache = tmp_path / "c"
        shutil.copytree(template, cache, symlinks=True)
        shutil.rmtree(cache / "graphs")
        (cache / "index.sqlite").unlink()
        _truncate(cache / rel)
        checkout = cache / rel.parts[0] / rel.parts[1]
        damaged = _git_sees_damage(checkout)
        code, out, err = _trace(lock, cache)
        assert code == 0, (rel, err)
        assert out == expected, (rel, err)
        assert "Traceback" not in err and "internal error" not in err, (rel, err)
        if damaged:
            seen_damage += 1
            assert any("damaged" in w for w in _warnings(err)), (rel, err)
            assert not _git_sees_damage(checkout), rel  # fetched again, whole
        shutil.rmtree(cache)
    assert seen_damage > 0
