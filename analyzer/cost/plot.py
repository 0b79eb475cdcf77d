"""The session as a timeline people would rather look at than read: per request, the prompt tokens read from the
cache against those computed again (stacked bars), the money each request cost beside what it would have cost
with no cache, and every prefix break marked where it happened, with its cause."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from analyzer.cost.bill import CostReport
from analyzer.cost.text import money

IDLE_MARK_MIN = 10      # idle gaps at least this long are drawn: where a short-TTL cache may have expired
READ, WRITE, UNCACHED, BREAK, COST, NOCACHE = "#4C9F70", "#E9B44C", "#D1495B", "#30323D", "#1B4965", "#9AA5B1"


def draw_timeline(report: CostReport, path: Path) -> None:
    """Write the timeline to `path` (.svg or .png), atomically."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.fonttype"] = "none"   # text stays text in an SVG: searchable, selectable

    from analyzer.atomic import write_bytes_atomic

    reqs = report.requests
    xs = list(range(1, len(reqs) + 1))
    read = [r.buckets.cache_read for r in reqs]
    written = [r.buckets.written for r in reqs]
    uncached = [r.buckets.uncached for r in reqs]
    cur = report.currency
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8.0, min(18.0, 0.45 * len(reqs) + 5)), 6.4),
                                      sharex=True, gridspec_kw={"height_ratios": [3, 2], "hspace": 0.22})
    top.bar(xs, read, color=READ, label="read from the cache", width=0.8)
    top.bar(xs, written, bottom=read, color=WRITE, width=0.8,
            label="written to the cache" if any(written) else None)
    top.bar(xs, uncached, bottom=[a + b for a, b in zip(read, written, strict=True)], color=UNCACHED,
            label="computed again (uncached)", width=0.8)
    top.set_ylabel("prompt tokens")
    top.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: f"{v:,.0f}"))
    causes = {c.cause: i + 1 for i, c in enumerate(report.causes)}
    peak = max((a + b + c for a, b, c in zip(read, written, uncached, strict=True)), default=1) or 1
    for x, r in zip(xs, reqs, strict=True):
        if r.breaks:
            height = r.buckets.prompt
            label = ",".join(f"B{causes.get(b.cause, 0)}" for b in r.breaks)
            top.plot([x], [height + peak * 0.035], marker="v", color=BREAK, markersize=7)
            top.annotate(label, (x, height + peak * 0.07), ha="center", va="bottom", fontsize=8,
                         color=BREAK, fontweight="bold")
    times = [_dt.datetime.fromisoformat(r.started_at.replace("Z", "+00:00")) for r in reqs]
    for x, (a, b) in zip(xs[1:], zip(times, times[1:], strict=False), strict=False):
        idle = (b - a).total_seconds() / 60
        if idle >= IDLE_MARK_MIN:
            top.axvline(x - 0.5, color=NOCACHE, linewidth=0.8, linestyle="--")
            top.annotate(f"idle {idle:,.0f} min", (x - 0.5, peak * 1.12), ha="center", fontsize=7.5, color="#52606D")
    if len({r.series for r in reqs}) > 1:   # an experiment's series (control, treatment…): divided and named
        start = 0
        for i in range(1, len(reqs) + 1):
            if i == len(reqs) or reqs[i].series != reqs[start].series:
                if start:
                    for ax in (top, bottom):
                        ax.axvline(start + 0.5, color="#30323D", linewidth=1.2)
                top.annotate(reqs[start].series, ((start + i + 1) / 2, peak * 1.16), ha="center", va="top",
                             fontsize=9, color="#30323D", fontweight="bold")
                start = i
    top.set_ylim(0, peak * 1.18)
    top.legend(loc="lower left", bbox_to_anchor=(0, 1.0), fontsize=8, frameon=False, ncol=4)
    title = (f"{report.provider}: {money(report.total(), cur)} for {len(reqs):,} requests; "
             f"{money(report.no_cache_total(), cur)} with no cache")
    if report.causes:
        title += f"; breaks lost {money(report.lost_total(), cur)}"
    fig.suptitle(title, fontsize=11, x=0.01, ha="left", y=0.99)
    for side in ("top", "right"):
        top.spines[side].set_visible(False)
        bottom.spines[side].set_visible(False)

    spent = [r.money.total for r in reqs]
    nocache = [r.no_cache for r in reqs]
    bottom.bar(xs, nocache, color=NOCACHE, width=0.8, label="with no cache", alpha=0.55)
    bottom.bar(xs, spent, color=COST, width=0.5, label="cost")
    bottom.set_ylabel(f"cost ({cur})")
    bottom.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _p: money(v, cur)))
    bottom.legend(loc="lower left", bbox_to_anchor=(0, 1.0), fontsize=8, frameon=False, ncol=2)
    peaks = [x for x, r in zip(xs, reqs, strict=True) if r.quote.period == "peak"]
    for x in peaks:
        bottom.axvspan(x - 0.5, x + 0.5, ymin=0, ymax=0.035, color="#F28F3B", alpha=0.9, linewidth=0)
    label = "request (row of the log)" + ("; orange strip: billed at peak rates" if peaks else "")
    bottom.set_xlabel(label)
    step = max(1, len(xs) // 25)
    bottom.set_xticks(xs[::step], [str(r.row) for r in reqs][::step], fontsize=8)
    if report.causes:
        legend = "\n".join(f"▼B{i}  {c.cause[:90]}: {c.breaks:,} break(s), {c.recomputed:,} tokens recomputed, "
                           f"lost {money(c.lost, cur)}"
                           for c, i in zip(report.causes[:6], range(1, 7), strict=False))
        fig.text(0.01, 0.005, legend, fontsize=7.5, va="bottom", ha="left", color=BREAK)
        fig.subplots_adjust(bottom=0.12 + 0.025 * min(6, len(report.causes)))
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lower().lstrip("."), dpi=130, bbox_inches="tight")
    plt.close(fig)
    write_bytes_atomic(path, buf.getvalue())
