"""Values appended to a session log, followed to the method that replays the log into later requests.

A value passed to `session.append(…)` is stored (the `stored` dismissal) and, if the log is a session log,
replayed into every later request by the log's replay method (`deriveMessages`). What that costs depends on
the replay, not on the append:

- the replay renders each entry from what was stored: the value is frozen in the history, sent once as a
  new tail and the same afterwards (`frozen-in-history`, a near-miss of the replay rule that says so);
- the replay re-renders entries from inputs it computes itself (a clock, the working directory read at
  replay time): every request re-renders the earlier messages differently, so the prefix breaks inside the
  history (a finding whose source is that input, its message `re-rendered`).

Which appends feed which replay is data: the `[[history]]` rule with `appends` and `replayed_by` in
`analyzer/rules/hazards/sinks.toml` (an append method and a replay method of the same class). An append to a
class without a replay method stays `stored`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from analyzer.hazards.rules import glob_match
from analyzer.hazards.taints import Flow, Hit, Site, Step


@dataclass(frozen=True)
class ReplayRule:
    name: str
    appends: tuple[str, ...]  # method names that append to the log
    replayed_by: tuple[str, ...]  # method names of the same class that replay it into the request
    stored_by: tuple[str, ...]  # the dismissals an append is first dismissed by


@dataclass
class Replays:
    """What the scan found: appends replayed unchanged, and replays that re-render from volatile inputs."""

    rule: ReplayRule | None = None
    unchanged: dict[Hit, str] = field(default_factory=dict)  # an append's near-miss → why it is frozen
    rerendering: dict[Hit, str] = field(default_factory=dict)  # an append a re-rendering replay replays → why
    rerendered: list[Hit] = field(default_factory=list)  # a replay's own volatile input → its history
    # (repo, path, line) of each re-rendering source → the replay's qualname and the appends it re-renders
    sources: dict[tuple[str, str, int], tuple[str, list[str]]] = field(default_factory=dict)


def load_replay_rule() -> ReplayRule | None:
    """The `[[history]]` entry that names a log's append and replay methods (the first, if several)."""
    from analyzer.rules.files import read_rule_files

    files, _ = read_rule_files("analyzer.rules.hazards", what="hazard rule file")
    for rf in files:
        for e in rf.data.get("history", []):
            if e.get("replayed_by"):
                return ReplayRule(str(e["name"]), tuple(e.get("appends", ())), tuple(e["replayed_by"]),
                                  tuple(e.get("stored_by", ("stored",))))
    return None


def find_replays(engine: Any, misses: list[Hit], rule: ReplayRule | None, live: Callable[[Flow], bool]) -> Replays:
    """For every stored near-miss at a call of a log's append method: the log's replay, and what it does
    (`live`: a flow no neutraliser met on its way)."""
    out = Replays(rule)
    if rule is None:
        return out
    g = engine.g
    verdicts: dict[str, list[Flow]] = {}  # replay node → the volatile flows it computes itself
    for hit in misses:
        site = hit.site
        if site.rule not in rule.stored_by or hit.flow.origin.kind != "source":
            continue
        replay = _replay_of(engine, site, rule)
        if replay is None:
            continue
        if replay not in verdicts:
            verdicts[replay] = [f for f in _own_volatile(engine, replay) if live(f)]
        where = f"{site.path}:{site.line}"
        qual = engine.qualname(replay)
        if not verdicts[replay]:
            out.unchanged[hit] = (f"appended to a session log that {qual} replays into every later request, "
                                  f"rendering the stored value unchanged: it costs only the new tail once")
            continue
        found = ", ".join(f"{f.origin.text} at {f.origin.path}:{f.origin.line}" for f in verdicts[replay])
        out.rerendering[hit] = (f"stored in a session log that {qual} replays into every later request, "
                                f"re-rendering the stored entries with {found} (its own finding)")
        for flow in verdicts[replay]:
            o = flow.origin
            key = (o.repo, o.path, o.line)
            appends = out.sources.setdefault(key, (qual, []))[1]
            if where not in appends:
                appends.append(where)
    for replay, flows in sorted(verdicts.items()):
        a = g.nodes[replay]
        for flow in flows:
            step = Step(a["repo"], a["path"], a["line"],
                        f"returned by {engine.qualname(replay)} → message history ({rule.name})", rule.name)
            site = Site(rule.name, "message history", a["repo"], a["path"], a["line"],
                        f"{a.get('name', '')}()", replay)
            out.rerendered.append(Hit(flow.then(step), site))
    return out


def _replay_of(engine: Any, site: Site, rule: ReplayRule) -> str | None:
    """The replay method of the log class whose append method the call at `site` runs."""
    g = engine.g
    if site.function not in g:
        return None
    inner = engine.innermost(site.repo, site.path, site.line)
    for fn in dict.fromkeys((site.function, inner)):
        if fn is None:
            continue
        for _, target, d in g.out_edges(fn, data=True):
            a = g.nodes[target]
            if d.get("line") != site.line or not glob_match(a.get("name", ""), rule.appends) or not a.get("parent"):
                continue
            for member in engine._members(a["parent"]):
                if glob_match(g.nodes[member].get("name", ""), rule.replayed_by):
                    return str(member)
    return None


def _own_volatile(engine: Any, replay: str) -> list[Flow]:
    """The volatile values the replay computes itself (in its own body or a function it calls) that reach
    what it returns; a value read back from the log it replays was computed when it was appended."""
    summ = engine.summary(replay, 0)
    if summ is None:
        return []
    below = engine._walk({replay}, engine.max_depth, backwards=False)
    return [f for o, f in sorted(summ.returns.items(), key=lambda x: (x[0].path, x[0].line, x[0].text))
            if o.kind == "source" and o.function in below]
