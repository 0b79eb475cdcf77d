"""`analyze report`: the traced path written as trace.md, trace.html and trace.json.

Public API:
- `build_report(trace, graph, reader, notes) -> dict` (schema in `analyzer.report.model`).
- `render_markdown(report)`, `render_html(report)`, `write_report(report, out_dir) -> list[Path]`.
- `SourceReader`, `reader_for(ctx, pins)`, `permalink(url, commit, path, a, b)`.
"""

from analyzer.report.html import render_html
from analyzer.report.markdown import render_markdown
from analyzer.report.model import build_report, report_dirname
from analyzer.report.source import SourceReader, permalink, reader_for
from analyzer.report.write import write_report

__all__ = ["build_report", "report_dirname", "render_html", "render_markdown", "SourceReader", "permalink",
           "reader_for", "write_report"]
