"""Write the three report files atomically (a reader never sees half a report file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analyzer.atomic import write_text_atomic
from analyzer.report.html import render_html
from analyzer.report.markdown import render_markdown


def write_report(report: dict[str, Any], out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "trace.md": render_markdown(report),
        "trace.html": render_html(report),
        "trace.json": json.dumps(report, indent=2, ensure_ascii=False) + "\n",
    }
    written = []
    for name, text in files.items():
        write_text_atomic(out_dir / name, text)
        written.append(out_dir / name)
    return written
