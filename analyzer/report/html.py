"""`trace.html`: one self-contained page (inline CSS, Pygments highlighting, no scripts, no network)."""

from __future__ import annotations

from importlib import resources
from typing import Any

import jinja2
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import JavascriptLexer, TypeScriptLexer

from analyzer.report.markdown import BRANCH_LABEL, hazards_sentence
from analyzer.report.svg import render_svg

CSS_CLASS = "src"


def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("analyzer.report", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"]), keep_trailing_newline=True)


def _segments(hop: dict[str, Any]) -> list[dict[str, Any]]:
    """Highlight each contiguous run of quoted lines with its real line numbers and the call lines marked."""
    lexer = JavascriptLexer() if hop["language"] == "javascript" else TypeScriptLexer()
    runs: list[list[dict[str, Any]]] = [[]]
    for x in hop["excerpt"]:
        if x.get("gap"):
            runs.append([])
        else:
            runs[-1].append(x)
    out: list[dict[str, Any]] = []
    for i, run in enumerate(r for r in runs if r):
        if i:
            out.append({"gap": True})
        marks = [k + 1 for k, x in enumerate(run) if x["mark"]]
        fmt = HtmlFormatter(cssclass=CSS_CLASS, linenos="inline", linenostart=run[0]["line"], hl_lines=marks,
                            wrapcode=True)
        out.append({"html": highlight("\n".join(x["text"] for x in run) + "\n", lexer, fmt)})
    return out


def _diff_class(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "meta"
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")


def render_html(report: dict[str, Any]) -> str:
    hops = [dict(h, segments=_segments(h) if h["excerpt"] else []) for h in report["hops"]]
    css = resources.files("analyzer.report").joinpath("templates/report.css").read_text(encoding="utf-8")
    pygments_css = HtmlFormatter(style="default").get_style_defs(f".{CSS_CLASS}")
    template = _env().get_template("trace.html.j2")
    return template.render(r=dict(report, hops=hops), css=css, pygments_css=pygments_css,
                           branch_label=BRANCH_LABEL, diff_class=_diff_class,
                           hazards_sentence=hazards_sentence(report), svg=render_svg(report["trace"]))
