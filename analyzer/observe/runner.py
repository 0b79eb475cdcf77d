"""Run an experiment: send the planned requests in order, timing the real gaps, and write one row per request.

A row is written (and synced) as soon as its request finishes, before the next one starts. Ctrl-C stops the run
between or during requests; the request in flight is dropped and every finished one is already on disk.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import httpx

from analyzer import __version__
from analyzer.observe.client import Outcome, headers_for, send
from analyzer.observe.experiment import Experiment
from analyzer.observe.jsonl import RowWriter, read_rows
from analyzer.observe.plan import PlannedRequest, plan

SCHEMA = "analyzer.observe/1"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass
class RunResult:
    rows: list[dict[str, Any]] = field(default_factory=list)
    planned: int = 0
    interrupted: bool = False
    stopped_on_error: bool = False
    server_version: str | None = None
    server_settings: dict[str, Any] | None = None

    @property
    def failed(self) -> int:
        return sum(1 for r in self.rows if r["outcome"] != "ok")


def run_experiment(exp: Experiment, writer: RowWriter, *, api_key: str | None = None, stop_on_error: bool = False,
                   on_row: Callable[[dict[str, Any], int, int], None] | None = None,
                   sleep: Callable[[float], None] = time.sleep) -> RunResult:
    """Send every planned request; `on_row(row, done, total)` is called after each row is on disk."""
    requests = plan(exp)
    result = RunResult(planned=len(requests))
    headers = headers_for(api_key)
    timeout = httpx.Timeout(exp.endpoint.timeout_s, connect=min(10.0, exp.endpoint.timeout_s))
    previous_start: float | None = None
    # proxies from the environment apply to remote APIs, never to a local engine (a proxy would answer instead)
    trust_env = urlparse(exp.endpoint.base_url).hostname not in LOOPBACK
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=trust_env) as client:
            info = server_info(client, exp.endpoint.base_url, headers)
            result.server_version, result.server_settings = info["version"], info["settings"]
            for planned in requests:
                if planned.wait_s > 0:
                    sleep(planned.wait_s)
                started_at = _dt.datetime.now(_dt.UTC)
                start = time.monotonic()
                outcome = send(client, exp.endpoint.url, headers, planned.body(exp),
                               retries_429=exp.run.retries_429, max_retry_wait_s=exp.run.max_retry_wait_s,
                               sleep=sleep)
                gap = None if previous_start is None else round(start - previous_start, 6)
                previous_start = start
                row = build_row(exp, planned, outcome, started_at, gap, result.server_version,
                                result.server_settings)
                writer.write(row)
                result.rows.append(row)
                if on_row is not None:
                    on_row(row, len(result.rows), len(requests))
                if stop_on_error and not outcome.ok:
                    result.stopped_on_error = True
                    break
    except KeyboardInterrupt:
        # What counts is what is durably on disk: Ctrl-C can land anywhere between a row's fsync and the
        # bookkeeping here, so the finished rows are read back from the log instead of trusted from memory.
        result.rows = read_rows(writer.path) if writer.rows else []
        result.interrupted = True
    return result


def build_row(exp: Experiment, planned: PlannedRequest, outcome: Outcome, started_at: _dt.datetime,
              since_previous_s: float | None, server_version: str | None,
              server_settings: dict[str, Any] | None = None) -> dict[str, Any]:
    config = {
        "endpoint": exp.endpoint.base_url,
        "url": exp.endpoint.url,
        "model": exp.endpoint.model,
        "max_tokens": exp.run.max_tokens,
        "stream": exp.run.stream,
        "temperature": exp.run.temperature,
        "api_key_env": exp.endpoint.api_key_env,
        "overrides": dict(exp.overrides),
        "experiment_file": exp.path,
    }
    return observation_row(experiment=exp.name, factor=exp.vary.factor, series=planned.series, index=planned.index,
                           measured=planned.measured, value=planned.value, started_at=started_at,
                           wait_s=planned.wait_s, since_previous_s=since_previous_s, outcome=outcome, config=config,
                           parts=planned.parts(), server_version=server_version, server_settings=server_settings)


def observation_row(*, experiment: str, factor: str | None, series: str, index: int, measured: bool, value: Any,
                    started_at: _dt.datetime, wait_s: float | None, since_previous_s: float | None,
                    outcome: Outcome, config: dict[str, Any], parts: dict[str, Any],
                    server_version: str | None, server_settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """One row of schema `analyzer.observe/1`, for a planned request or one a recording proxy passed on.

    `server.settings` holds the server's real settings (analyzer/engine/settings.py) when it reports them."""
    server = dict(outcome.server)
    server.pop("retry_after", None)
    if server_version:
        server["version"] = server_version
    if server_settings:
        server["settings"] = server_settings
    return {
        "schema": SCHEMA,
        "experiment": experiment,
        "factor": factor,
        "series": series,
        "index": index,
        "measured": measured,
        "value": value,
        "started_at": started_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "wait_s": wait_s,
        "since_previous_s": since_previous_s,
        "ttft_s": _round(outcome.ttft_s),
        "total_s": _round(outcome.total_s),
        "status": outcome.status,
        "outcome": outcome.outcome,
        "usage": outcome.usage,
        "timings": outcome.timings,
        "finish_reason": outcome.finish_reason,
        "output_chars": outcome.output_chars,
        "config": config,
        "parts": parts,
        "server": server,
        "error": outcome.error,
        "retries": outcome.retries,
        "analyzer": __version__,
    }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def server_info(client: httpx.Client, base_url: str, headers: dict[str, str]) -> dict[str, Any]:
    """{"version": …, "settings": …} read once at the start of a run or a proxy (either may be None)."""
    from analyzer.engine.settings import server_settings

    return {"version": server_version(client, base_url, headers),
            "settings": server_settings(base_url, headers, client=client)}


def server_version(client: httpx.Client, base_url: str, headers: dict[str, str]) -> str | None:
    """llama.cpp's `/props` reports its build; other servers have no such endpoint, which is fine."""
    root = base_url.rstrip("/")
    if root.endswith("/v1"):
        root = root[:-3]
    try:
        response = client.get(f"{root}/props", headers=headers, timeout=5.0)
        if response.status_code == 200:
            data = response.json()
            build = data.get("build_info") if isinstance(data, dict) else None
            if isinstance(build, str) and build:
                return f"llama.cpp {build}"
    except (httpx.HTTPError, ValueError):
        pass
    return None
