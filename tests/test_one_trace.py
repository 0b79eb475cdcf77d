"""One trace: `trace`, `recheck`, `report` and the library resolve FROM/TO the same way, so they agree.

The fixture app defines `renderPrompt` twice: `src/prompt.ts` (called on the request path) and
`src/legacy/prompt.ts` (called by nothing on it, and first in name order, so picking "the first
definition" would pick the wrong one). The trace notes the ambiguity and uses the one on the path; the
re-check must compare that same definition, say so, and not call the path broken.
"""

from __future__ import annotations

from pathlib import Path

import git
import pytest
from recheck_fixtures import LIB_L1, LIB_L2_CHANGES, LIB_L4_CHANGES, _commit

from analyzer import api
from analyzer.cli import main
from analyzer.recheck import EXIT_BROKEN, EXIT_CHANGED

ON_PATH = "app:src/prompt.ts:renderPrompt"
LEGACY = "app:src/legacy/prompt.ts:renderPrompt"

APP_TWO_RENDERERS = {
    "package.json": '{"name": "app", "dependencies": {"@fx/lib": "1"}}\n',
    "src/prompt.ts": "export function renderPrompt(s: string): string {\n  return `<${s}>`;\n}\n",
    "src/legacy/prompt.ts": (
        "// kept for old callers; nothing on the request path calls it\n"
        "export function renderPrompt(lines: string[]): string {\n"
        "  return lines.join('\\n');\n"
        "}\n"
    ),
    "src/agent.ts": (
        'import { renderPrompt } from "./prompt.ts";\n'
        'import { send } from "@fx/lib";\n'
        "\n"
        "export class Agent {\n"
        "  step(input: string) {\n"
        "    const p = renderPrompt(input);\n"
        "    return this.finish(p);\n"
        "  }\n"
        "\n"
        "  finish(p: string) {\n"
        "    return send(p);\n"
        "  }\n"
        "}\n"
    ),
}

LOCK = """\
[repos.app]
url = "{app}"
commit = "{a}"

[repos.lib]
url = "{lib}"
commit = "{l}"

[trace]
from = "renderPrompt"
to = "parseUsage"
"""


@pytest.fixture(scope="module")
def upstreams(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    where = tmp_path_factory.mktemp("two-renderers")
    app = git.Repo.init(where / "app", initial_branch="main")
    a1 = _commit(app, where / "app", dict(APP_TWO_RENDERERS), "app with two renderPrompt")
    lib = git.Repo.init(where / "lib", initial_branch="main")
    l1 = _commit(lib, where / "lib", dict(LIB_L1), "L1")
    l2 = _commit(lib, where / "lib", LIB_L2_CHANGES, "L2: move and change parseUsage")
    lib.git.checkout("-q", "-b", "l4", l1)
    l4 = _commit(lib, where / "lib", LIB_L4_CHANGES, "L4: drop encode (no path)")
    lib.git.checkout("-q", "main")
    app.close()
    lib.close()
    return {"app": str(where / "app"), "lib": str(where / "lib"), "a1": a1, "l1": l1, "l2": l2, "l4": l4}


@pytest.fixture
def lock(tmp_path: Path, upstreams: dict[str, str], cache_dir: Path) -> Path:
    """The working lock at lib L2 (TO moved and changed since L1)."""
    path = tmp_path / "repos.lock"
    path.write_text(LOCK.format(app=upstreams["app"], a=upstreams["a1"], lib=upstreams["lib"], l=upstreams["l2"]))
    return path


def _run(lock: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """The command line (for what it prints and its exit code)."""
    code = main(["--lock", str(lock), *args])
    return code, capsys.readouterr().out


def _recheck(lock: Path, old_commit: str, out: Path, *names: str) -> api.RecheckResult:
    """The library's recheck against lib at `old_commit`."""
    options = api.RecheckOptions(*names, old_commits=[f"lib={old_commit}"], out=out)
    return api.recheck(api.open_session(lock), options)


def test_trace_notes_the_two_definitions_and_uses_the_one_on_the_path(lock: Path, capsys) -> None:
    traced = api.trace(api.open_session(lock), api.TraceOptions())
    doc = traced.document
    assert traced.found and doc["found"]
    assert doc["candidates"]["from"] == [LEGACY, ON_PATH]
    assert [h["node"] for h in doc["hops"] if h["branch"] == "from"] == [ON_PATH]
    code, text = _run(lock, capsys, "trace")
    assert code == 0 and "renderPrompt is ambiguous (2 definitions" in text and f"the path uses {ON_PATH}" in text


def test_recheck_on_an_ambiguous_name_compares_the_traced_definition(lock: Path, upstreams: dict[str, str],
                                                                    capsys, tmp_path: Path) -> None:
    checked = _recheck(lock, upstreams["l1"], tmp_path / "reports")
    result = checked.document
    assert checked.exit_code == EXIT_CHANGED != EXIT_BROKEN  # TO moved and changed; nothing broke
    assert not result["broken"]["at_new"] and result["old_path"]["found"] and result["new_path"]["found"]
    frm = result["endpoints"]["from"]
    assert frm["old"]["node"] == frm["new"]["node"] == ON_PATH and frm["changes"] == []
    assert frm["old_error"] is None and frm["new_error"] is None
    assert result["notes"] == [f"at both pin sets: renderPrompt is ambiguous (2 definitions: src/legacy/prompt.ts:"
                               f"renderPrompt; src/prompt.ts:renderPrompt); the path uses {ON_PATH}"]
    assert result["endpoints"]["to"]["changes"] == ["moved-file", "body-changed"]
    assert checked.report_path is not None
    assert "note: at both pin sets: renderPrompt is ambiguous" in checked.report_path.read_text()
    code, text = _run(lock, capsys, "recheck", "--from-commit", f"lib={upstreams['l1']}",
                      "--out", str(tmp_path / "reports"))
    assert code == EXIT_CHANGED and "note: at both pin sets: renderPrompt is ambiguous" in text


def test_with_a_path_at_one_pin_set_only_both_sides_compare_the_same_definition(
        lock: Path, upstreams: dict[str, str], tmp_path: Path) -> None:
    """At L4 no path exists; the old side must still compare the definition the new path uses (not the
    first candidate, which would report FROM as moved from src/legacy/prompt.ts with a changed body)."""
    result = _recheck(lock, upstreams["l4"], tmp_path / "reports").document
    assert result["exit_code"] == EXIT_CHANGED and not result["old_path"]["found"]
    frm = result["endpoints"]["from"]
    assert frm["old"]["node"] == frm["new"]["node"] == ON_PATH and frm["changes"] == []
    assert result["notes"] == [
        f"at the old pins: renderPrompt is ambiguous (2 definitions: src/legacy/prompt.ts:renderPrompt; "
        f"src/prompt.ts:renderPrompt); no path runs through any, {ON_PATH} is compared",
        f"at the new pins: renderPrompt is ambiguous (2 definitions: src/legacy/prompt.ts:renderPrompt; "
        f"src/prompt.ts:renderPrompt); the path uses {ON_PATH}"]


def test_the_library_trace_and_the_recheck_agree_hop_for_hop(lock: Path, upstreams: dict[str, str]) -> None:
    session = api.open_session(lock)
    traced = api.trace(session, api.TraceOptions())
    assert traced.found and traced.notes and ON_PATH in traced.notes[0]
    checked = api.recheck(session, api.RecheckOptions(old_commits=[f"lib={upstreams['l2']}"], write_report=False))
    assert checked.report_path is None and checked.exit_code == 0  # the same pins on both sides
    assert checked.document["new_path"]["hops"] == [h["node"] for h in traced.document["hops"]]
    assert checked.notes and ON_PATH in checked.notes[0]


def test_a_name_that_resolves_nowhere_is_still_a_broken_path(lock: Path, upstreams: dict[str, str],
                                                            tmp_path: Path) -> None:
    result = _recheck(lock, upstreams["l1"], tmp_path / "reports", "renderPrompt", "noSuchUsage").document
    assert result["exit_code"] == EXIT_BROKEN and "unknown symbol 'noSuchUsage'" in result["broken"]["where"]
    used = result["endpoints"]["from"]["new"]["node"]
    assert used in (LEGACY, ON_PATH) and result["endpoints"]["from"]["new_error"] is None  # resolved, not an error
    assert result["notes"] == [f"at both pin sets: renderPrompt is ambiguous (2 definitions: src/legacy/prompt.ts:"
                               f"renderPrompt; src/prompt.ts:renderPrompt); no path runs through any, {used} is "
                               "compared"]
