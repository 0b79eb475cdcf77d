"""Implicit construction: a class without a constructor of its own still runs its base's.

TypeScript gives `class B extends A {}` the constructor `constructor(...args) { super(...args) }`. `new B()`
already reaches the class node `B` (which owns B's field initialisers); this module adds the hidden step
from `B` to what that implicit `super(…)` runs — `A.constructor`, or the class node `A` when A has no
constructor either (A's field initialisers, and A's own implicit step onward). The edges are `direct`:
the base is named statically by `extends`.
"""

from __future__ import annotations

from analyzer.resolve.edges import Edge
from analyzer.resolve.program import DefRef, Program
from analyzer.resolve.receivers import Types


def implicit_constructor_edges(program: Program, types: Types) -> list[Edge]:
    edges: list[Edge] = []
    for ref, d in program.defs.items():
        if d.kind != "class" or not d.extends:
            continue
        if any(c.kind == "constructor" for c in program.children(ref)):
            continue
        text = d.extends[0]
        where = f"{ref.path}:{d.line}"
        for sup in types.decls.resolve_text(ref.module, text, f"{where}: class {d.name} extends {text}"):
            if program.defs[sup.ref].kind != "class":
                continue
            ctor = next((c for c in program.children(sup.ref) if c.kind == "constructor"), None)
            target = DefRef(sup.ref.repo, sup.ref.path, ctor.qualname) if ctor is not None else sup.ref
            edges.append(Edge(source=ref.node_id, target=target.node_id, kind="direct", line=d.line, path=ref.path,
                              repo=ref.repo, call_text="super",
                              evidence=[f"{where}: class {d.name} has no constructor: its implicit constructor "
                                        f"calls super(…)", *sup.evidence]))
    return edges
