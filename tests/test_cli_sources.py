"""`analyze status|sync|pin` with real git repos in tmp dirs: what the cache holds and what a sync did through
`analyzer.api` (`status`, `sync`); the commands for their text, `--json`, exit codes and error lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import git
import pytest
from srcfixtures import Upstream, make_upstream, move_tag, write_lock

from analyzer.api import open_session
from analyzer.api.sources import status, sync
from analyzer.cli import main
from analyzer.paths import checkout_dir


@pytest.fixture
def up(tmp_path: Path) -> Upstream:
    return make_upstream(tmp_path / "upstream")


@pytest.fixture
def lock(tmp_path: Path, up: Upstream) -> Path:
    return write_lock(tmp_path / "repos.lock", str(up.path), "v1", up.c1)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def session(lock: Path, cache_dir: Path, **sources: str):
    return open_session(lock, cache_dir=cache_dir, sources=sources, environ={})


def head(cache_dir: Path) -> str:
    return git.Repo(checkout_dir(cache_dir, "up")).head.commit.hexsha


def error_lines(err: str) -> list[str]:
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.strip()]


def test_status_before_and_after_sync(capsys: pytest.CaptureFixture[str], lock: Path, cache_dir: Path,
                                      up: Upstream) -> None:
    code, out, _ = run(capsys, "--lock", str(lock), "status", "up")
    assert code == 0
    assert str(up.path) in out and "v1" in out and up.c1 in out and "not present" in out

    code, out, _ = run(capsys, "--lock", str(lock), "sync", "up")
    assert code == 0 and "up: fetched (shallow)" in out

    code, out, _ = run(capsys, "--lock", str(lock), "status", "up")
    assert code == 0 and "checked out" in out and "add greeting" in out
    date = git.Repo(up.path).commit(up.c1).committed_datetime.isoformat()
    assert date in out

    by_name = {r.status.name: r.status for r in status(session(lock, cache_dir))}
    assert by_name["up"].present and by_name["up"].checked_out
    assert (by_name["up"].ref, by_name["up"].commit, by_name["up"].subject) == ("v1", up.c1, "add greeting")
    assert by_name["up"].date == date
    assert by_name["other"].present is False and by_name["other"].subject is None
    code, out, _ = run(capsys, "--lock", str(lock), "status", "--json")
    data = json.loads(out)
    assert code == 0 and (data["lock"], data["cache_dir"]) == (str(lock), str(cache_dir))
    assert data["repos"] == [r.as_json() for r in status(session(lock, cache_dir))]


def test_status_and_trace_say_when_the_ref_does_not_name_the_commit(capsys: pytest.CaptureFixture[str], lock: Path,
                                                                    cache_dir: Path, up: Upstream) -> None:
    assert run(capsys, "--lock", str(lock), "sync", "up")[0] == 0
    code, out, _ = run(capsys, "--lock", str(lock), "status", "up")
    assert code == 0 and "warning" not in out
    write_lock(lock, str(up.path), "v1", up.c0)  # a hand-edited commit: v1 is c1
    code, out, _ = run(capsys, "--lock", str(lock), "status", "up")
    said = f"up: ref v1 points to {up.c1[:12]} in the cache, but the lock pins {up.c0[:12]}"
    assert code == 0 and f"  warning  {said}" in out
    (repo,) = status(session(lock, cache_dir), ["up"])
    assert repo.ref_mismatch is not None and repo.ref_mismatch.startswith(said)
    code, out, _ = run(capsys, "--lock", str(lock), "--json", "status", "up")
    assert json.loads(out)["repos"][0]["ref_mismatch"] == repo.ref_mismatch
    _, _, err = run(capsys, "--lock", str(lock), "trace", "A", "B")
    assert f"warning: {said}" in err


def test_sync_twice_second_run_offline(capsys: pytest.CaptureFixture[str], lock: Path, cache_dir: Path,
                                       up: Upstream, tmp_path: Path) -> None:
    first = sync(session(lock, cache_dir), "up")
    assert (first.action, first.network, first.commit) == ("fetched (shallow)", True, up.c1)
    up.path.rename(tmp_path / "moved-away")
    again = sync(session(lock, cache_dir), "up")
    assert (again.action, again.network, again.commit) == ("unchanged", False, up.c1)
    code, out, err = run(capsys, "--lock", str(lock), "--json", "sync", "up")
    assert code == 0, err
    assert json.loads(out) == [again.as_json()]


def test_sync_unknown_name(capsys: pytest.CaptureFixture[str], lock: Path, cache_dir: Path) -> None:
    code, _, err = run(capsys, "--lock", str(lock), "sync", "nope")
    assert code == 3
    (line,) = error_lines(err)
    assert "repos.nope" in line and "known: up, other" in line


def test_malformed_lock_one_line_per_problem(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                             cache_dir: Path) -> None:
    bad = tmp_path / "bad.lock"
    bad.write_text('[repos.a]\nurl = "u"\ncommit = "abc"\nbranch = "x"\n[repos.b]\nurl = "u"\n')
    for command in ("sync", "status", "pin a v1"):
        code, out, err = run(capsys, "--lock", str(bad), *command.split())
        lines = error_lines(err)
        assert code == 3 and out == ""
        assert len(lines) == 3 and all(line.startswith(f"error: {bad}: repos.") for line in lines)
    bad.write_text("[repos.a\nurl=")
    code, _, err = run(capsys, "--lock", str(bad), "sync")
    assert code == 3 and len(error_lines(err)) == 1 and "malformed TOML" in err


def test_moved_tag_refused_by_cli(capsys: pytest.CaptureFixture[str], lock: Path, cache_dir: Path,
                                  up: Upstream) -> None:
    move_tag(up, "v1", up.c2)
    code, _, err = run(capsys, "--lock", str(lock), "sync", "up")
    (line,) = error_lines(err)
    assert code == 3 and up.c1 in line and up.c2 in line and "moved" in line


def test_dirty_tree_refused_by_cli(capsys: pytest.CaptureFixture[str], lock: Path, cache_dir: Path) -> None:
    assert run(capsys, "--lock", str(lock), "sync", "up")[0] == 0
    (checkout_dir(cache_dir, "up") / "README.md").write_text("edited\n")
    code, _, err = run(capsys, "--lock", str(lock), "sync", "up")
    (line,) = error_lines(err)
    assert code == 3 and "local changes" in line and "reset --hard" in line


def test_unreachable_source_one_line(capsys: pytest.CaptureFixture[str], lock: Path, cache_dir: Path,
                                     tmp_path: Path) -> None:
    missing = tmp_path / "offline-mirror"
    code, _, err = run(capsys, "--lock", str(lock), "--source", f"up={missing}", "sync", "up")
    (line,) = error_lines(err)
    assert code == 3 and str(missing) in line and "does not appear to be a git repository" in line
    assert "--source up=URL_OR_PATH" in line


def test_sync_all_reports_each_failure_and_continues(capsys: pytest.CaptureFixture[str], lock: Path,
                                                     cache_dir: Path, up: Upstream, tmp_path: Path) -> None:
    other = tmp_path / "no-other"  # 'other' cannot be fetched; 'up' still syncs
    code, out, err = run(capsys, "--lock", str(lock), "--source", f"other={other}", "sync")
    assert code == 3 and "up: fetched" in out
    (line,) = error_lines(err)
    assert line.startswith("error: other: cannot fetch from")
    assert head(cache_dir) == up.c1


# --- --source beats ANALYZER_SOURCE_<NAME> beats the lock's url -------------------------------------

@pytest.fixture
def bogus_lock(tmp_path: Path, up: Upstream) -> Path:
    return write_lock(tmp_path / "bogus.lock", str(tmp_path / "lock-url"), "v1", up.c1)


def test_env_source_beats_lock_url(capsys: pytest.CaptureFixture[str], bogus_lock: Path, cache_dir: Path,
                                   up: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _, err = run(capsys, "--lock", str(bogus_lock), "sync", "up")
    assert code == 3 and "lock-url" in err
    monkeypatch.setenv("ANALYZER_SOURCE_UP", str(up.path))
    code, out, err = run(capsys, "--lock", str(bogus_lock), "sync", "up")
    assert code == 0, err
    assert str(up.path) in out and head(cache_dir) == up.c1


def test_cli_source_beats_env(capsys: pytest.CaptureFixture[str], bogus_lock: Path, cache_dir: Path,
                              up: Upstream, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ANALYZER_SOURCE_UP", str(tmp_path / "env-url"))
    code, _, err = run(capsys, "--lock", str(bogus_lock), "sync", "up")
    assert code == 3 and "env-url" in err and "lock-url" not in err
    code, _, err = run(capsys, "--lock", str(bogus_lock), "--source", f"up={up.path}", "sync", "up")
    assert code == 0, err
    assert head(cache_dir) == up.c1
    code, out, _ = run(capsys, "--lock", str(bogus_lock), "status", "--source", f"up={tmp_path / 'cli-url'}")
    assert code == 0 and "cli-url" in out and "override" in out  # status is offline; it shows the override


def test_bad_source_option(capsys: pytest.CaptureFixture[str], lock: Path, cache_dir: Path) -> None:
    code, _, err = run(capsys, "--lock", str(lock), "--source", "up", "sync")
    assert code == 3 and len(error_lines(err)) == 1 and "NAME=URL_OR_PATH" in err
    code, _, err = run(capsys, "--lock", str(lock), "--source", "upp=/x", "sync")
    assert code == 3 and len(error_lines(err)) == 1 and "no upstream 'upp'" in err


# --- analyze pin ---------------------------------------------------------------------------------------

def lock_lines_without(text: str, *keys: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith(keys)]


@pytest.mark.parametrize("ref_kind", ["tag", "branch", "sha", "short-sha"])
def test_pin_rewrites_only_ref_and_commit(capsys: pytest.CaptureFixture[str], lock: Path, cache_dir: Path,
                                          up: Upstream, ref_kind: str) -> None:
    ref, want_commit, want_ref = {
        "tag": ("v2-light", up.c2, "v2-light"),
        "branch": ("dev", up.c3, "dev"),
        "sha": (up.c0, up.c0, None),
        "short-sha": (up.c0[:9], up.c0, None),
    }[ref_kind]
    before = lock.read_text()
    code, out, err = run(capsys, "--lock", str(lock), "pin", "up", ref)
    assert code == 0, err
    after = lock.read_text()
    assert f'commit = "{want_commit}"' in after
    if want_ref:
        assert f'ref = "{want_ref}"   # release tag' in after  # the comment on that line survives
    else:
        assert "ref = " not in after
    assert lock_lines_without(after, "ref =", "commit =") == lock_lines_without(before, "ref =", "commit =")
    assert git.Repo(checkout_dir(cache_dir, "up")).commit(want_commit).hexsha == want_commit
    assert "analyze sync up" in out
    # the new pin syncs without asking the source again
    up.path.rename(up.path.with_name("gone"))
    assert sync(session(lock, cache_dir), "up").network is False and head(cache_dir) == want_commit


def test_pin_adds_ref_in_key_order(capsys: pytest.CaptureFixture[str], tmp_path: Path, cache_dir: Path,
                                   up: Upstream) -> None:
    lock = write_lock(tmp_path / "noref.lock", str(up.path), None, up.c0)
    assert run(capsys, "--lock", str(lock), "pin", "up", "v1")[0] == 0
    keys = [line.split(" =")[0] for line in lock.read_text().split("[repos.other]")[0].splitlines() if " = " in line]
    assert keys == ["url", "ref", "commit", "aliases"]


def test_pin_same_commit_leaves_file_untouched(capsys: pytest.CaptureFixture[str], lock: Path,
                                               cache_dir: Path) -> None:
    mtime = lock.stat().st_mtime_ns
    code, out, _ = run(capsys, "--lock", str(lock), "pin", "up", "v1")
    assert code == 0 and "already pinned" in out and lock.stat().st_mtime_ns == mtime


def test_pin_failures_leave_lock_unchanged(capsys: pytest.CaptureFixture[str], lock: Path, cache_dir: Path,
                                           tmp_path: Path) -> None:
    before = lock.read_bytes()
    for argv, expect in [
        (["pin", "up", "no-such-tag"], "no tag or branch 'no-such-tag'"),
        (["pin", "up", "f" * 40], "is not in"),
        (["--source", f"up={tmp_path / 'nowhere'}", "pin", "up", "v2-light"], "cannot fetch from"),
        (["pin", "nope", "v1"], "repos.nope"),
    ]:
        code, _, err = run(capsys, "--lock", str(lock), *argv)
        (line,) = error_lines(err)
        assert code == 3 and expect in line, line
        assert lock.read_bytes() == before


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_interrupted_lock_rewrite_keeps_old_file(capsys: pytest.CaptureFixture[str], lock: Path, cache_dir: Path,
                                                 monkeypatch: pytest.MonkeyPatch, failure: BaseException) -> None:
    before = lock.read_bytes()

    def fail(src: object, dst: object) -> None:
        raise failure

    monkeypatch.setattr(os, "replace", fail)
    code, _, err = run(capsys, "--lock", str(lock), "pin", "up", "v2-light")
    assert code == (3 if isinstance(failure, OSError) else 130)
    (line,) = error_lines(err)
    assert ("lock is unchanged" if isinstance(failure, OSError) else "interrupted") in line
    assert lock.read_bytes() == before
    assert sorted(p.name for p in lock.parent.iterdir() if p.name.startswith(".repos.lock")) == []
