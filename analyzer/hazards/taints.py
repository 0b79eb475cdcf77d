"""The value-flow algebra the hazard scan composes: where a volatile value came from (`Origin`), the steps
that carried it (`Flow`), the structural operations replayed at call sites, and a function's `Summary`.

Kept apart from the body walker (`flow.py`) so the engine and the walker share one vocabulary without
the walker's syntax handling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

MAX_STEPS = 40
_WS = re.compile(r"\s+")
_TYPE_ARGS = re.compile(r"<[^<>()]*>")


@dataclass(frozen=True)
class Step:
    repo: str
    path: str
    line: int
    why: str
    rule: str = ""  # the rule that made this step (a carrier, a seam, a neutraliser), when one did


@dataclass(frozen=True)
class Origin:
    kind: str  # source | param
    rule: str  # source rule name ("" for params)
    index: int  # parameter index (-1 for sources)
    repo: str
    path: str
    line: int
    text: str
    function: str  # graph node id of the function holding the expression
    volatility: str = ""  # the source rule's kind (time, ordering…); "" for parameters
    # For parameters: the field of the argument this flow reads (`{ cwd, prompt } = options`), so two
    # fields of one parameter stay two flows instead of one hiding the other.
    field: str = ""
    # For a volatile test ([[control]] rules, see control.py): the source rule it tests ("" for a catch or
    # a probe) and the alternatives it selects between, as (line, text).
    tested: str = ""
    branches: tuple[tuple[int, str], ...] = ()
    # When the value differs only under a condition a user chooses (an optional file they write, named by a
    # [[control]] rule's `optional_files`): the finding is `possible`, with this condition named.
    condition: str = ""

    def __hash__(self) -> int:
        """The generated hash (of every field), computed once: origins key every flow table of the scan."""
        h: int | None = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.kind, self.rule, self.index, self.repo, self.path, self.line, self.text, self.function,
                      self.volatility, self.field, self.tested, self.branches, self.condition))
            object.__setattr__(self, "_hash", h)
        return h


@dataclass(frozen=True)
class Flow:
    origin: Origin
    steps: tuple[Step, ...] = ()
    neutralisers: tuple[str, ...] = ()  # neutraliser rule names met on the way (kind checked at the end)
    possible: bool = False  # passed a `possible` (one-of-several) call-graph edge
    # Where the volatile value sits inside the value that carries it: `("timestamp",)` for
    # `{ timestamp: Date.now() }`. For parameter origins, `ops` records what the function does to its
    # parameter (read a field, wrap in a field, flatten into a string) so a call site can replay it.
    path: tuple[str, ...] = ()
    ops: tuple[tuple[str, str], ...] = ()

    def then(self, step: Step) -> Flow:
        if self.steps and self.steps[-1] == step:
            return self
        # a long chain keeps its source and its newest step (the sink, at the end); the middle is dropped
        kept = self.steps[:MAX_STEPS - 1] if len(self.steps) >= MAX_STEPS else self.steps
        # (built directly: `dataclasses.replace` costs several times as much, and this runs at every step)
        return Flow(self.origin, (*kept, step), self.neutralisers, self.possible, self.path, self.ops)


Taints = dict[Origin, Flow]
MAX_PATH = 4
# The path segment of a function value's result (`{ execute: () => run(now) }` holds `now` at ("execute",
# CALLED)): reading the field gives the function, calling it the result.
CALLED = "()"
# The operation of a value turned into text or a number (a template, `+`, a flattening carrier): a field's
# volatile value is now the whole value's.
FLATTEN = ("flat", "")


def apply_op(flow: Flow, op: tuple[str, str]) -> Flow | None:
    """Replay one structural operation on a flow; None when it drops the value (another field is read)."""
    kind, key = op
    if flow.origin.kind == "param":
        last = flow.ops[-1] if flow.ops else None
        if kind == "read" and last is not None and last[0] == "wrap":
            return _with_ops(flow, flow.ops[:-1]) if last[1] == key else None
        if kind == "read" and last is None and not flow.origin.field:
            return replace(flow, origin=replace(flow.origin, field=key), ops=(op,))
        return _with_ops(flow, (*flow.ops, op)[-8:])
    if kind == "order":  # only the iteration order carries on: ordering sources, as a whole
        return as_order(flow)
    if kind == "flat":
        if CALLED in flow.path:  # a function in the value: its string or JSON form holds no result of it
            return None
        return _with_path(flow, ()) if flow.path else flow
    if kind == "wrap":
        return _with_path(flow, (key, *flow.path)[:MAX_PATH])
    if not flow.path:  # a property of a volatile plain value (`.length`) is still volatile…
        # …but when a volatile test selects between objects, a field differs only if an object literal among
        # the alternatives writes it (`{ kind, messages }` chosen by a clock test: `.messages` differs, a field
        # added later does not)
        literals = [text for _, text in flow.origin.branches if text.lstrip().startswith("{")]
        if literals and not any(_names_field(text, key) for text in literals):
            return None
        return flow
    return _with_path(flow, flow.path[1:]) if flow.path[0] == key else None


def possibly(f: Flow, possible: bool) -> Flow:
    """`f`, marked as passing a `possible` (one-of-several) edge when `possible` is."""
    return f if f.possible or not possible else Flow(f.origin, f.steps, f.neutralisers, True, f.path, f.ops)


def _with_path(f: Flow, path: tuple[str, ...]) -> Flow:
    return Flow(f.origin, f.steps, f.neutralisers, f.possible, path, f.ops)


def _with_ops(f: Flow, ops: tuple[tuple[str, str], ...]) -> Flow:
    return Flow(f.origin, f.steps, f.neutralisers, f.possible, f.path, ops)


def _names_field(text: str, key: str) -> bool:
    """An object literal's text names field `key` (`{ key: … }`, `{ key }`; a nested member read counts too:
    the text may be cut short, so this errs towards keeping the flow)."""
    return re.search(rf"(?<![\w$.]){re.escape(key)}(?![\w$])", text) is not None


def as_order(flow: Flow) -> Flow | None:
    """A list's iteration order as a whole value, when `flow` is the order of the list's elements themselves
    (an ordering source as the whole value). An ordering inside a field of each element (`{ result: { text:
    names } }`), or inside what a function an element holds would return, is no order of the list."""
    if flow.origin.volatility != "ordering" or flow.path:
        return None
    return flow


def apply_ops(flow: Flow, ops: tuple[tuple[str, str], ...]) -> Flow | None:
    out: Flow | None = flow
    for op in ops:
        if out is None:
            return None
        out = apply_op(out, op)
    return out


def mapped(t: Taints, op: tuple[str, str]) -> Taints:
    out: Taints = {}
    for f in t.values():
        g = apply_op(f, op)
        if g is not None and (g.origin not in out or _rank(g) < _rank(out[g.origin])):
            out[g.origin] = g
    return out


def _rank(flow: Flow) -> tuple[int, int]:
    """The most general shape first (the whole value over one of its fields), then the shortest chain."""
    return (len(flow.path) + len(flow.ops), len(flow.steps))


def union(*parts: Taints) -> Taints:
    """Merge, keeping one flow per origin: the most general shape, then the shortest explanation."""
    out: Taints = {}
    for part in parts:
        if not out:  # (the common case: one part with flows, the rest empty — a copy, in its order)
            out = dict(part)
            continue
        for origin, flow in part.items():
            old = out.get(origin)
            if old is None or _rank(flow) < _rank(old):
                out[origin] = flow
    return out


def stepped(t: Taints, step: Step) -> Taints:
    return {o: f.then(step) for o, f in t.items()}


@dataclass(frozen=True)
class Site:
    rule: str
    part: str  # request part, or the dismissal reason for misses
    repo: str
    path: str
    line: int
    text: str
    function: str
    # Where in its part the value lands, when the code states it (`section({ name, order })`).
    position: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Hit:
    flow: Flow
    site: Site


@dataclass
class Summary:
    returns: Taints = field(default_factory=dict)
    sinks: list[Hit] = field(default_factory=list)
    misses: list[Hit] = field(default_factory=list)
    fields: dict[str, Taints] = field(default_factory=dict)  # this.<name> = … (flows with source origins)
    mutates: dict[int, Taints] = field(default_factory=dict)  # parameter i gains these flows (`p.xs.push(v)`)
    truncated: bool = False  # a callee was beyond the depth bound
    unmapped: bool = False  # the graph node's body was not found in its file


def compose_through(flow: Flow, inner: Flow, call: Step, possible: bool) -> Flow | None:
    """An argument's flow carried through a callee's parameter flow (its ops replayed), or None when the
    callee reads another field of it."""
    shaped = apply_ops(flow, inner.ops)
    if shaped is None:
        return None
    steps = (*flow.steps, call, *inner.steps)
    steps = steps if len(steps) <= MAX_STEPS else (*steps[:MAX_STEPS - 1], steps[-1])
    return Flow(shaped.origin, steps, (*flow.neutralisers, *inner.neutralisers),
                flow.possible or inner.possible or possible, shaped.path, shaped.ops)


@lru_cache(maxsize=1 << 16)
def norm(text: str) -> str:
    """Call and member text as rules match it: no whitespace, `?.` and `!.` as `.`, no type arguments (the
    same callee text recurs at every call of every body walked, hence the cache)."""
    return _TYPE_ARGS.sub("", _WS.sub("", text).replace("?.", ".").replace("!.", "."))


def order_apart(t: Taints) -> Taints:
    """A parameter's iteration order kept beside (not instead of) what a loop body reads of its elements:
    one flow per origin would keep only the shorter, and the order lets only ordering sources through."""
    out: Taints = {}
    for o, f in t.items():
        key = replace(o, field=f"{o.field}<order>")
        out[key] = replace(f, origin=key)
    return out
