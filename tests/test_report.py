"""Report: per-hop permalinks, excerpts with the call lines marked, notes; Markdown, HTML and JSON renderings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from recheck_fixtures import Upstreams, graph_at, make_upstreams, pins_json, reader

from analyzer.annotations import Note
from analyzer.graph.queries import resolve_one
from analyzer.report import build_report, permalink, render_html, render_markdown, report_dirname, write_report
from analyzer.report.model import FULL_BODY_LINES, excerpt_lines
from analyzer.trace.pathfinding import find_paths
from analyzer.trace.render import validate_mermaid
from analyzer.trace.result import trace_result


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Upstreams:
    return make_upstreams(tmp_path_factory.mktemp("upstreams"))


def make_report(up: Upstreams, lib_commit: str, notes: list[Note] | None = None,
                url: str | None = None) -> dict:
    commits = {"app": up.a1, "lib": lib_commit}
    g = graph_at(up, commits)
    pins = pins_json(up, commits)
    if url:
        pins["lib"]["url"] = url
    src, dst = resolve_one(g, "renderPrompt"), resolve_one(g, "parseUsage")
    trace = trace_result(g, "renderPrompt", "parseUsage", find_paths(g, src.endpoints, dst.endpoints), pins)
    return build_report(trace, g, reader(up), notes)


def test_permalink_only_for_github() -> None:
    sha = "c" * 40
    assert permalink("https://github.com/o/r.git", sha, "a/b.ts", 3, 9) == f"https://github.com/o/r/blob/{sha}/a/b.ts#L3-L9"
    assert permalink("git@github.com:o/r.git", sha, "a.ts", 4, 4) == f"https://github.com/o/r/blob/{sha}/a.ts#L4"
    assert permalink("/srv/mirror/r", sha, "a.ts", 1, 2) is None


def test_excerpt_is_whole_for_short_bodies_and_windowed_for_long_ones() -> None:
    assert excerpt_lines(10, 12, [11]) == [10, 11, 12]
    long_end = 10 + FULL_BODY_LINES + 50
    picked = excerpt_lines(10, long_end, [40])
    assert picked[:3] == [10, 11, 12] and picked[-1] == long_end
    assert None in picked and 40 in picked and 37 in picked and 43 in picked and 60 not in picked


def test_hops_have_excerpts_call_marks_permalinks_and_notes(up: Upstreams) -> None:
    g1 = graph_at(up, {"app": up.a1, "lib": up.l1})
    a = g1.nodes["lib:src/old/usage.ts:parseUsage"]
    notes = [Note("lib", "parseUsage", "counts characters", up.l1, a["body_hash"], a["path"]),
             Note("lib", "nowhere", "a symbol that never existed", up.l1, "x")]
    r = make_report(up, up.l2, notes, url="https://github.com/fx/lib")
    symbols = [h["symbol"] for h in r["hops"]]
    assert symbols == ["Agent.step", "renderPrompt", "Agent.finish", "send", "parseUsage"]
    step = r["hops"][0]
    assert step["branch"] == "anchor" and step["calls"] == [6, 7]
    marked = [x["line"] for x in step["excerpt"] if x.get("mark")]
    assert marked == [6, 7]
    assert next(x["text"] for x in step["excerpt"] if x["line"] == 6).strip() == "const p = renderPrompt(input);"
    last = r["hops"][-1]
    assert last["permalink"] == f"https://github.com/fx/lib/blob/{up.l2}/src/api/usage.ts#L2-L5"
    assert r["hops"][0]["permalink"] is None  # app's url is a local path
    assert last["incoming"]["kind"] == "direct" and last["incoming"]["call_line"] == 4
    assert last["note"]["status"] == "stale" and last["note"]["moved"] is True
    assert "+  return words.length;" in last["note"]["diff"]
    assert [n["symbol"] for n in r["other_notes"]] == ["nowhere"] and r["other_notes"][0]["status"] == "orphaned"


def test_markdown_has_pins_diagram_and_a_section_per_hop(up: Upstreams) -> None:
    r = make_report(up, up.l1)
    md = render_markdown(r)
    assert f"| lib | `{up.l1}` |" in md
    mermaid = md.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert validate_mermaid(mermaid) == []
    for hop in r["hops"]:
        assert f'<a id="{hop["id"]}"></a>' in md
        assert f"## {hop['index']}. `{hop['symbol']}`" in md
    assert "(rule `named-events`)" in md  # the dispatch hop names its rule
    assert re.search(r"^>\s+4 │   return bus\.emit", md, re.M)  # send's call line is marked


def test_html_is_self_contained_and_lists_every_hop(up: Upstreams) -> None:
    r = make_report(up, up.l1)
    html = render_html(r)
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing is fetched (permalinks would be <a href>)
    nav = html.split('<nav id="hops"', 1)[1].split("</nav>", 1)[0]
    for hop in r["hops"]:
        assert f'href="#{hop["id"]}"' in nav and hop["symbol"] in nav
        assert f'id="{hop["id"]}"' in html
    assert 'class="hll"' in html  # call lines highlighted


def test_write_report_writes_three_files_and_json_round_trips(up: Upstreams, tmp_path: Path) -> None:
    r = make_report(up, up.l1)
    files = write_report(r, tmp_path / report_dirname(r["pins"]))
    assert [f.name for f in files] == ["trace.md", "trace.html", "trace.json"]
    assert files[0].parent.name == f"{up.a1[:10]}_{up.l1[:10]}"
    back = json.loads(files[2].read_text())
    assert back["schema"] == "analyzer.report/1" and [h["node"] for h in back["hops"]] == [h["node"] for h in r["hops"]]


def test_no_path_still_writes_a_report(up: Upstreams) -> None:
    r = make_report(up, up.l4)
    assert not r["found"] and r["hops"] == []
    assert "No request path found" in render_markdown(r)
    assert "No request path found" in render_html(r)


def _trace_with_seam() -> dict:
    """A small common-caller trace whose last edge is a possible seam (shapes only, names made up)."""
    hop = {"repo": "app", "end_line": 9, "kind": "function"}
    hops = [dict(hop, node="app:a.ts:Agent.step", symbol="Agent.step", path="src/a.ts", line=1, branch="anchor",
                 via=None),
            dict(hop, node="app:p.ts:render", symbol="render", path="src/p.ts", line=2, branch="from", via=0),
            dict(hop, node="app:r.ts:Runtime.call", symbol="Runtime.call", path="src/r.ts", line=3, branch="to",
                 via=1),
            dict(hop, node="app:x.ts:PiAdapter.call", symbol="PiAdapter.call", path="src/x.ts", line=4,
                 branch="to", via=2)]
    edge = {"confidence": 1.0, "call_text": "", "evidence": [], "nested": 0, "test_alternatives": [], "rule": None}
    edges = [dict(edge, source=hops[0]["node"], target=hops[1]["node"], kind="direct", possible=False,
                  call_path="src/a.ts", call_line=2, alternatives=[]),
             dict(edge, source=hops[0]["node"], target=hops[2]["node"], kind="method", possible=False,
                  call_path="src/a.ts", call_line=3, alternatives=[]),
             dict(edge, source=hops[2]["node"], target=hops[3]["node"], kind="interface", possible=True,
                  call_path="src/r.ts", call_line=5, alternatives=["app:n.ts:NativeAdapter.call"])]
    return {"found": True, "mode": "common-caller", "from": "render", "to": "PiAdapter.call", "hops": hops,
            "edges": edges}


def test_svg_layout_puts_the_anchor_on_top_and_one_column_per_branch() -> None:
    from analyzer.report.svg import layout

    boxes, arrows, width, height = layout(_trace_with_seam())
    anchor, render, runtime, adapter = boxes
    assert anchor.y < render.y == runtime.y < adapter.y
    assert render.x + render.w < runtime.x and runtime.x == adapter.x  # FROM left, TO right, stacked
    assert [(a.source, a.target, a.possible) for a in arrows] == [(1, 2, False), (1, 3, False), (3, 4, True)]
    assert arrows[2].label == "L5 interface possible (+1 other target)"
    assert all(b.x + b.w <= width and b.y + b.h <= height for b in boxes)
    # boxes never overlap
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y


def test_svg_marks_possible_edges_dashed_and_links_every_hop() -> None:
    from analyzer.report.svg import render_svg

    svg = render_svg(_trace_with_seam())
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg.count('class="edge certain"') == 2 and svg.count('class="edge possible"') == 1
    assert svg.count("stroke-dasharray") == 1
    possible = svg.split('class="edge possible"', 1)[1].split("</g>", 1)[0]
    assert "stroke-dasharray" in possible and "L5 interface possible (+1 other target)" in possible
    for i in range(1, 5):
        assert f'<a href="#hop-{i}">' in svg
    assert "<script" not in svg and "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert render_svg({"found": False, "hops": []}) == ""


def test_html_report_draws_the_path_and_markdown_keeps_mermaid(up: Upstreams) -> None:
    r = make_report(up, up.l1)
    html = render_html(r)
    figure = html.split('<figure class="path">', 1)[1].split("</figure>", 1)[0]
    assert figure.count('<g class="hop ') == len(r["hops"]) == 7
    assert figure.count('<g class="edge ') == len(r["trace"]["edges"])
    assert "L4 dispatch:named-events" in figure
    assert "Mermaid source" not in html
    assert "```mermaid" in render_markdown(r)


def test_markdown_and_html_say_how_many_hazards_were_checked_even_when_none_is_on_the_path(up: Upstreams) -> None:
    r = make_report(up, up.l2)
    assert "Hazards:" not in render_markdown(r)  # --no-hazards: nothing was checked, nothing is claimed
    r["hazards"] = {"available": True, "reason": None, "findings": 7, "marked": 0}
    for text in (render_markdown(r), render_html(r)):
        assert "7 finding(s) of `analyze hazards` checked against the path; none of them is on this path" in \
            text.replace("<code>", "`").replace("</code>", "`")
    r["hazards"] = {"available": True, "reason": None, "findings": 7, "marked": 2}
    assert "2 enter the path (marked at their hops)" in render_markdown(r)
    r["hazards"] = {"available": False, "reason": "OSError: gone", "findings": 0}
    assert "Hazards: not checked (OSError: gone)." in render_markdown(r)
