"""Round 3 → Round 2: turn an `analyze observe` log into a usage scenario, one request per observed row.

The provider's raw usage from each row is replayed verbatim through the pinned upstream usage code, so the ledger
shows what Pi and dsh would report for what the server really returned. Rows that failed, warm-ups and usage
shapes Pi's OpenAI-compatible parser does not take (no `prompt_tokens`, e.g. Anthropic-style) are skipped, each
with a note that says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from analyzer.errors import AnalyzerError
from analyzer.observe.jsonl import read_rows
from analyzer.usage.scenarios import Prices, Request, Scenario

NO_PRICES = Prices(cache_hit=0.0, cache_miss=0.0, output=0.0, as_of="not applicable",
                   source="no prices in an observation log: cost is computed at 0 per token, so the cost check only "
                          "shows that zero rates give zero")


def scenario_from_log(path: Path) -> tuple[Scenario, list[str]]:
    """The scenario (turn = row order) and notes about rows that were left out."""
    rows = read_rows(path)
    requests: list[Request] = []
    notes: list[str] = []
    for n, row in enumerate(rows, 1):
        where = f"{path.name} row {n} ({row.get('series', '?')} {row.get('index', '?')})"
        usage = row.get("usage")
        if row.get("measured") is False:
            notes.append(f"{where}: warm-up request, not replayed")
        elif row.get("outcome") != "ok" or not isinstance(usage, dict):
            notes.append(f"{where}: {row.get('outcome', 'no outcome')} without usage, not replayed")
        elif not isinstance(usage.get("prompt_tokens"), int | float):
            notes.append(f"{where}: usage has no prompt_tokens (not an OpenAI-compatible report), not replayed")
        else:
            requests.append(Request(turn=len(requests) + 1, step=0, usage=usage))
    if not requests:
        raise AnalyzerError(f"{path}: no row with an OpenAI-compatible usage to replay ({len(rows)} rows); pass a "
                            "log written by `analyze observe` with at least one successful request")
    first = next(r for r in rows if isinstance(r.get("usage"), dict))
    config: dict[str, Any] = first.get("config") or {}
    base_url = str(config.get("endpoint", ""))
    model = str(config.get("model", "")) or str((first.get("server") or {}).get("model", "unknown"))
    host = urlparse(base_url).hostname or ""
    provider = "deepseek" if host.endswith("deepseek.com") else "openai-compatible"
    scenario = Scenario(
        name=f"log:{path.name}",
        title=f"{first.get('experiment', '?')} observed at {base_url or '?'} — {len(requests)} of {len(rows)} rows "
              "replayed, raw usage verbatim",
        provider=provider, model=model, base_url=base_url, prices=NO_PRICES, requests=tuple(requests),
        registry=(provider, model) if provider == "deepseek" else None, path=str(path))
    return scenario, notes
