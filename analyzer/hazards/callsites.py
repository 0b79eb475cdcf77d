"""A call site: the summaries of what a call runs, replayed with the call's arguments.

A part composed by the body walker (`flow.FunctionFlow`, see docs/design.md "Splitting a recursive
walker"). For each call-graph edge of a call, the driver (`FlowContext.through_edge`) says which summary
runs and which of the call's arguments reach its parameters; this part replays that summary here: the
flows it returns (its parameters' flows composed with the arguments', its sources as they are), the sinks
and losses it met on a parameter, and what it added to an argument's value. A callee beyond the depth bound
or whose body could not be read is a visible loss; an edge the configuration calls a hand-over is skipped.
"""

from __future__ import annotations

from typing import Any, Protocol

from tree_sitter import Node

from analyzer.hazards.configuration import FlowConfiguration
from analyzer.hazards.hits import Hits
from analyzer.hazards.syntax import ParsedFile, base_identifier, unwrap
from analyzer.hazards.taints import Flow, Hit, Step, Summary, Taints, compose_through, possibly, union


class Callees(Protocol):
    """What this part asks of the driver (a part of `flow.FlowContext`)."""

    def needed(self, node: str, tainted: bool) -> bool: ...
    def through_edge(self, target: str, attrs: dict[str, Any], callee: str, pf: ParsedFile, args: list[Node],
                     arg_t: list[Taints], elements: dict[int, list[Taints]],
                     depth: int) -> list[tuple[Summary | None, dict[int, tuple[int, Taints]], str]]: ...
    def qualname(self, node: str) -> str: ...


class CallSites:
    """Replays callee summaries at the calls of one function body."""

    def __init__(self, ctx: Callees, config: FlowConfiguration, hits: Hits, summary: Summary, pf: ParsedFile,
                 depth: int) -> None:
        self.ctx, self.config, self.hits, self.summary, self.pf, self.depth = ctx, config, hits, summary, pf, depth

    def compose(self, edges: list[tuple[str, dict[str, Any]]], arg_t: list[Taints], node: Node, callee: str,
                args: list[Node], elements: dict[int, list[Taints]]) -> tuple[Taints, list[tuple[str, Taints]]]:
        """The callees' summaries at this call: each edge maps the call's arguments to the parameters of
        what it runs (`analyzer.hazards.seams`: named events, forwarders), then its flows are replayed. Gives
        the call's value and, in order, the local names whose value a callee added to (for the walker to bind)."""
        out: Taints = {}
        gained: list[tuple[str, Taints]] = []  # (local name, what a callee added to its value), in order
        tainted = any(arg_t)
        runs = [(target, attrs, run) for target, attrs in edges if self.ctx.needed(target, tainted)
                for run in self.ctx.through_edge(target, attrs, callee, self.pf, args, arg_t, elements,
                                                 self.depth + 1)]
        for target, attrs, (summ, params, ran) in runs:
            if summ is None:
                self.summary.truncated = True
                for t in arg_t:
                    if t:
                        self.hits.miss(t, "depth-limit", f"passed to {callee}() beyond the depth limit "
                                   "(--max-depth) — not followed", node)
                continue
            if summ.truncated:
                self.summary.truncated = True
            qual = self.ctx.qualname(target)
            if summ.unmapped:
                for t in arg_t:
                    if t:
                        self.hits.miss(t, "unknown-callee", f"passed to {callee}() → {qual}, whose body could not be "
                                   "read — not followed", node)
                continue
            if self.config.is_handoff(attrs.get("rule")):
                continue  # handed over, not called here: its own summary holds what it computes
            kind = attrs.get("kind", "direct") + (f":{attrs['rule']}" if attrs.get("rule") else "")
            kind += f", {ran}" if ran else ""
            seam = " ".join(r for r in (ran[len("forwarded by "):] if ran.startswith("forwarded by ") else "",
                                        str(attrs.get("rule") or "")) if r)
            possible = bool(attrs.get("possible"))
            line = node.start_point[0] + 1

            def through(flow: Flow, inner: Flow, i: int, qual: str = qual, kind: str = kind,
                        possible: bool = possible, line: int = line, seam: str = seam) -> Flow | None:
                call = Step(self.pf.repo, self.pf.path, line, f"argument {i + 1} of {callee}() → {qual} ({kind})", seam)
                return compose_through(flow, inner, call, possible)

            back = Step(self.pf.repo, self.pf.path, line, f"returned by {qual} ({kind}) to this call", seam)
            for origin, rf in summ.returns.items():
                if origin.kind == "param":
                    if origin.index in params:
                        a, t = params[origin.index]
                        for flow in t.values():
                            composed = through(flow, rf, a)
                            if composed is not None:
                                out = union(out, {composed.origin: composed.then(back)})
                else:
                    out = union(out, {origin: possibly(rf, possible).then(back)})
            # a sink or a loss the callee met on a parameter is met here by what this call passes in
            for hits, keep in ((summ.sinks, self.hits.sink_hit), (summ.misses, self.hits.add_miss)):
                for hit in hits:
                    o = hit.flow.origin
                    if o.kind == "param" and o.index in params:
                        a, t = params[o.index]
                        for flow in t.values():
                            composed = through(flow, hit.flow, a)
                            if composed is not None:
                                keep(Hit(composed, hit.site))
            for i, added in summ.mutates.items():  # what the callee added to an argument's value
                holder = args[params[i][0]] if args and i in params and params[i][0] < len(args) else None
                base = (unwrap(holder) if unwrap(holder).type == "identifier" else base_identifier(unwrap(holder))) \
                    if holder is not None else None
                if base is None:
                    continue
                into = Step(self.pf.repo, self.pf.path, line,
                            f"added to argument {params[i][0] + 1} by {qual} ({kind})")
                got: Taints = {}
                for o, gf in added.items():
                    if o.kind == "source":
                        got[o] = possibly(gf, possible).then(into)
                    elif o.index in params:
                        for flow in params[o.index][1].values():
                            composed = through(flow, gf, params[o.index][0])
                            if composed is not None:
                                got[composed.origin] = composed.then(into)
                gained.append((self.pf.text(base), got))
        return out, gained
