"""Control dependence: a volatile test that selects which of two values is sent.

`if (Date.now() > expiresAt) x = a; else x = b`, `probe() ? a : b`, `try { x = await fetch() } catch { x = b }`,
`if (expired) return a; … return b`: neither alternative is volatile, the choice is. The walker (flow.py)
asks this module whether a condition or a `catch` is a volatile test ([[control]] rules, control.toml)
and, when it is, gives the selected value one more flow: an origin of the test's rule at the test's line
that names the alternatives (their lines and texts). That flow is then followed like any other (returns,
arguments, fields, sinks), so a finding of kind `control` cites the test and each alternative.

Alternatives with the same text select nothing, and a test whose tested value already flows into the
alternatives (`cwd ? \\`Dir: ${cwd}\\` : ""`) is that value's own finding, not a second one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from tree_sitter import Node

from analyzer.hazards.configuration import FlowConfiguration
from analyzer.hazards.rules import Control, glob_match
from analyzer.hazards.syntax import FUNCTION_NODES, ParsedFile
from analyzer.hazards.taints import Flow, Origin, Step, Taints, norm, stepped, union


class FunctionFlow(Protocol):
    """What this module reads of the body walker (`flow.FunctionFlow`)."""

    config: FlowConfiguration
    pf: ParsedFile
    fn: Node
    info: Any
    env: dict[str, Taints]
    returned_at: dict[int, Taints]

    def text(self, node: Node, limit: int = 80) -> str: ...
    def line(self, node: Node) -> int: ...
    def step(self, node: Node, why: str, rule: str = "") -> Step: ...
    def kind(self, origin: Origin) -> str | None: ...
    def imported_name(self, callee: str) -> str: ...

_WS = re.compile(r"\s+")
_SCOPES = FUNCTION_NODES | {"class_declaration", "class", "abstract_class_declaration"}


@dataclass(frozen=True)
class Test:
    rule: Control
    node: Node  # the condition, or the `try` statement
    text: str
    tested: str = ""  # the tested source rule ("" for a catch or a probe)
    origins: frozenset[Origin] = frozenset()  # the tested flows' origins
    names: frozenset[str] = frozenset()  # the condition's names and members that hold them


# ---- recognising a test ----------------------------------------------------------------------------
def condition_test(w: FunctionFlow, cond: Node | None, cond_t: Taints) -> Test | None:
    """The [[control]] rule a condition matches: it carries a source of a listed kind, or it calls a probe."""
    if cond is None or not w.config.controls:
        return None
    text = w.text(_bare(cond), 60)
    for rule in w.config.controls:
        if rule.source_kinds:
            tested = sorted((o for o in cond_t if o.kind == "source" and w.kind(o) in rule.source_kinds),
                            key=lambda o: (o.line, o.text))
            if tested:
                return Test(rule, cond, text, tested[0].rule, frozenset(tested), _holding(w, cond, set(tested)))
        if rule.probe_calls and _mentions(w, cond, rule.probe_calls) \
                and any(_matches(w, call, rule.probe_calls) for call in _calls(cond)):
            return Test(rule, cond, text)
    return None


def catch_test(w: FunctionFlow, node: Node) -> Test | None:
    """A `try` whose block calls a [[control]] catch call, with a `catch` that can pick another value."""
    body, handler = node.child_by_field_name("body"), node.child_by_field_name("handler")
    if body is None or handler is None:
        return None
    for rule in w.config.controls:
        if not rule.catch_calls or not _mentions(w, body, rule.catch_calls):
            continue
        # with `in_callbacks`, also a call inside a callback handed to a call of the block (it runs, and
        # throws, while that call does)
        for call in (_calls_in_callbacks(body) if rule.in_callbacks else _calls(body)):
            if _matches(w, call, rule.catch_calls):
                fn = call.child_by_field_name("function")
                return Test(rule, node, f"catch of {w.text(fn, 40) if fn is not None else 'a call'}()")
    return None


def _holding(w: FunctionFlow, cond: Node, origins: set[Origin]) -> frozenset[str]:
    """The names (`envDir`) and member texts (`process.env.X`) of a condition that hold a tested value."""
    out = set()
    for n in _walk(cond):
        if n.type == "identifier" and origins & set(w.env.get(w.pf.text(n), {})):
            out.add(w.pf.text(n))
        elif n.type == "member_expression" and any(o.line == w.line(n) and o.text == w.text(n) for o in origins):
            out.add(norm(w.pf.text(n)))
    return frozenset(out)


def _uses(w: FunctionFlow, node: Node | None, names: frozenset[str]) -> bool:
    return node is not None and bool(names) and any(
        (n.type == "identifier" and w.pf.text(n) in names)
        or (n.type == "member_expression" and norm(w.pf.text(n)) in names) for n in _walk(node))


def _mentions(w: FunctionFlow, node: Node, patterns: tuple[str, ...]) -> bool:
    """A cheap first look: the node's text holds a name one of the patterns calls (`fetch` for `*.fetch`,
    `axios` for `axios.*`), or a local name imported under one."""
    names = w.pf.local_names(_called_names(patterns))
    text = w.pf.text(node)
    return any(n in text for n in names)


@cache
def _called_names(patterns: tuple[str, ...]) -> frozenset[str]:
    """The longest literal name of each pattern (`fetch` for `*.fetch`, `axios` for `axios.*`)."""
    return frozenset({max((head if last == "*" else last).split("*"), key=len)
                      for head, _, last in (p.rpartition(".") for p in patterns)} - {""})


def _matches(w: FunctionFlow, call: Node, patterns: tuple[str, ...]) -> bool:
    fn = call.child_by_field_name("function")
    if fn is None:
        return False
    callee = norm(w.pf.text(fn))
    return glob_match(callee, patterns) or glob_match(w.imported_name(callee), patterns)


def _calls(node: Node) -> list[Node]:
    return [n for n in _walk(node) if n.type == "call_expression"]


def _calls_in_callbacks(node: Node) -> list[Node]:
    """The calls of `node`, and of the functions written as arguments of its calls (callbacks)."""
    out = _calls(node)
    for call in list(out):
        args = call.child_by_field_name("arguments")
        for arg in (args.named_children if args is not None else []):
            for n in _walk_into(arg):
                if n.type in FUNCTION_NODES:
                    body = n.child_by_field_name("body")
                    out += _calls(body) if body is not None else []
    return out


def _walk_into(node: Node) -> list[Node]:
    """The nodes of an argument, object literals included, stopping at the functions found there."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        out.append(n)
        if n.type not in FUNCTION_NODES:
            stack.extend(n.children)
    return out


def _walk(node: Node) -> list[Node]:
    """The nodes of `node`, not entering nested functions or classes (their code runs elsewhere)."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed([c for c in n.children if c.type not in _SCOPES]))
    return out


def _bare(node: Node) -> Node:
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


# ---- what a test selects -------------------------------------------------------------------------------
def chosen(w: FunctionFlow, test: Test, alternatives: list[tuple[Node | None, Taints]], at: Node) -> Taints:
    """The control flow of a value chosen among `alternatives` (their nodes and flows), or nothing when the
    alternatives are the same text, already carry the tested value (its finding says it), or are all
    volatile themselves (each is a finding of its own)."""
    texts = [(w.line(n), w.text(n, 60)) if n is not None else (w.line(at), "undefined") for n, _ in alternatives]
    # compared in full: two long calls that differ only after the shown 60 characters are two alternatives
    if len({_norm(w.pf.text(n)) if n is not None else "undefined" for n, _ in alternatives}) < 2:
        return {}
    carried = set(union(*(t for _, t in alternatives)))
    if test.origins & carried or any(_uses(w, n, test.names) for n, _ in alternatives):
        return {}
    if all(any(o.kind == "source" and not o.branches for o in t) for _, t in alternatives):
        return {}
    line = w.line(test.node)
    o = Origin("source", test.rule.name, -1, w.pf.repo, w.pf.path, line, test.text, w.info.node,
               "control", tested=test.tested, branches=tuple(sorted(dict.fromkeys(texts), key=lambda b: b[0])),
               condition=optional_condition(w, test))
    what = " or ".join(f"line {n}" for n, _ in o.branches)
    steps = (Step(w.pf.repo, w.pf.path, line, f"volatile test ({test.rule.name}): {test.text}"),
             w.step(at, f"selects {what}"))
    return {o: Flow(o, steps)}


def optional_condition(w: FunctionFlow, test: Test) -> str:
    """The condition under which the choice differs, when the probing function names a file the user writes
    (a string literal matching the rule's `optional_files`): `only when the user has written SYSTEM.md`."""
    if not test.rule.optional_files:
        return ""
    names = []
    for n in _walk(w.fn):
        if n.type == "string":
            text = w.pf.text(n)[1:-1]
            if text and glob_match(text, test.rule.optional_files) and text not in names:
                names.append(text)
    return f"only when the user has written {' or '.join(names)}" if names else ""


def settled_by_fallback(w: FunctionFlow, op: str, left: Taints, right: Taints) -> Taints:
    """`chosen ?? process.cwd()`: what a volatile test chose for the left side only decides whether the
    volatile fallback is used ([[fallback]] rules); the fallback is its own finding, so the choice's flows
    are left out of the result."""
    if not w.config.is_fallback(op):
        return left
    if not any(o.kind == "source" and not o.branches for o in right):
        return left
    return {o: f for o, f in left.items() if not o.branches}


def _norm(text: str) -> str:
    return _WS.sub("", text).rstrip(";")


def assignments(block: Node | None, w: FunctionFlow) -> dict[str, Node]:
    """Local names a block assigns (`x = …`, the last one each), to their assigned expression."""
    out: dict[str, Node] = {}
    if block is None:
        return out
    for n in _walk(block):
        if n.type == "assignment_expression":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if left is not None and right is not None and left.type == "identifier":
                out[w.pf.text(left)] = right
    return out


def prior_value(w: FunctionFlow, name: str, before: Node) -> tuple[bool, Node | None]:
    """The expression `name` held before `before` in this function: its last declaration or assignment
    (found, value node; the value is None for `let x`)."""
    found: tuple[bool, Node | None] = (False, None)
    for n in _walk(w.fn):
        if n.start_byte >= before.start_byte:
            continue
        if n.type == "variable_declarator":
            key, value = n.child_by_field_name("name"), n.child_by_field_name("value")
            if key is not None and key.type == "identifier" and w.pf.text(key) == name:
                found = (True, value)
        elif n.type == "assignment_expression" and n.end_byte <= before.start_byte:
            left = n.child_by_field_name("left")
            if left is not None and left.type == "identifier" and w.pf.text(left) == name:
                found = (True, n.child_by_field_name("right"))
    return found


def select_assigned(w: FunctionFlow, test: Test, node: Node, branches: tuple[Node | None, ...],
                    before: dict[str, Taints], after: list[dict[str, Taints]]) -> None:
    """After `if`/`else` or `try`/`catch` (`after`: the environment each branch left): a name the branches
    assign differently holds the test's choice."""
    assigned = [assignments(b, w) for b in branches]
    for name in sorted({n for a in assigned for n in a}):
        alternatives: list[tuple[Node | None, Taints]] = []
        for a, env in zip(assigned, after, strict=True):
            if name in a:
                alternatives.append((a[name], env.get(name, {})))
                continue
            found, value = prior_value(w, name, node)
            if not found:
                break  # not a local of this function: nothing known to choose from
            alternatives.append((value, before.get(name, {})))
        else:
            flow = chosen(w, test, alternatives, node)
            if flow:
                w.env[name] = union(w.env.get(name, {}), stepped(flow, w.step(node, f"assigned to {name}")))


# ---- early returns ------------------------------------------------------------------------------------
def returns_in(node: Node | None) -> list[Node]:
    return [n for n in _walk(node) if n.type == "return_statement"] if node is not None else []


@dataclass(frozen=True)
class Guard:
    """A test with a `return` under it: the function returns one of those or one of the later returns."""
    test: Test
    region: Node  # the branch holding the guarded returns
    anchor: Node  # the `if` / `try` statement


def guard(w: FunctionFlow, test: Test | None, anchor: Node, branches: tuple[Node | None, ...]) -> Guard | None:
    if test is None:
        return None
    region = next((b for b in branches if b is not None and b"return" in w.pf.source[b.start_byte:b.end_byte]
                   and returns_in(b)), None)
    return Guard(test, region, anchor) if region is not None else None


def guarded_returns(w: FunctionFlow, fn: Node, guards: list[Guard]) -> Taints:
    """The control flows of the function's return value, one per guard whose returns differ from the rest."""
    body = fn.child_by_field_name("body")
    if not guards or body is None or body.type != "statement_block":
        return {}  # (most bodies have no guard: their returns are not walked again)
    every = returns_in(body)
    out: Taints = {}
    seen: set[int] = set()
    for g in guards:
        if g.anchor.start_byte in seen:
            continue
        seen.add(g.anchor.start_byte)
        inside = {r.start_byte for r in returns_in(g.region)}
        mine = [r for r in every if r.start_byte in inside]
        rest = [r for r in every if r.start_byte not in inside and r.start_byte >= g.anchor.start_byte]
        if not mine or not rest:
            continue
        alternatives = [(_returned(r), w.returned_at.get(r.start_byte, {})) for r in (*mine, *rest)]
        flow = chosen(w, g.test, alternatives, g.anchor)
        out = union(out, stepped(flow, w.step(g.anchor, "returned")))
    return out


def _returned(ret: Node) -> Node | None:
    return ret.named_children[0] if ret.named_children else None


def merged(envs: list[dict[str, Taints]]) -> dict[str, Taints]:
    """The environment after branches: a name may hold what any branch left in it."""
    out: dict[str, Taints] = {}
    for env in envs:
        for name, t in env.items():
            out[name] = union(out[name], t) if name in out else t
    return out
