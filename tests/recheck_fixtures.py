"""Two small upstream monorepos with history, for report/annotation/recheck tests (written by hand).

`app` (the caller side, like dsh) has one commit. `lib` (like pi-ai) has four (L1-L3 tagged v1-v3):
  L1  Agent.step → renderPrompt (FROM branch); Agent.step → Agent.finish → send ─dispatch(named event)→
      handleSend → encode → parseUsage (TO) in src/old/usage.ts
  L2  (from L1) parseUsage moved to src/api/usage.ts with a changed body; send calls it directly, so
      handleSend/encode leave the path and the event rule stops matching; encode's body is unchanged but
      moved down one line; renderPrompt etc. unchanged
  L3  (from L2) parseUsage renamed to readUsage: TO is gone
  L4  (from L1) encode deleted; handleSend no longer calls anything: a hop vanished, the path breaks there
  L5  (from L1) only parseUsage's body changes: the same hops ("changed bodies")
  L6  (from L1) handleSend no longer calls encode (encode still defined): a call site removed
  L7  (from L1) the package is published as @fx2/lib: app's import of '@fx/lib' stops resolving
  L8  (from L1) the handler listens to another event name: send still emits, the dispatch rule lets go
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git
import networkx as nx

from analyzer.graph.build import build_graph
from analyzer.index.configs import read_configs
from analyzer.parse.extract import extract_facts
from analyzer.report.source import SourceReader
from analyzer.resolve.modules import RepoModules
from analyzer.resolve.program import Program, RepoInput
from analyzer.resolve.rules import load_rules

ACTOR = git.Actor("Fixture Author", "fixture@example.invalid")

APP = {
    "package.json": '{"name": "app", "dependencies": {"@fx/lib": "1"}}\n',
    "src/prompt.ts": "export function renderPrompt(s: string): string {\n  return `<${s}>`;\n}\n",
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

LIB_L1 = {
    "package.json": '{"name": "@fx/lib", "exports": {".": "./src/index.ts"}}\n',
    "src/index.ts": 'export { send } from "./send.ts";\n',
    "src/send.ts": (
        'import { bus } from "nodebus";\n'
        "\n"
        "export function send(p: string) {\n"
        '  return bus.emit("lib/send", p);\n'
        "}\n"
    ),
    "src/handlers.ts": (
        'import { bus } from "nodebus";\n'
        'import { encode } from "./encode.ts";\n'
        "\n"
        "export function handleSend(p: string) {\n"
        "  return encode(p);\n"
        "}\n"
        "\n"
        'bus.on("lib/send", handleSend);\n'
    ),
    "src/encode.ts": (
        'import { parseUsage } from "./old/usage.ts";\n'
        "\n"
        "export function encode(p: string) {\n"
        "  return parseUsage(p.trim());\n"
        "}\n"
    ),
    "src/old/usage.ts": "export function parseUsage(x: string) {\n  return x.length;\n}\n",
}

LIB_L2_CHANGES: dict[str, str | None] = {
    "src/old/usage.ts": None,
    "src/api/usage.ts": (
        "// usage now counts words\n"
        "export function parseUsage(x: string) {\n"
        "  const words = x.split(' ');\n"
        "  return words.length;\n"
        "}\n"
    ),
    "src/send.ts": (
        'import { parseUsage } from "./api/usage.ts";\n'
        "\n"
        "export function send(p: string) {\n"
        "  return parseUsage(p);\n"
        "}\n"
    ),
    "src/encode.ts": (
        'import { parseUsage } from "./api/usage.ts";\n'
        "\n"
        "// the body below is unchanged; only its line moved\n"
        "export function encode(p: string) {\n"
        "  return parseUsage(p.trim());\n"
        "}\n"
    ),
}

LIB_L3_CHANGES: dict[str, str | None] = {
    "src/api/usage.ts": "export function readUsage(x: string) {\n  return x.split(' ').length;\n}\n",
    "src/send.ts": (
        'import { readUsage } from "./api/usage.ts";\n'
        "\n"
        "export function send(p: string) {\n"
        "  return readUsage(p);\n"
        "}\n"
    ),
    "src/encode.ts": (
        'import { readUsage } from "./api/usage.ts";\n'
        "\n"
        "export function encode(p: string) {\n"
        "  return readUsage(p.trim());\n"
        "}\n"
    ),
}

LIB_L4_CHANGES: dict[str, str | None] = {
    "src/encode.ts": None,
    "src/handlers.ts": (
        'import { bus } from "nodebus";\n'
        "\n"
        "export function handleSend(p: string) {\n"
        "  return p;\n"
        "}\n"
        "\n"
        'bus.on("lib/send", handleSend);\n'
    ),
}


LIB_L5_CHANGES: dict[str, str | None] = {
    "src/old/usage.ts": "export function parseUsage(x: string) {\n  return x.trim().length;\n}\n",
}

LIB_L6_CHANGES: dict[str, str | None] = {
    "src/handlers.ts": (
        'import { bus } from "nodebus";\n'
        'import { encode } from "./encode.ts";\n'
        "\n"
        "export function handleSend(p: string) {\n"
        "  return p;\n"
        "}\n"
        "\n"
        'bus.on("lib/send", handleSend);\n'
        "export const unused = encode;\n"
    ),
}

LIB_L7_CHANGES: dict[str, str | None] = {
    "package.json": '{"name": "@fx2/lib", "exports": {".": "./src/index.ts"}}\n',
}


LIB_L8_CHANGES: dict[str, str | None] = {
    "src/handlers.ts": LIB_L1["src/handlers.ts"].replace('"lib/send"', '"lib/sent"'),
}


@dataclass
class Upstreams:
    app: Path
    lib: Path
    a1: str
    l1: str
    l2: str
    l3: str
    l4: str
    l5: str = ""
    l6: str = ""
    l7: str = ""
    l8: str = ""

    def path(self, name: str) -> Path:
        return {"app": self.app, "lib": self.lib}[name]


def _commit(repo: git.Repo, root: Path, changes: dict[str, str | None], message: str) -> str:
    for rel, text in changes.items():
        f = root / rel
        if text is None:
            repo.index.remove([rel], working_tree=True)
            continue
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
        repo.index.add([rel])
    return repo.index.commit(message, author=ACTOR, committer=ACTOR).hexsha


def make_upstreams(where: Path) -> Upstreams:
    app_dir, lib_dir = where / "app", where / "lib"
    app = git.Repo.init(app_dir, initial_branch="main")
    a1 = _commit(app, app_dir, dict(APP), "app")
    lib = git.Repo.init(lib_dir, initial_branch="main")
    l1 = _commit(lib, lib_dir, dict(LIB_L1), "L1")
    lib.create_tag("v1", ref=l1)
    l2 = _commit(lib, lib_dir, LIB_L2_CHANGES, "L2: move and change parseUsage")
    lib.create_tag("v2", ref=l2)
    l3 = _commit(lib, lib_dir, LIB_L3_CHANGES, "L3: rename parseUsage")
    lib.create_tag("v3", ref=l3)
    lib.git.checkout("-q", "-b", "l4", l1)
    l4 = _commit(lib, lib_dir, LIB_L4_CHANGES, "L4: drop encode")
    side = {}
    for name, changes in (("l5", LIB_L5_CHANGES), ("l6", LIB_L6_CHANGES), ("l7", LIB_L7_CHANGES),
                            ("l8", LIB_L8_CHANGES)):
        lib.git.checkout("-q", "-B", name, l1)
        side[name] = _commit(lib, lib_dir, changes, name.upper())
    lib.git.checkout("-q", "main")
    app.close()
    lib.close()
    return Upstreams(app_dir, lib_dir, a1, l1, l2, l3, l4, **side)


def graph_at(up: Upstreams, commits: dict[str, str],
             aliases: dict[str, tuple[str, ...]] | None = None) -> nx.MultiDiGraph:
    """The call graph at these commits, built straight from extraction (no sources/index cache involved);
    `aliases` are the lock's package aliases per repo."""
    inputs = []
    for name, commit in commits.items():
        repo = git.Repo(up.path(name))
        tree = repo.commit(commit).tree
        facts = [extract_facts(b.data_stream.read(), b.path) for b in tree.traverse()
                 if b.type == "blob" and b.path.endswith(".ts")]
        inputs.append(RepoInput(name, commit, facts,
                                RepoModules(name, {f.path for f in facts}, read_configs(repo, commit),
                                            (aliases or {}).get(name, ()))))
        repo.close()
    return build_graph(Program(inputs), load_rules())


def pins_json(up: Upstreams, commits: dict[str, str]) -> dict[str, dict]:
    return {name: {"commit": c, "ref": None, "url": str(up.path(name))} for name, c in commits.items()}


def reader(up: Upstreams) -> SourceReader:
    return SourceReader(lambda name: git.Repo(up.path(name)))


LOCK = """\
# fixture lock
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


def write_lock(path: Path, up: Upstreams, lib_commit: str) -> Path:
    path.write_text(LOCK.format(app=up.app, a=up.a1, lib=up.lib, l=lib_commit))
    return path
