"""Prefix forensics: where consecutive real requests stop sharing a prefix, what the endpoint's rule predicts
as cached, what the server reported, and which pinned code wrote the first differing text.

`analyse(rows, against=None, engine_url=None, …) -> PrefixReport` works on the rows of a proxy log
(`analyzer.proxy`); `report_lines(report)` prints it, `report.as_json()` is schema `analyzer.prefix/1`.
"""

from __future__ import annotations

from analyzer.prefix.run import PrefixReport, RequestReport, analyse
from analyzer.prefix.text import report_lines

__all__ = ["PrefixReport", "RequestReport", "analyse", "report_lines"]
