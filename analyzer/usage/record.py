"""The research record of a reconciliation: the reconcile document (both routes, the comparison) in the
route's template.

Every number comes from the replay document; the request-path summary from the trace at the same commits.
Wording is in `analyzer/records/sentences/reconcile.<lang>.toml`.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from analyzer import __version__
from analyzer.records import Record, render_markdown, sentences
from analyzer.records.provenance import analyzer_git
from analyzer.usage.wording import FEATURE, comparison_lines, comparison_summary, missing_line, value_text, why

if TYPE_CHECKING:
    from analyzer.analysis import Workspace


def _node_name(node: str) -> str:
    repo, _, rest = node.partition(":")
    path, _, qual = rest.rpartition(":")
    return f"{qual} ({repo}:{path})" if path else node


def path_summary(trace: dict[str, Any], lang: str) -> str:
    """Anchor, the two branches' call lines and every seam with its other live targets, in one line."""
    s = sentences(FEATURE, lang)
    if not trace.get("found"):
        reason = trace.get("error") or f"no path between {trace.get('from')} and {trace.get('to')}"
        return s.format("record.inputs.path_none", reason=reason)
    hops, edges = trace["hops"], trace["edges"]
    parts = []
    first = hops[0]
    site = f"{first['repo']}:{first['path']}:{first['line']}"
    if trace["mode"] == "common-caller":
        parts.append(s.format("record.path.anchor", symbol=first["symbol"], site=site))
        from_hops = [h for h in hops if h["branch"] == "from"]
        to_hops = [h for h in hops if h["branch"] == "to"]
        if from_hops:
            parts.append(s.format("record.path.from", line=edges[from_hops[0]["via"]]["call_line"],
                                  symbol=from_hops[-1]["symbol"]))
        if to_hops:
            parts.append(s.format("record.path.to", line=edges[to_hops[0]["via"]]["call_line"]))
    else:
        parts.append(s.format("record.path.direct", symbol=first["symbol"], site=site))
    for e in edges:
        if not (e["possible"] and e["alternatives"]):
            continue
        others = [_node_name(n) for n in e["alternatives"][:3]]
        if len(e["alternatives"]) > 3:
            others.append(f"+{len(e['alternatives']) - 3}")
        kind = e["kind"] + (f":{e['rule']}" if e.get("rule") else "")
        parts.append(s.format("record.path.seam", site=seam_site(e), kind=kind,
                              symbol=_node_name(e["target"]), others=", ".join(others)))
    return s.format("record.inputs.path", spec_from=trace["from"], spec_to=trace["to"], summary=s["sep"].join(parts))


def seam_site(edge: dict[str, Any]) -> str:
    """repo:path:line of a seam's call site (the call is in the source node's repo)."""
    return f"{edge['source'].split(':', 1)[0]}:{edge['call_path']}:{edge['call_line']}"


def first_seam(trace: dict[str, Any]) -> str | None:
    """The first dynamic seam on the way to TO: where the runtime picks the adapter."""
    for e in trace.get("edges", []):
        if e["possible"] and e["alternatives"]:
            return seam_site(e)
    return None


def _tags(locator: Any) -> list[str]:
    try:
        out = locator.repo.git.tag("--points-at", locator.commit)
    except Exception:  # a locator without a git repo (fixtures) or git failing: no tags is a fact to state
        return []
    return sorted(t for t in out.splitlines() if t)


def _about(locator: Any, s: Any) -> str:
    """The commit's subject and date: a release commit names its version even where the tag was not fetched."""
    try:
        c = locator.repo.commit(locator.commit)
        return s.format("record.source.commit", subject=c.summary, date=c.committed_datetime.date().isoformat())
    except Exception:  # a locator without a git repo (fixtures): nothing to add
        return ""


def _fields_text(fields: list[dict[str, Any]] | None, lang: str) -> str:
    if fields is None:
        return sentences(FEATURE, lang)["absent"]
    return ", ".join(f"{f['name']} {value_text(f['value'])}" for f in fields)


def _sources(doc: dict[str, Any], locators: dict[str, Any], ctx: Workspace, lang: str, command: str) -> list[str]:
    s = sentences(FEATURE, lang)
    out = []
    for name, loc in locators.items():
        tags = _tags(loc)
        try:
            pin = ctx.lock.get(name)
            url = pin.url
        except Exception:  # no lock entry (a test double): say where the objects were read from instead
            pin, url = None, getattr(getattr(loc, "repo", None), "git_dir", name)
        if pin is not None and pin.commit == loc.commit and pin.ref and pin.ref not in tags:
            tags.append(f"{pin.ref} (repos.lock ref)")
        tag_text = s.format("record.source.tags", tags=", ".join(tags)) if tags else s["record.source.notags"]
        out.append(s.format("record.source.repo", repo=name, commit=loc.commit, tags=tag_text, about=_about(loc, s),
                            url=url))
    seen = set()
    for ledger in doc["routes"].values():
        for key, f in ledger["functions"].items():
            if key not in seen:
                seen.add(key)
                out.append(s.format("record.source.function", name=f["name"], role=s[f"role.{key}"], site=f["site"]))
    today = _dt.datetime.now(_dt.UTC).date().isoformat()
    out.append(s.format("record.source.tool", version=__version__, git=analyzer_git(lang), command=command,
                        today=today))
    return out


def _inputs(doc: dict[str, Any], trace: dict[str, Any], lang: str) -> list[str]:
    s = sentences(FEATURE, lang)
    sc = doc["scenario"]
    out = [s.format("record.inputs.scenario", name=sc["name"], path=sc["path"], title=sc["title"])]
    first = next(iter(doc["routes"].values()))
    for req in first["requests"]:
        fields = ", ".join(f"{f['name']} = {value_text(f['value'])}" for f in req["provider"])
        out.append(s.format("record.inputs.request", turn=req["turn"], step=req["step"], fields=fields))
    for ledger in doc["routes"].values():
        p = ledger.get("prices")
        if p:
            out.append(s.format("record.inputs.prices", source=s[f"prices.{p['source']}"], hit=p["cache_hit"],
                                miss=p["cache_miss"], output=p["output"], as_of=p["as_of"],
                                where=p.get("reference") or p["site"]))
    out.append(s.format("record.inputs.routes", routes=s["sep"].join(s[f"route.{r}"] for r in doc["routes"])))
    out.append(path_summary(trace, lang))
    return out


def _observations(doc: dict[str, Any], lang: str) -> list[str]:
    s = sentences(FEATURE, lang)
    out = []
    for name, ledger in doc["routes"].items():
        for req in ledger["requests"]:
            if req.get("pi_usage") is not None:
                pi = {f["name"]: value_text(f["value"]) for f in req["pi_usage"]}
                out.append(s.format("record.obs.pi", route=name, input=pi.get("input"), cacheRead=pi.get("cacheRead"),
                                    cacheWrite=pi.get("cacheWrite"), output=pi.get("output"),
                                    totalTokens=pi.get("totalTokens"), cost=pi.get("cost.total")))
            out.append(s.format("record.obs.dsh", route=name, fields=_fields_text(req.get("dsh_usage"), lang)))
        hit = ledger["cache_hit_percent"]
        if ledger["meter"] is not None and hit is not None:
            out.append(s.format("record.obs.meter", route=name, fields=_fields_text(ledger["meter"], lang),
                                hit=value_text(hit["value"]), site=hit["site"]))
        else:
            out.append(s.format("record.obs.meter_none", route=name))
        checks = [c for r in ledger["requests"] for c in r["checks"]] + ledger["checks"]
        failed = [c["name"] for c in checks if c["holds"] is False]
        out.append(s.format("record.obs.checks_failed", route=name, names=s["sep"].join(failed)) if failed else
                   s.format("record.obs.checks_ok", route=name, n=sum(c["holds"] is True for c in checks)))
    if doc.get("comparison"):
        cmp = doc["comparison"]
        title = s.format("compare.title", a=cmp["routes"][0], b=cmp["routes"][1])
        out.append(s.format("compare.headline", title=title, summary=comparison_summary(cmp, lang)))
        out += [line for _, line in comparison_lines(cmp, lang, all_rows=False)]
    out += [missing_line(m, lang) for m in doc["missing"]]
    return out


COUNTED = ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")


def _interpretation(doc: dict[str, Any], lang: str) -> str:
    s = sentences(FEATURE, lang)
    cmp = doc.get("comparison")
    if not cmp:
        return s.format("record.interp.one", route=next(iter(doc["routes"])))
    differing = [r for r in cmp["rows"] if r["agree"] is False]
    counted = [r for r in differing if r["scope"] != "request" or r["number"].rsplit(".", 1)[-1] in COUNTED]
    if not counted:
        kept = s["sep"].join(dict.fromkeys(why(r, lang) for r in differing)) or s["record.interp.kept_none"]
        return s.format("record.interp.agree", kept=kept)
    return s.format("record.interp.differ", numbers=", ".join(r["number"] for r in counted),
                    reasons=s["sep"].join(dict.fromkeys(why(r, lang) for r in counted)))


def reconcile_record(doc: dict[str, Any], locators: dict[str, Any], ctx: Workspace, trace: dict[str, Any], lang: str,
                     command: str) -> str:
    """The Markdown record for one `analyze reconcile` run."""
    s = sentences(FEATURE, lang)
    names = list(doc["routes"])
    prices = next((led["prices"] for led in doc["routes"].values() if led.get("prices")), None)
    seam = first_seam(trace)
    seam_clause = s.format("record.seam.known", seam=seam) if seam else s["record.seam.unknown"]
    not_ruled_out = s.format("record.not_ruled_out", seam_clause=seam_clause,
                             as_of=(prices or {}).get("as_of", "?"),
                             source=(prices or {}).get("reference") or (prices or {}).get("site", "?"))
    if doc["missing"]:
        not_ruled_out += " " + s.format("record.not_ruled_out.missing",
                                        names=", ".join(m["name"] for m in doc["missing"]))
    record = Record(
        title=s.format("record.title", scenario=doc["scenario"]["name"], routes=" + ".join(names)),
        question=s["record.question"],
        sources=_sources(doc, locators, ctx, lang, command),
        inputs=_inputs(doc, trace, lang),
        changed=(s.format("record.changed.two", a=names[0], b=names[1]) if len(names) == 2
                 else s.format("record.changed.one", route=names[0])),
        observations=_observations(doc, lang),
        interpretation=_interpretation(doc, lang),
        not_ruled_out=not_ruled_out,
        next_check=s["record.next_check"],
    )
    return render_markdown([record], lang, s["doc.title"])
