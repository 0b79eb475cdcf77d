"""The direct strategy: a `[request]` experiment's planned requests sent over HTTP, in order, timing the real gaps.

A row is written (and synced) as soon as its request finishes, before the next one starts. Ctrl-C stops the run
between or during requests; the request in flight is dropped and every finished one is already on disk.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx

from analyzer.observe.client import Outcome, headers_for, send
from analyzer.observe.experiment import Experiment
from analyzer.observe.jsonl import RowWriter, read_rows
from analyzer.observe.plan import PlannedRequest, plan
from analyzer.observe.runner import LOOPBACK, RunResult, observation_row, server_info

OnRow = Callable[[dict[str, Any], int, int], None]  # (row, done, total), after each row is on disk


@dataclass(frozen=True)
class DirectRunner:
    """Sends the plan itself; the API key (the value) is sent as a bearer token and scrubbed from every row."""

    api_key: str | None = None
    stop_on_error: bool = False
    on_row: OnRow | None = None
    sleep: Callable[[float], None] = time.sleep

    def run(self, exp: Experiment, log: Path) -> RunResult:
        with RowWriter(log, [self.api_key] if self.api_key else []) as writer:
            return run_experiment(exp, writer, api_key=self.api_key, stop_on_error=self.stop_on_error,
                                  on_row=self.on_row, sleep=self.sleep)


def run_experiment(exp: Experiment, writer: RowWriter, *, api_key: str | None = None, stop_on_error: bool = False,
                   on_row: OnRow | None = None, sleep: Callable[[float], None] = time.sleep) -> RunResult:
    """Send every planned request; `on_row(row, done, total)` is called after each row is on disk."""
    requests = plan(exp)
    result = RunResult(log=writer.path, planned=len(requests))
    headers = headers_for(api_key)
    timeout = httpx.Timeout(exp.endpoint.timeout_s, connect=min(10.0, exp.endpoint.timeout_s))
    previous_start: float | None = None
    # proxies from the environment apply to remote APIs, never to a local engine (a proxy would answer instead)
    trust_env = urlparse(exp.endpoint.url).hostname not in LOOPBACK
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=trust_env) as client:
            info = server_info(client, exp.endpoint.base_url or "", headers)
            result.server_version, result.server_settings = info.version, info.settings
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
