"""The library under the `analyze` command line: every command is argument parsing, one call here,
and rendering. Nothing here reads parsed arguments or prints; see docs/api.md.

    from analyzer import api
    session = api.open_session("repos.lock")
    result = api.trace(session, api.TraceOptions("renderPrompt", "parseChunkUsage"))

Importing this package is light (no networkx, GitPython or tree-sitter until a call needs them).
"""

from analyzer.api.analysis import open_analysis, pins_at
from analyzer.api.session import Session, open_session
from analyzer.api.trace import TraceOptions, TraceResult, trace

__all__ = ["Session", "TraceOptions", "TraceResult", "open_analysis", "open_session", "pins_at", "trace"]
