"""The library under the `analyze` command line: every command is argument parsing, one call here,
and rendering. Nothing here reads parsed arguments or prints; see docs/api.md.

    from analyzer import api
    session = api.open_session("repos.lock")
    result = api.trace(session, api.TraceOptions("renderPrompt", "parseChunkUsage"))

Importing this package is light (no networkx, GitPython or tree-sitter until a call needs them).
"""

from analyzer.api.analysis import open_analysis, pins_at
from analyzer.api.attention import AttentionOptions, AttentionResult, attention
from analyzer.api.hazards import HazardOptions, HazardsResult, hazards
from analyzer.api.kv_size import CustomModel, KvSizeOptions, KvSizeResult, kv_size
from analyzer.api.neighbours import NeighbourOptions, NeighbourResult, callees, callers
from analyzer.api.observe import ObserveOptions, ObserveResult, observe
from analyzer.api.prefix import PrefixOptions, prefix
from analyzer.api.recheck import RecheckOptions, RecheckResult, recheck
from analyzer.api.reconcile import ReconcileOptions, ReconcileResult, reconcile, shipped_scenarios
from analyzer.api.report import ReportOptions, ReportResult, report
from analyzer.api.session import Session, open_session
from analyzer.api.sources import RepoStatus, status, sync
from analyzer.api.symbols import SymbolsResult, symbols
from analyzer.api.trace import TraceOptions, TraceResult, trace

__all__ = [
    "AttentionOptions", "AttentionResult", "CustomModel", "HazardOptions", "HazardsResult", "KvSizeOptions",
    "KvSizeResult", "NeighbourOptions", "NeighbourResult", "ObserveOptions", "ObserveResult", "PrefixOptions",
    "RecheckOptions", "RecheckResult", "ReconcileOptions", "ReconcileResult", "RepoStatus", "ReportOptions",
    "ReportResult", "Session", "SymbolsResult", "TraceOptions", "TraceResult", "attention", "callees", "callers",
    "hazards", "kv_size", "observe", "open_analysis", "open_session", "pins_at", "prefix", "recheck", "reconcile",
    "report", "shipped_scenarios", "status", "symbols", "sync", "trace",
]
