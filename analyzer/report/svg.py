"""The request path drawn as an inline SVG: the anchor, the two branches, each edge's kind, solid or dashed.

Laid out here (no layout library, no scripts, no fonts to fetch): one column per branch, hops stacked in call
order, an arrow per edge from the caller's box to the callee's. Certain edges are solid, possible ones
(dynamic seams with several live targets) dashed. Each box links to its hop section of the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

CHAR_W = 7.4  # px per character of the 12px monospace labels (generous, so text stays inside its box)
BOX_H = 40
PAD_X = 10
MARGIN = 16
ROW_GAP = 46  # vertical room between boxes for the edge label
COL_GAP = 48
MAX_CHARS = 60
FILL = {"anchor": "#fff4d6", "from": "#e8f1fb", "to": "#eaf6ec", "path": "#eaf6ec"}
STROKE = "#57606a"


@dataclass(frozen=True)
class Box:
    """One hop's rectangle (top-left x/y) and its two text lines."""

    index: int
    hop_id: str
    branch: str
    x: float
    y: float
    w: float
    h: float
    title: str
    subtitle: str


@dataclass(frozen=True)
class Arrow:
    """One edge: from the caller's box to the callee's, with its label and whether it is only possible."""

    source: int
    target: int
    label: str
    possible: bool
    x1: float
    y1: float
    x2: float
    y2: float


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def _label(edge: dict[str, Any]) -> str:
    rule = f":{edge['rule']}" if edge.get("rule") else ""
    others = len(edge.get("alternatives") or [])
    seam = (" possible" + (f" (+{others} other target{'s' if others > 1 else ''})" if others else "")
            if edge.get("possible") else "")
    return _clip(f"L{edge['call_line']} {edge['kind']}{rule}{seam}")


def layout(trace: dict[str, Any]) -> tuple[list[Box], list[Arrow], float, float]:
    """Boxes, arrows and the drawing's width and height for a trace (analyzer.trace/1)."""
    hops, edges = trace["hops"], trace["edges"]
    texts = [(_clip(h["symbol"]), _clip(f"{h['repo']}:{h['path'].rsplit('/', 1)[-1]}:{h['line']}")) for h in hops]

    def width(i: int) -> float:
        return max(len(texts[i][0]), len(texts[i][1])) * CHAR_W + 2 * PAD_X

    columns: dict[str, list[int]] = {"from": [], "to": []}
    top: list[int] = []
    for i, h in enumerate(hops):
        if h["branch"] == "anchor" or (h["branch"] == "path" and not top):
            top.append(i)
        else:
            columns["to" if h["branch"] in ("to", "path") else "from"].append(i)
    label_w = {i: len(_label(edges[hops[i]["via"]])) * CHAR_W + 8 for i in range(len(hops))
               if hops[i]["via"] is not None}
    col_w = {name: max([width(i) / 2 + label_w.get(i, 0) for i in idx] + [width(i) for i in idx] + [0])
             for name, idx in columns.items()}
    pos: dict[int, tuple[float, float, float]] = {}
    y0: float = MARGIN
    for i in top:
        pos[i] = (MARGIN, y0, width(i))
    y_branch = y0 + (BOX_H + ROW_GAP if top else 0)
    x: float = MARGIN
    for name in ("from", "to"):
        for k, i in enumerate(columns[name]):
            pos[i] = (x, y_branch + k * (BOX_H + ROW_GAP), width(i))
        if columns[name]:
            x += col_w[name] + COL_GAP
    boxes = [Box(i + 1, f"hop-{i + 1}", h["branch"], *pos[i][:2], pos[i][2], BOX_H, *texts[i])
             for i, h in enumerate(hops)]
    node_index = {h["node"]: i for i, h in enumerate(hops)}
    arrows = []
    for i, h in enumerate(hops):
        if h["via"] is None:
            continue
        e = edges[h["via"]]
        src = boxes[node_index.get(e["source"], 0)]
        dst = boxes[i]
        x2 = dst.x + min(dst.w / 2, 40)
        x1 = min(max(x2, src.x + 12), src.x + src.w - 12)
        arrows.append(Arrow(src.index, dst.index, _label(e), bool(e.get("possible")), x1, src.y + src.h, x2, dst.y))
    width_total = max([b.x + b.w for b in boxes] + [a.x2 + 8 + len(a.label) * CHAR_W for a in arrows] + [0])
    height_total = max([b.y + b.h for b in boxes] + [0]) + MARGIN
    return boxes, arrows, width_total + MARGIN, height_total


def render_svg(trace: dict[str, Any]) -> str:
    """The inline `<svg>` element (empty string when there is no path)."""
    if not trace.get("found") or not trace.get("hops"):
        return ""
    boxes, arrows, w, h = layout(trace)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="path-drawing" width="{w:.0f}" height="{h:.0f}" '
           f'viewBox="0 0 {w:.0f} {h:.0f}" role="img" aria-label="request path {escape(trace["from"])} → '
           f'{escape(trace["to"])}" font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" '
           'font-size="12">',
           '<defs><marker id="arrowhead" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{STROKE}"/></marker></defs>']
    for a in arrows:
        dash = ' stroke-dasharray="6 4"' if a.possible else ""
        kind = "possible" if a.possible else "certain"
        mid = (a.y1 + a.y2) / 2
        d = f"M{a.x1:.1f},{a.y1:.1f} C{a.x1:.1f},{mid:.1f} {a.x2:.1f},{mid:.1f} {a.x2:.1f},{a.y2:.1f}"
        out.append(f'<g class="edge {kind}" data-source="hop-{a.source}" data-target="hop-{a.target}">'
                   f"<title>{escape(a.label)}</title>"
                   f'<path d="{d}" fill="none" stroke="{STROKE}" stroke-width="1.5"{dash} '
                   'marker-end="url(#arrowhead)"/>'
                   f'<text x="{a.x2 + 6:.1f}" y="{mid + 4:.1f}" fill="#24292f">{escape(a.label)}</text></g>')
    for b in boxes:
        out.append(f'<a href="#{b.hop_id}"><g class="hop {b.branch}" id="svg-{b.hop_id}">'
                   f"<title>{escape(b.title)} — {escape(b.subtitle)}</title>"
                   f'<rect x="{b.x:.1f}" y="{b.y:.1f}" width="{b.w:.1f}" height="{b.h}" rx="6" '
                   f'fill="{FILL.get(b.branch, "#ffffff")}" stroke="{STROKE}" stroke-width="1"/>'
                   f'<text x="{b.x + PAD_X:.1f}" y="{b.y + 16:.1f}" font-weight="bold" fill="#24292f">'
                   f"{escape(b.title)}</text>"
                   f'<text x="{b.x + PAD_X:.1f}" y="{b.y + 32:.1f}" fill="#57606a">{escape(b.subtitle)}</text>'
                   "</g></a>")
    out.append("</svg>")
    return "".join(out)
