"""The app strategy: an `[app]` experiment's requests built by the real app, behind the recording proxy, control
session then treatment session(s).

Why one set of paths for every series: the app writes its private home, session directory and working directory
into what it sends (Pi names its config and working directories in the system prompt), so a control and a
treatment that lived in different directories would differ in two things. Every series therefore runs in the same
paths — each starts fresh (an empty home and session store) and its files are moved aside when it ends — and only
the experiment's one factor differs.
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analyzer.apps.install import InstalledApp
from analyzer.apps.private_home import AppSession
from analyzer.apps.profile import fill
from analyzer.observe.experiment import Experiment
from analyzer.observe.jsonl import RowWriter, read_rows
from analyzer.observe.runner import APP_ROW_KEY, AppRun, RunResult, SeriesTurn
from analyzer.requests.usage import read_usage

Say = Callable[[str], None]


@dataclass(frozen=True)
class AppRunner:
    """Drives the installed app through one recording proxy in front of `upstream`; `engine_url` (a local
    engine's root) lets the prefix analysis count tokens, `lookup` finds the literal that wrote a text."""

    app: InstalledApp
    upstream: str
    engine_url: str | None = None
    say: Say = print
    lookup: Any = None
    lookup_note: str | None = None

    def run(self, exp: Experiment, log: Path) -> RunResult:
        """Control then treatment; rows (with the app's own usage) in `log`, the prefix analysis beside it."""
        from analyzer.engine.settings import server_settings
        from analyzer.proxy import start_proxy

        app, spec = self.app, exp.app
        run_dir = log.with_suffix(".run")  # beside its log: the app's outputs and private homes
        run_dir.mkdir(parents=True)
        turns: list[SeriesTurn] = []
        # the app's context window follows the slot's (asked of the server itself, never through the proxy)
        window = (server_settings(self.upstream) or {}).get("ctx_per_slot") if app.profile.uses_context_window \
            else None
        with start_proxy(self.upstream, run_dir, api_key_env=exp.endpoint.api_key_env, log_name="proxy") as proxy:
            for series, value in exp.vary.series():
                session = _session(exp, app, proxy.base_url, run_dir, exp.vary.value_at(value, 1), window)
                for n, prompt in enumerate(spec.turns, 1):
                    side = self._pause(exp, value, n)
                    now = exp.vary.value_at(value, n)
                    if n > 1 and now != exp.vary.value_at(value, n - 1):  # the value changes inside the session
                        _set_value(exp, session, now, run_dir)
                    proxy.label(series, factor=exp.vary.factor, value=value, turn=n)
                    self.say(f"observe: {exp.name}: {series} turn {n} of {len(spec.turns)} ({app.profile.name})")
                    turn = session.run_turn(prompt)
                    turns.append(SeriesTurn(series, value, turn, value_in_force=now, side_request=side))
                _set_aside(session, run_dir / series)  # the turns' stdout paths move with the files
            proxy_log = proxy.log_path
        rows = [_with_experiment(r, exp, app) for r in read_rows(proxy_log) if r.get("measured", True)]
        attach_reported(rows, turns)
        with RowWriter(log) as writer:
            for row in rows:
                writer.write(row)
        app_run = AppRun(app=app, proxy_log=proxy_log, run_dir=run_dir, turns=turns, lookup_note=self.lookup_note)
        result = RunResult(log=log, rows=rows, planned=len(rows), app=app_run)
        _analyse_prefix(result, app_run, self.engine_url, self.lookup)
        return result

    def _pause(self, exp: Experiment, value: str | None, turn: int) -> dict[str, Any] | None:
        """interval: the idle time before this turn; a side conversation, when given, is sent to the endpoint at
        the start of the pause (another user taking the engine's slot), straight to it and not into the rows."""
        seconds = exp.vary.pause_s(value, turn)
        if seconds <= 0:
            return None
        side = _side_request(self.upstream, exp, turn) if exp.vary.side_prompt else None
        self.say(f"observe: {exp.name}: idle {seconds:,.0f} s before turn {turn}")
        time.sleep(seconds)
        return side


def _side_request(upstream: str, exp: Experiment, turn: int) -> dict[str, Any]:
    """One chat request of another conversation; what the endpoint reported, for the turn's record."""
    import httpx

    body = {"model": exp.endpoint.model, "max_tokens": 4,
            "messages": [{"role": "user", "content": f"{exp.vary.side_prompt} (before turn {turn})"}]}
    url = upstream.rstrip("/") + "/chat/completions"
    try:
        response = httpx.post(url, json=body, timeout=exp.endpoint.timeout_s, trust_env=False)
        usage = response.json().get("usage") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError) as exc:
        return {"url": url, "error": f"{type(exc).__name__}"}
    u = read_usage(usage if isinstance(usage, dict) else None)
    return {"url": url, "status": response.status_code, "prompt": u.prompt, "cached": u.cached}


def _session(exp: Experiment, app: InstalledApp, base_url: str, run_dir: Path, value: str | None,
             context_window: int | None = None) -> AppSession:
    session = AppSession(app, base_url, exp.endpoint.model, run_dir, max_tokens=exp.run.max_tokens,
                         api=exp.app.api, context_window=context_window)
    _set_value(exp, session, value, run_dir)
    return session


def _set_value(exp: Experiment, session: AppSession, value: str | None, run_dir: Path) -> None:
    """Give the app `value` of the factor (for the next turn it runs)."""
    if value is None or exp.vary.factor == "interval":
        return
    filled = fill(value, {**session.placeholders(), "run_dir": str(run_dir)})
    vary = exp.vary
    if vary.factor == "env":
        assert vary.name is not None
        session.env[vary.name] = filled
        _make_path(filled, run_dir, vary.link_to, session)
    elif vary.factor == "cwd":
        target = Path(filled) if Path(filled).is_absolute() else run_dir / filled
        _make_path(str(target), run_dir, vary.link_to, session, always=True)
        session.cwd = target
    elif vary.factor == "arg":
        session.extra_args = shlex.split(filled)
    elif vary.factor == "config-file" and filled:
        assert vary.path is not None
        session.files[vary.path] = value


def _make_path(value: str, run_dir: Path, link_to: str | None, session: AppSession, *, always: bool = False) -> None:
    """A path value inside the run that does not exist yet is made: a symlink to `link_to`, else a directory."""
    path = Path(value)
    if not path.is_absolute() or path.exists():
        return
    if not always and run_dir not in path.parents:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if link_to:
        os.symlink(fill(link_to, session.placeholders()), path)
    else:
        path.mkdir(parents=True)


def _set_aside(session: AppSession, dest: Path) -> None:
    """Move what this series wrote under `dest`, so the next series starts fresh in the same paths."""
    dest.mkdir(parents=True, exist_ok=True)
    for d in (session.home, session.session_dir, session.user_home):
        if d.exists():
            shutil.move(str(d), str(dest / d.name))
    for f in session.run_dir.glob("turn-*.std*"):
        shutil.move(str(f), str(dest / f.name))
    for turn in session.turns:
        turn.stdout = dest / turn.stdout.name


def _with_experiment(row: dict[str, Any], exp: Experiment, app: InstalledApp) -> dict[str, Any]:
    row = dict(row)
    row["experiment"] = exp.name
    row["factor"] = exp.vary.factor
    config = dict(row.get("config") or {})
    config["experiment_file"] = exp.path
    config["overrides"] = dict(exp.overrides)
    row["config"] = config
    row["app"] = {"profile": app.profile.name, "version": app.version, "version_from": app.version_source,
                  "commit": app.commit, "turn": (row.get("label") or {}).get("turn"),
                  "api": app.profile.api_base_url(exp.app.api)[0] or None}
    if exp.source:
        row["hazard_source"] = dict(exp.source)
    return row


def attach_reported(rows: list[dict[str, Any]], turns: list[SeriesTurn]) -> None:
    """Put the app's own usage for each model call beside the server's raw usage in that call's row.

    Pairing is by response id when the app reports one (Pi does), else by order within the turn; a call the app
    reported without a matching row, or a row without a report, is left unpaired, never guessed.
    """
    for t in turns:
        mine = [r for r in rows
                if r.get("series") == t.series and (r.get("label") or {}).get("turn") == t.result.index]
        reported = [e for e in t.result.reported if not e.get("error")]
        by_id = {e["response_id"]: e for e in reported if e.get("response_id")}
        used: set[int] = set()
        for row in mine:
            rid = (row.get("server") or {}).get("id")
            entry = by_id.get(rid) if rid else None
            if entry is not None:
                used.add(id(entry))
                row[APP_ROW_KEY] = {**entry, "paired_by": "response id"}
        rest = [e for e in reported if id(e) not in used]
        unpaired = [row for row in mine if APP_ROW_KEY not in row]
        if len(rest) == len(unpaired):
            for row, entry in zip(unpaired, rest, strict=True):
                row[APP_ROW_KEY] = {**entry, "paired_by": "order in the turn"}
            continue
        for entry in rest:  # fewer reports than calls (dsh reports no usage for its side calls): by prompt size
            same = [row for row in unpaired
                    if read_usage(row.get("usage"), row.get("timings")).prompt == entry["prompt"]]
            if len(same) == 1:
                same[0][APP_ROW_KEY] = {**entry, "paired_by": "prompt tokens (the only call of the turn with "
                                                             f"{entry['prompt']:,})"}
                unpaired.remove(same[0])


def _analyse_prefix(result: RunResult, app_run: AppRun, engine_url: str | None, lookup: Any = None) -> None:
    """The prefix analysis of the rows, written beside the log; a missing or failing analysis is said, not hidden."""
    import json

    from analyzer.atomic import write_text_atomic

    try:
        from analyzer.prefix import analyse
    except ImportError:
        app_run.prefix_error = "the prefix analysis (analyzer.prefix) is not available in this build"
        return
    try:
        # control requests against the one before them in the session; each treatment request against the
        # control request at the same index (the one-factor comparison)
        report = analyse(result.rows, against="control", engine_url=engine_url, lookup=lookup, log=str(result.log))
    except Exception as exc:  # the rows are on disk either way; say why the analysis is missing
        app_run.prefix_error = f"prefix analysis failed: {exc}"
        return
    app_run.prefix = report
    path = result.log.with_suffix(".prefix.json")
    payload = report.as_json()
    write_text_atomic(path, json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")
    app_run.prefix_path = path
