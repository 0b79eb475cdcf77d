"""Running an experiment: one protocol, two strategies, one result and one row schema.

`Runner.run(experiment, log)` sends or drives every request of one experiment and leaves one row per request
in `log`. The two strategies are `direct.DirectRunner` (a `[request]` experiment: the tool sends the planned
requests itself over HTTP) and `appdriver.AppRunner` (an `[app]` experiment: the real app, behind the
recording proxy). Both write rows of schema `analyzer.observe/1` built by `observation_row` (the proxy
builds its rows with it too), so one summary and one record read either.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from analyzer import __version__

if TYPE_CHECKING:
    import httpx

    from analyzer.apps.install import InstalledApp
    from analyzer.apps.private_home import TurnResult
    from analyzer.observe.client import Outcome
    from analyzer.observe.experiment import Experiment
    from analyzer.prefix.run import PrefixReport

SCHEMA = "analyzer.observe/1"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
APP_ROW_KEY = "app_reported"  # in a row of an app run: the app's own usage for that model call


@dataclass(frozen=True)
class SeriesTurn:
    """One turn of one series as the app ran it: the series, the factor's value, and what the turn did.

    `value_in_force` differs from `value` before a `from_turn` (the control's value still applies);
    `side_request` is what the endpoint reported for the other conversation sent in an interval's pause."""

    series: str
    value: Any
    result: TurnResult
    value_in_force: Any = None
    side_request: dict[str, Any] | None = None

    @property
    def failed(self) -> bool:
        return self.result.exit_code != 0 or any(r.get("error") for r in self.result.reported)

    def as_json(self) -> dict[str, Any]:
        """The turn in the app summary (`analyzer.observe.app-summary/1`)."""
        return {"series": self.series, "value": self.value, "value_in_force": self.value_in_force,
                **self.result.as_dict(), **({"side_request": self.side_request} if self.side_request else {})}


@dataclass
class AppRun:
    """What only a run through a real app has: the install, its turns, the proxy's log and the prefix analysis."""

    app: InstalledApp
    proxy_log: Path
    run_dir: Path
    turns: list[SeriesTurn] = field(default_factory=list)
    prefix: PrefixReport | None = None
    prefix_path: Path | None = None
    prefix_error: str | None = None
    lookup_note: str | None = None

    @property
    def failed_turns(self) -> int:
        return sum(1 for t in self.turns if t.failed)


@dataclass
class RunResult:
    """The rows of one run as they are on disk in `log`, and how the run ended."""

    log: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    planned: int = 0
    interrupted: bool = False
    stopped_on_error: bool = False
    server_version: str | None = None
    server_settings: dict[str, Any] | None = None  # the server's real settings, when it reports them
    app: AppRun | None = None

    @property
    def failed(self) -> int:
        bad_rows = sum(1 for r in self.rows if r.get("outcome") != "ok")
        return bad_rows + (self.app.failed_turns if self.app is not None else 0)


class Runner(Protocol):
    """How the requests of one experiment reach the server; every finished request is a row in `log`."""

    def run(self, exp: Experiment, log: Path) -> RunResult: ...


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


@dataclass(frozen=True)
class ServerInfo:
    """What the server says about itself, read once at the start of a run or a proxy (either may be None):
    its build (`llama.cpp <build>`) and its real settings (analyzer/engine/settings.py), copied into every row."""

    version: str | None
    settings: dict[str, Any] | None


def server_info(client: httpx.Client, base_url: str, headers: dict[str, str]) -> ServerInfo:
    """The server's build and settings, asked once."""
    from analyzer.engine.settings import server_settings

    return ServerInfo(server_version(client, base_url, headers), server_settings(base_url, headers, client=client))


def server_version(client: httpx.Client, base_url: str, headers: dict[str, str]) -> str | None:
    """llama.cpp's `/props` reports its build; other servers have no such endpoint, which is fine."""
    import httpx

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
