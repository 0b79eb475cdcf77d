"""The research record of a cost report (en or zh): what reuse saved, what the breaks lost, the warm-up
verdict and the fix's gain, each figure from the report and each price with its source URL and date checked."""

from __future__ import annotations

from typing import Any

from analyzer.cost.bill import CostReport
from analyzer.cost.text import money
from analyzer.records import Record, render_markdown, sentences


def _share(part: float, whole: float) -> str:
    return f"{part / whole:.0%}" if whole else "—"


def build_record(rep: CostReport, lang: str = "en") -> Record:
    s = sentences("cost", lang)
    cur = rep.currency
    total, nocache = rep.total(), rep.no_cache_total()
    t = rep.tokens()
    sources = [s.format("source.price", cite=c) for c in rep.sources()]
    retention = rep.whatif.get("retention")
    if retention and retention.get("ttl_source"):
        sources.append(s.format("source.cache", cite=retention["ttl_source"]))
    if rep.tokens_note:
        sources.append(s.format("source.tokens", tokens=rep.tokens_note))
    periods = [r.quote.period for r in rep.requests]
    inputs = [s.format("inputs.log", log=rep.log or "—", requests=len(rep.requests),
                       first=rep.requests[0].started_at, last=rep.requests[-1].started_at),
              s.format("inputs.provider", provider=rep.provider, why=rep.provider_why, model_why=rep.model_why)]
    if any(periods):
        inputs.append(s.format("inputs.periods", peak=periods.count("peak"), off_peak=periods.count("off_peak")))
    fix = rep.whatif.get("fix")
    changed = s.format("changed.fix", fixes="; ".join(fix["fixes"])) if fix else s["changed.none"]
    if rep.experiment:
        values = "; ".join(f"{k}: {v}" for k, v in rep.experiment["values"].items())
        changed = s.format("changed.experiment", experiment=rep.experiment.get("experiment") or "—",
                           factor=rep.experiment["factor"], values=values)
    obs = [s.format("obs.tokens", uncached=t["uncached_input"], read=t["cache_read"], written=t["cache_write"],
                    output=t["output"]),
           s.format("obs.cost", cost=money(total, cur), no_cache=money(nocache, cur),
                    saved=money(nocache - total, cur), share=_share(nocache - total, nocache))]
    for name, v in rep.by_series().items() if len(rep.by_series()) > 1 else ():
        obs.append(s.format("obs.series", series=name, money=money(v["money"], cur), requests=v["requests"],
                            cached=v["cache_read"], prompt=v["prompt"]))
    series = rep.by_series()
    if {"control", "treatment"} <= set(series):
        c, t_ = series["control"], series["treatment"]
        diff, cached = t_["money"] - c["money"], t_["cache_read"] - c["cache_read"]
        obs.append(s.format("obs.treatment_more" if diff >= 0 else "obs.treatment_less", money=money(abs(diff), cur),
                            tokens=abs(cached), fewer_more=s["word.fewer"] if cached <= 0 else s["word.more"]))
    if rep.causes:
        top = rep.causes[0]
        obs.append(s.format("obs.breaks", lost=money(rep.lost_total(), cur), breaks=sum(c.breaks for c in rep.causes),
                            tokens=sum(c.recomputed for c in rep.causes), cause=top.cause,
                            cause_lost=money(top.lost, cur)))
    else:
        obs.append(s["obs.no_breaks"])
    obs += _retention(retention, s, cur)
    if fix:
        obs.append(s.format("obs.fix", tokens=fix["cached_tokens_gain"], money=money(fix["money_gain"], cur)))
    interp = (s.format("interp.saved", share=_share(nocache - total, nocache),
                       lost_share=_share(rep.lost_total(), total)) if nocache > total else s["interp.no_saving"])
    not_ruled_out = [s["nr.besteffort"]]
    if rep.tokens_note and "scaled" in rep.tokens_note:
        not_ruled_out.insert(0, s["nr.estimated"])
    if any(not r.quote.official_page_read for r in rep.requests):
        not_ruled_out.append(s["nr.secondary"])
    not_ruled_out += [s.format("nr.caveat", caveat=c) for c in rep.notes]
    title = s.format("record.title", log=rep.log or "—", provider=rep.provider)
    return Record(title, s["record.question"], sources, inputs, changed, obs, interp, not_ruled_out,
                  s["next.replay"])


def _retention(data: dict[str, Any] | None, s: Any, cur: str) -> list[str]:
    if not data:
        return []
    if not data["options"]:
        return [s.format("obs.retention_none", note=data.get("note") or "—")]
    out = []
    for o in data["options"]:
        gap = o["stops_paying_from_gap_minutes"]
        ttl = s.format("ttl.assumed", ttl=o["ttl"]) if o["assumed"] else o["ttl"]
        out.append(s.format("obs.retention", ttl=ttl, gaps=o["gaps_over_ttl"], cold=money(o["cold"], cur),
                            warm=money(o["kept_warm"], cur), pings=o["pings"],
                            verdict=s["verdict.pays"] if o["keep_warm_pays"] else s["verdict.not"],
                            gap="—" if gap is None else f"{gap:g}"))
    return out


def record_markdown(rep: CostReport, lang: str = "en") -> str:
    return render_markdown([build_record(rep, lang)], lang, sentences("cost", lang)["doc.title"])
