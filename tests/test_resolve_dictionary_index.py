"""`tree.store[id]` with a variable key on a dictionary type is an element: `Record<string, Entry>`, an index
signature, or a generic alias of one (`type Dict<T = any, K extends string = string> = { [key in K]: T }`,
expanded with the use's arguments). Also through a method that returns such an element. Written shapes only."""

from __future__ import annotations

import textwrap

from analyzer.graph.build import build_graph
from analyzer.index.configs import RepoConfigs
from analyzer.parse.extract import extract_facts
from analyzer.resolve.modules import RepoModules
from analyzer.resolve.program import Program, RepoInput
from analyzer.resolve.rules import load_rules

FILES = {
    "src/misc.ts": """
        export type Dict<T = any, K extends string = string> = { [key in K]: T }
        export type Labels<T> = { [key: string]: Label }
        export class Label { show(): void {} }
        """,
    "src/entry.ts": """
        export class Entry { start(): void {} }
        """,
    "src/tree.ts": """
        import { Dict, Labels } from './misc.ts'
        import { Entry } from './entry.ts'
        export class Tree {
          store: Dict<Entry> = Object.create(null)
          byName: Record<string, Entry> = {}
          labels: Labels<Entry> = {}
          resolve(id: string) {
            const entry = this.store[id]
            return entry
          }
          run(id: string, name: string) {
            this.store[id].start()
            this.byName[name].start()
            this.labels[name].show()
            this.resolve(id).start()
          }
        }
        """,
}


def _edges() -> dict[int, set[tuple[str, str]]]:
    facts = [extract_facts(textwrap.dedent(src).encode(), path) for path, src in FILES.items()]
    mods = RepoModules("app", set(FILES), RepoConfigs(), ())
    g = build_graph(Program([RepoInput("app", "0" * 40, facts, mods)]), load_rules())
    out: dict[int, set[tuple[str, str]]] = {}
    for _u, v, d in g.out_edges("app:src/tree.ts:Tree.run", data=True):
        if d["kind"] != "name":
            out.setdefault(d["line"], set()).add((d["kind"], v.split(":", 1)[1]))
    return out


def test_variable_key_on_a_generic_dictionary_alias_is_its_argument() -> None:
    assert _edges().get(13) == {("method", "src/entry.ts:Entry.start")}  # Dict<Entry>: T = Entry


def test_variable_key_on_record_is_its_value() -> None:
    assert _edges().get(14) == {("method", "src/entry.ts:Entry.start")}


def test_alias_value_not_a_type_parameter_resolves_where_the_alias_is() -> None:
    assert _edges().get(15) == {("method", "src/misc.ts:Label.show")}  # Labels<Entry> holds Labels, not T


def test_method_returning_a_dictionary_element() -> None:
    assert _edges().get(16) == {("method", "src/tree.ts:Tree.resolve"), ("method", "src/entry.ts:Entry.start")}
