"""Which function a rule's bare function name means: the one other modules call by that name.

A sink rule names functions by their bare names (`renderPrompt`, `buildParams`). A module may define its
own function of the same name that nothing outside the module can call — not exported, or nested in
another function — and that does something else (a session-reference module's `renderPrompt` renders a
user message, while the system prompt's `renderPrompt` is the exported one of the prompt package). Calls
inside that module resolve to the local definition, so the rule's name does not mean it: when the
repository also has a shared function of that name (exported, or a method reached through its object), the
local one is not the rule's function. A repository whose only function of the name is local keeps it as
the rule's function (nothing else could be meant).
"""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx

from analyzer.hazards.rules import HazardRules, glob_match

_MODULE_FUNCTIONS = frozenset({"function"})  # kinds a module can keep to itself (methods go with their object)


def is_local(graph: nx.MultiDiGraph, node: str, exported: set[str]) -> bool:
    """A function no other module can call by its name: nested in a function, or a module-level function
    that is neither declared with `export` nor named in the file's export lists (`exported`)."""
    a = graph.nodes[node]
    parent = a.get("parent")
    if parent and graph.nodes.get(parent, {}).get("kind") not in (None, "class", "interface"):
        return True  # nested in a function (or an object literal's method): never reachable by name outside
    return a.get("kind") in _MODULE_FUNCTIONS and not parent and not a.get("exported") \
        and a.get("name", "") not in exported


def shadowing_locals(graph: nx.MultiDiGraph, rules: HazardRules, functions: Iterable[str],
                     exported: dict[tuple[str, str], set[str]]) -> set[str]:
    """The local functions among `functions` whose bare name a named sink rule ([[returns]], [[property]]
    with named functions) matches while their repository has a shared function of the same name.
    `exported`: (repo, path) → the local names a file's export lists export."""
    named = [s for s in rules.sinks if s.kind in ("returns", "property") and "*" not in s.functions]
    if not named:
        return set()
    local: dict[tuple[str, str], list[str]] = {}  # (repo, name) → local functions of that name
    shared: set[tuple[str, str]] = set()
    for n in functions:
        a = graph.nodes[n]
        name = a.get("name", "")
        if not name or not any(glob_match(name, s.functions) for s in named):
            continue
        key = (a["repo"], name)
        if is_local(graph, n, exported.get((a["repo"], a["path"]), set())):
            local.setdefault(key, []).append(n)
        else:
            shared.add(key)
    return {n for key, nodes in local.items() if key in shared for n in nodes}
