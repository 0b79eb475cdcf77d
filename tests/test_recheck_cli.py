"""The commands end to end on fixture upstreams: report, annotate, recheck and bump (real sync + index). What a
re-check finds is asserted on `analyzer.api.recheck`'s document; the `recheck` command for its text, `--json`,
exit codes and errors."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from recheck_fixtures import Upstreams, make_upstreams, write_lock

from analyzer.api import RecheckOptions, RecheckResult, open_session, recheck
from analyzer.cli import main
from analyzer.errors import AnalyzerError


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Upstreams:
    return make_upstreams(tmp_path_factory.mktemp("upstreams"))


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def project(tmp_path: Path, up: Upstreams, cache_dir: Path) -> Path:
    """A project folder under git with repos.lock committed at lib L1."""
    proj = tmp_path / "proj"
    proj.mkdir()
    git(proj, "init", "-q", "-b", "main")
    write_lock(proj / "repos.lock", up, up.l1)
    git(proj, "add", "repos.lock")
    git(proj, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "lock")
    return proj


def analyze(project: Path, *args: str) -> int:
    return main(["--lock", str(project / "repos.lock"), *args])


def test_report_writes_three_files(project: Path, up: Upstreams, capsys: pytest.CaptureFixture[str]) -> None:
    assert analyze(project, "report") == 0
    out = project / "reports" / f"{up.a1[:10]}_{up.l1[:10]}"
    assert sorted(p.name for p in out.iterdir()) == ["trace.html", "trace.json", "trace.md"]
    assert "7 hops" in capsys.readouterr().out
    md = (out / "trace.md").read_text()
    assert "## 7. `parseUsage`" in md and "src/old/usage.ts" in md


def test_a_note_records_commit_and_body_hash_and_is_anchored_at_other_pins(project: Path, up: Upstreams) -> None:
    from analyzer.api.annotations import annotate, notes

    def session():  # the lock as it is on disk now
        return open_session(project / "repos.lock", environ={})

    first = annotate(session(), "parseUsage", "counts characters")
    assert first.action == "added" and first.file == project / "reports" / "annotations.toml"
    assert (first.note.repo, first.note.path, first.note.commit, first.line) == ("lib", "src/old/usage.ts", up.l1, 1)
    assert first.note.body_hash
    assert annotate(session(), "parseUsage", "counts the characters of the chunk").action == "updated"
    data = tomllib.loads(first.file.read_text())
    assert [(n["symbol"], n["text"]) for n in data["note"]] == [("parseUsage", "counts the characters of the chunk")]
    (now,) = notes(session()).anchored
    assert (now.status, now.path, now.line, now.moved) == ("ok", "src/old/usage.ts", 1, False)
    write_lock(project / "repos.lock", up, up.l2)
    (later,) = notes(session()).anchored
    assert (later.status, later.path, later.moved) == ("stale", "src/api/usage.ts", True)
    with pytest.raises(AnalyzerError, match="the note text is empty"):
        annotate(session(), "parseUsage", "  ")


def test_annotate_records_commit_and_body_hash(project: Path, up: Upstreams,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert analyze(project, "annotate", "parseUsage", "counts characters") == 0
    assert analyze(project, "annotate", "Agent.step", "the anchor") == 0
    assert analyze(project, "annotate", "parseUsage", "counts the characters of the chunk") == 0
    data = tomllib.loads((project / "reports" / "annotations.toml").read_text())
    notes = {n["symbol"]: n for n in data["note"]}
    assert set(notes) == {"parseUsage", "Agent.step"}
    p = notes["parseUsage"]
    assert (p["repo"], p["path"], p["commit"], p["text"]) == ("lib", "src/old/usage.ts", up.l1,
                                                               "counts the characters of the chunk")
    capsys.readouterr()
    assert analyze(project, "annotate") == 0
    listing = capsys.readouterr().out
    assert "ok        lib:parseUsage  src/old/usage.ts:1" in listing
    # the report shows the note as current; at L2 as stale and moved
    write_lock(project / "repos.lock", up, up.l2)
    assert analyze(project, "annotate") == 0
    assert "stale     lib:parseUsage  src/api/usage.ts:2  (moved)" in capsys.readouterr().out
    assert analyze(project, "report") == 0
    md = (project / "reports" / f"{up.a1[:10]}_{up.l2[:10]}" / "trace.md").read_text()
    assert "**STALE**" in md and "+  return words.length;" in md


def test_annotate_errors_are_one_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert analyze(project, "annotate", "NoSuchThing", "x") == 3
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith(("indexing ", "resolving "))]
    assert len(err) == 1 and err[0].startswith("error: unknown symbol 'NoSuchThing'")  # (after the build's stage lines)
    assert analyze(project, "annotate", "parseUsage") == 3
    assert "needs TEXT" in capsys.readouterr().err
    assert not (project / "reports" / "annotations.toml").exists()


def check(project: Path, **options: object) -> RecheckResult:
    """`api.recheck` on the project's working lock (the cache is the test's `cache_dir`)."""
    return recheck(open_session(project / "repos.lock", environ={}), RecheckOptions(**options))  # type: ignore[arg-type]


def test_recheck_verdicts_and_report_file(project: Path, up: Upstreams) -> None:
    same = check(project)  # working lock == committed lock
    assert same.exit_code == 0 and same.document["path_change"] == "unchanged" and same.document["reasons"] == []
    write_lock(project / "repos.lock", up, up.l2)
    moved = check(project)
    assert moved.exit_code == 1 and moved.document["path_change"] == "rerouted"
    reasons = moved.document["reasons"]
    assert "TO parseUsage: moved from src/old/usage.ts:1 to src/api/usage.ts:2; body changed" in reasons
    report = project / "reports" / f"recheck_{up.a1[:8]}-{up.l1[:8]}_{up.a1[:8]}-{up.l2[:8]}.md"
    assert moved.report_path == report and "## Hops" in report.read_text()
    write_lock(project / "repos.lock", up, up.l3)
    broken = check(project, write_report=False)
    assert broken.exit_code == 2 and broken.report_path is None and broken.document["broken"]["at_new"] is True
    assert broken.document["broken"]["where"].startswith("TO not found at the new pins")
    assert check(project, old_commits=[f"lib={up.l3}"], write_report=False).exit_code == 2  # broken at both
    # old pins = the working lock with lib moved; or the lock at a git revision
    write_lock(project / "repos.lock", up, up.l2)
    assert check(project, old_commits=[f"lib={up.l2}"], write_report=False).exit_code == 0
    assert check(project, old_from="HEAD", write_report=False).exit_code == 1


def test_recheck_exit_codes_and_text(project: Path, up: Upstreams, capsys: pytest.CaptureFixture[str]) -> None:
    assert analyze(project, "recheck") == 0
    assert "unchanged — exit 0: the same hops in the same order" in capsys.readouterr().out
    write_lock(project / "repos.lock", up, up.l2)
    assert analyze(project, "recheck") == 1
    out = capsys.readouterr().out
    assert "TO parseUsage: moved from src/old/usage.ts:1 to src/api/usage.ts:2; body changed" in out
    assert f"recheck_{up.a1[:8]}-{up.l1[:8]}_{up.a1[:8]}-{up.l2[:8]}.md" in out
    write_lock(project / "repos.lock", up, up.l3)
    assert analyze(project, "recheck") == 2
    assert "broken: TO not found at the new pins" in capsys.readouterr().out
    write_lock(project / "repos.lock", up, up.l2)
    assert analyze(project, "--json", "recheck", "--from", "HEAD") == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_code"] == 1 and doc["report"].endswith(".md")


def test_recheck_bad_from_is_one_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert analyze(project, "recheck", "--from", "nope-rev") == 3
    assert capsys.readouterr().err.startswith("error: cannot read repos.lock at git revision 'nope-rev'")


def test_missing_files_named_on_the_command_line_are_errors(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gone = project / "old.lock"
    assert analyze(project, "recheck", "--from", str(gone)) == 3
    assert capsys.readouterr().err.startswith(f"error: --from {gone}: the file {gone} is missing")
    notes = project / "no-such-notes.toml"
    for command in ("report", "recheck"):
        assert analyze(project, command, "--annotations", str(notes)) == 3
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith(f"error: --annotations {notes}: the file is missing"), line


def test_bump_pins_and_rechecks(project: Path, up: Upstreams, capsys: pytest.CaptureFixture[str]) -> None:
    assert analyze(project, "bump", "lib", "v2") == 1
    data = tomllib.loads((project / "repos.lock").read_text())
    assert data["repos"]["lib"]["commit"] == up.l2 and data["repos"]["lib"]["ref"] == "v2"
    assert (project / "reports" / f"recheck_{up.a1[:8]}-{up.l1[:8]}_{up.a1[:8]}-{up.l2[:8]}.md").exists()
    assert "# fixture lock" in (project / "repos.lock").read_text()  # comments survive


def test_bump_leaves_the_lock_alone_when_the_ref_is_unknown(project: Path) -> None:
    before = (project / "repos.lock").read_bytes()
    assert analyze(project, "bump", "lib", "v99") == 3
    assert (project / "repos.lock").read_bytes() == before


def test_bump_leaves_the_lock_alone_when_indexing_fails(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    before = (project / "repos.lock").read_bytes()

    def broken_index(*args: object, **kwargs: object) -> None:
        raise RuntimeError("extractor crashed")

    monkeypatch.setattr("analyzer.analysis.analyze", broken_index)  # bump imports it when it runs
    assert analyze(project, "bump", "lib", "v2") == 3
    assert "could not be indexed (RuntimeError: extractor crashed)" in capsys.readouterr().err
    assert (project / "repos.lock").read_bytes() == before


def test_recheck_parses_only_changed_blobs(project: Path, up: Upstreams) -> None:
    write_lock(project / "repos.lock", up, up.l2)
    index = check(project, write_report=False).document["index"]
    assert index["old"]["lib"]["parsed"] == index["old"]["lib"]["files"] == 5  # cold cache: everything at L1
    assert index["new"]["app"]["parsed"] == 0  # app did not move
    assert (index["new"]["lib"]["files"], index["new"]["lib"]["parsed"]) == (5, 3)  # usage, send, encode changed


def test_pin_warns_when_the_trace_ends_no_longer_exist(project: Path, up: Upstreams,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert analyze(project, "pin", "lib", "v2") == 0
    assert "warning" not in capsys.readouterr().err  # parseUsage moved but still exists
    assert analyze(project, "pin", "lib", "v3") == 0
    err = capsys.readouterr().err
    assert f"warning: [trace] to = 'parseUsage' no longer exists at lib {up.l3[:12]}: unknown symbol 'parseUsage'" \
        in err and "readUsage" in err
    assert tomllib.loads((project / "repos.lock").read_text())["repos"]["lib"]["commit"] == up.l3  # still pinned


def test_the_cause_and_the_lock_fix_are_named(project: Path, up: Upstreams) -> None:
    write_lock(project / "repos.lock", up, up.l7)
    done = check(project, write_report=False)
    cause = done.document["cause"]
    assert done.exit_code == 2 and cause["kind"] == "import-unresolved" and cause["specifier"] == "@fx/lib"
    assert cause["text"].startswith("the import of '@fx/lib' at app:src/agent.ts:2 no longer resolves to lib")
    assert cause["aliases_fix"] == 'aliases = ["@fx/lib"]' and cause["fix_restores_edge"] is True


def test_summary_names_the_cause_and_the_lock_fix(project: Path, up: Upstreams,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    write_lock(project / "repos.lock", up, up.l7)
    assert analyze(project, "recheck") == 2
    out = capsys.readouterr().out
    assert "broken — exit 2: no path at the new pins" in out
    assert "cause: the import of '@fx/lib' at app:src/agent.ts:2 no longer resolves to lib" in out
    assert 'fix: in [repos.lib] of the lock set aliases = ["@fx/lib"]' in out
