"""Small real upstream repositories for the source tests, built with GitPython in a tmp dir.

History of the upstream (branch `main` unless noted):
  c0 "start"         (no ref points here: only reachable through history)
  c1 "add greeting"  <- annotated tag v1
  c2 "add farewell"  <- lightweight tag v2-light, main
  c3 "work on dev"   <- branch dev (child of c2)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git

ACTOR = git.Actor("Fixture Author", "fixture@example.invalid")


@dataclass
class Upstream:
    path: Path
    repo: git.Repo
    c0: str
    c1: str
    c2: str
    c3: str

    def commit_file(self, name: str, text: str, message: str) -> str:
        (self.path / name).parent.mkdir(parents=True, exist_ok=True)
        (self.path / name).write_text(text)
        self.repo.index.add([name])
        return self.repo.index.commit(message, author=ACTOR, committer=ACTOR).hexsha


def make_upstream(where: Path) -> Upstream:
    repo = git.Repo.init(where, initial_branch="main")
    up = Upstream(where, repo, "", "", "", "")
    up.c0 = up.commit_file("README.md", "# fixture\n", "start")
    up.c1 = up.commit_file("src/greet.ts", "export const greet = (n: string) => `hi ${n}`;\n", "add greeting")
    repo.create_tag("v1", ref=up.c1, message="release v1")
    up.c2 = up.commit_file("src/bye.ts", "export const bye = 1;\n", "add farewell")
    repo.create_tag("v2-light", ref=up.c2)
    repo.git.checkout("-q", "-b", "dev")
    up.c3 = up.commit_file("src/dev.ts", "export const dev = true;\n", "work on dev")
    repo.git.checkout("-q", "main")
    return up


def move_tag(up: Upstream, tag: str, commit: str) -> None:
    """Re-point an annotated tag upstream (what a careless force-push of a tag does)."""
    up.repo.git.tag("-f", "-a", "-m", f"moved {tag}", tag, commit)


LOCK_TEMPLATE = """\
# fixture lock: comments must survive a pin
[repos.up]   # the upstream under test
url = "{url}"
ref = "{ref}"   # release tag
commit = "{commit}"
aliases = ["@fixture/up"]

# a second upstream that pinning 'up' must not touch
[repos.other]
url = "https://example.invalid/other"
commit = "{other}"

[trace]
from = "A"
to = "B"
"""


def write_lock(path: Path, url: str, ref: str | None, commit: str, other: str = "1" * 40) -> Path:
    text = LOCK_TEMPLATE.format(url=url, ref=ref or "", commit=commit, other=other)
    if ref is None:
        text = text.replace('ref = ""   # release tag\n', "")
    path.write_text(text)
    return path
