"""Attribution on the real Pi v0.82.1 snapshot: a system prompt whose working-directory line differs is traced
to `system-prompt.ts`, where the line is written, not to the example extensions or the error message that
hold the same words. The request is built here from our own words around the literal's words, which are read
from the snapshot at test time (nothing of the upstream prompt is kept in this repository)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import PI_V0_82_1, snapshot

from analyzer.analysis import analyze
from analyzer.api import open_session
from analyzer.index.build import index_repo
from analyzer.prefix.attribute import attribute
from analyzer.prefix.request_path import RequestPath
from analyzer.prefix.source_lookup import SourceLookup
from analyzer.prefix.structure import first_difference
from analyzer.sources.workspace import open_repo

pytestmark = pytest.mark.upstream

WRITER = "packages/coding-agent/src/core/system-prompt.ts"


@pytest.fixture(scope="module")
def pi(tmp_path_factory: pytest.TempPathFactory) -> tuple[SourceLookup, str]:
    git_dir = snapshot("at-inc+pi", PI_V0_82_1)
    source = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{PI_V0_82_1}:{WRITER}"],
                            capture_output=True, text=True, check=True).stdout
    # the words the line writes before the directory, as the template holds them (`\n` + words + `${…}`)
    found = re.search(r"prompt \+= `\\n([^`$]+)\$\{promptCwd\}`", source)
    assert found is not None, f"{WRITER} no longer appends the working directory the way this test expects"
    tmp = tmp_path_factory.mktemp("attribution-pi")
    lock = tmp / "repos.lock"
    lock.write_text(f'[repos.pi]\nurl = "{git_dir}"\ncommit = "{PI_V0_82_1}"\naliases = ["@mariozechner/pi-ai"]\n')
    ctx = open_session(lock, cache_dir=tmp / "cache", environ={})
    analysis = analyze(ctx)
    repo = open_repo(ctx, ctx.lock.repos["pi"], fetch=False)
    lookup = SourceLookup([index_repo(repo, PI_V0_82_1, repo_name="pi", cache=None)], {"pi": repo})
    lookup.request_path = RequestPath.build(analysis.view, lookup)
    return lookup, found.group(1)


def test_the_working_directory_line_is_attributed_to_the_system_prompt_builder(pi) -> None:
    lookup, words = pi
    ours = "A prompt of our own.\nIt has a few lines.\n"
    d = first_difference({"messages": [{"role": "system", "content": f"{ours}{words}{Path('/home/u/alpha')}"}]},
                         {"messages": [{"role": "system", "content": f"{ours}{words}{Path('/home/u/beta')}"}]})
    a = attribute(d, [], lookup)
    assert a.literal is not None and a.literal.path == WRITER
    fit = [w for w in a.writers if w.fits]
    assert len(fit) >= 2 and {w.site.path for w in fit} == {WRITER}      # the default and the custom branch
    assert all("in buildSystemPrompt, which returns the system prompt" in w.why for w in fit)
    later = [w for w in a.writers if not w.fits]
    assert later, "the other literals with the same words are listed after the writers"
    assert all(w.site.path != WRITER for w in later)
    # the error message with the same words ranks after the writers, and says why
    error = [w for w in later if w.site.path.endswith("session-cwd.ts")]
    assert error and "a message's argument" in error[0].why
    assert "2 writers fit equally" in a.source_lines()[1] or f"{len(fit)} writers fit equally" in a.source_lines()[1]


def test_the_default_branch_is_named_when_the_request_holds_what_that_branch_writes_before_the_line(pi) -> None:
    lookup, words = pi
    writers = [w.site for w in attribute(_request_diff(words, ""), [], lookup).writers if w.fits]
    assert len(writers) >= 2
    last = max(writers, key=lambda s: s.line)   # the default branch comes after the custom one in the function
    # the longest static piece the function writes before that line, read from the snapshot's literals
    pieces = [p for t in lookup.written_before(last, 60) for p in re.split(r"\$\{[^}]*\}", t)]
    earlier = max(pieces, key=len).replace("\\n", "\n")
    assert len(earlier) > 40
    a = attribute(_request_diff(words, earlier + "\n"), [], lookup)
    assert a.literal is not None and (a.literal.path, a.literal.line) == (WRITER, last.line)
    assert a.fitting == 1 and "what its function writes just before it" in a.writers[0].why


def _request_diff(words: str, earlier: str):
    ours = "A prompt of our own.\n"
    return first_difference(
        {"messages": [{"role": "system", "content": f"{ours}{earlier}{words}/home/u/alpha"}]},
        {"messages": [{"role": "system", "content": f"{ours}{earlier}{words}/home/u/beta"}]})
