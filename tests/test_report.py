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
from analyzer.trace.paths import find_paths
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
