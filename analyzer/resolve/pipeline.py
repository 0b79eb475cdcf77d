"""The resolver pipeline: from a `Program` and the rules to every edge of the call graph, in order.

The one place that assembles the resolver stack (symbols → types → calls → dispatch rules) and runs its
passes in the order they depend on each other: every file's calls (in forked workers when asked, see
`analyzer.resolve.parallel`), then the whole-program rules (events, lazy loaders, callback objects,
tables), implicit constructor calls, and last the calls of function values — what runs there is what the
callers pass, so that pass reads the edges found before it. `analyzer.graph.build` only turns the result
into a graph; nothing here knows about networkx.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from analyzer.resolve.calls import CallResolver
from analyzer.resolve.construct import implicit_constructor_edges
from analyzer.resolve.edges import Edge
from analyzer.resolve.functionvalues import FunctionValues
from analyzer.resolve.parallel import Unresolved, resolve_all
from analyzer.resolve.program import Program
from analyzer.resolve.receivers import Types
from analyzer.resolve.rules import DispatchEngine, RuleSet
from analyzer.resolve.symbols import SymbolResolver


@dataclass
class Resolved:
    """Everything the passes found: edges in pass order, the calls left unbound, calls into external
    packages (by package) and how often each rule matched."""

    edges: list[Edge]
    unresolved: list[Unresolved]
    external_calls: Counter[str]
    rule_matches: dict[str, int]


def resolve_program(program: Program, rules: RuleSet, workers: int) -> Resolved:
    """Run every resolver pass over `program`; `workers` > 1 resolves files in that many forked processes.

    The resolvers and their memo tables live only in this call: they are freed on return, before the
    caller builds the graph (the build runs with the cyclic GC paused, so nothing here may form a cycle)."""
    symbols = SymbolResolver(program)
    types = Types(program, symbols, rules.identity_wrappers)
    try:
        calls = CallResolver(program, symbols, types, no_guess=rules.no_guess,
                             global_receivers=rules.global_receivers)
        engine = DispatchEngine(program, symbols, types, calls, rules)
        edges, unresolved, external_calls = resolve_all(calls, engine, list(program.files), workers)
        edges.extend(engine.global_edges())
        edges.extend(implicit_constructor_edges(program, types))
        edges.extend(_function_value_edges(program, symbols, types, calls, rules, edges, engine.matches))
    finally:
        types.release()  # the typing parts refer to each other; this breaks the cycle (see receivers.py)
    return Resolved(edges, unresolved, external_calls, engine.matches)


def _function_value_edges(program: Program, symbols: SymbolResolver, types: Types, calls: CallResolver,
                          rules: RuleSet, edges: list[Edge], matches: dict[str, int]) -> list[Edge]:
    """Calls of function-typed values (parameters, option properties, assigned fields), one pass per
    `function_values` rule (see `analyzer.resolve.functionvalues`); counts each rule's matches into `matches`."""
    out: list[Edge] = []
    for rule in rules.function_values:
        found, count = FunctionValues(program, symbols, types, calls, rule, rules.events,
                                      {r["name"] for r in rules.services}).edges(edges)
        out.extend(found)
        matches[rule["name"]] += count
    return out


__all__ = ["Resolved", "resolve_program"]
