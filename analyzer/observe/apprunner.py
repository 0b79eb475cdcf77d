"""Run an app experiment: the real app, behind the recording proxy, control session then treatment session(s).

Why one set of paths for every series: the app writes its private home, session directory and working directory
into what it sends (Pi names its config and working directories in the system prompt), so a control and a
treatment that lived in different directories would differ in two things. Every series therefore runs in the same
paths — each starts fresh (an empty home and session store) and its files are moved aside when it ends — and only
the experiment's one factor differs.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.apps.install import InstalledApp
from analyzer.apps.profile import fill
from analyzer.apps.session import AppSession
from analyzer.observe.appexperiment import AppExperiment
from analyzer.requests.usage import read_usage

Say = Callable[[str], None]
APP_ROW_KEY = "app_reported"


@dataclass
class AppRunResult:
    rows: list[dict[str, Any]]
    log: Path
    proxy_log: Path
    run_dir: Path
    turns: list[dict[str, Any]] = field(default_factory=list)
    prefix: Any = None
    prefix_path: Path | None = None
    prefix_error: str | None = None
    lookup_note: str | None = None

    @property
    def failed(self) -> int:
        bad_rows = sum(1 for r in self.rows if r.get("outcome") != "ok")
        bad_turns = sum(1 for t in self.turns if t["exit_code"] != 0 or any(r.get("error") for r in t["reported"]))
        return bad_rows + bad_turns


def run_dir_for(out_dir: Path, name: str) -> Path:
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "app"
    path = Path(out_dir) / f"{safe}-{stamp}.run"
    n = 2
    while path.exists():
        path = Path(out_dir) / f"{safe}-{stamp}-{n}.run"
        n += 1
    return path


def run_app_experiment(exp: AppExperiment, app: InstalledApp, *, upstream: str, out_dir: Path,
                       engine_url: str | None = None, say: Say = print, lookup: Any = None) -> AppRunResult:
    """Control then treatment through one proxy; rows (with the app's own usage) and the prefix analysis on disk."""
    from analyzer.engine.settings import server_settings
    from analyzer.proxy import start_proxy

    run_dir = run_dir_for(out_dir, exp.name)
    run_dir.mkdir(parents=True)
    turns: list[dict[str, Any]] = []
    # the app's context window follows the slot's (asked of the server itself, never through the proxy)
    window = (server_settings(upstream) or {}).get("ctx_per_slot") if app.profile.uses_context_window else None
    with start_proxy(upstream, run_dir, api_key_env=exp.api_key_env, log_name="proxy") as proxy:
        for series, value in exp.vary.series():
            session = _session(exp, app, proxy.base_url, run_dir, exp.vary.value_at(value, 1), window)
            for n, prompt in enumerate(exp.turns, 1):
                side = _pause(exp, upstream, value, n, say)
                now = exp.vary.value_at(value, n)
                if n > 1 and now != exp.vary.value_at(value, n - 1):   # the value changes inside the session
                    _set_value(exp, session, now, run_dir)
                proxy.label(series, factor=exp.vary.factor, value=value, turn=n)
                say(f"observe: {exp.name}: {series} turn {n} of {len(exp.turns)} ({app.profile.name})")
                turn = session.run_turn(prompt)
                turns.append({"series": series, "value": value, "value_in_force": now, **turn.as_dict(),
                              **({"side_request": side} if side else {})})
            _set_aside(session, run_dir / series)
            for t in turns:
                if t["series"] == series:
                    t["stdout"] = str(run_dir / series / Path(t["stdout"]).name)
        proxy_log = proxy.log_path
    from analyzer.observe.jsonl import RowWriter, log_path, read_rows

    rows = [_with_experiment(r, exp, app) for r in read_rows(proxy_log) if r.get("measured", True)]
    attach_reported(rows, turns)
    log = log_path(Path(out_dir), exp.name)
    with RowWriter(log) as writer:
        for row in rows:
            writer.write(row)
    result = AppRunResult(rows=rows, log=log, proxy_log=proxy_log, run_dir=run_dir, turns=turns)
    _analyse_prefix(result, engine_url, lookup)
    return result


def _pause(exp: AppExperiment, upstream: str, value: str | None, turn: int, say: Say) -> dict[str, Any] | None:
    """interval: the idle time before this turn; a side conversation, when given, is sent to the endpoint at the
    start of the pause (another user taking the engine's slot), straight to it and not into the rows."""
    seconds = exp.vary.pause_s(value, turn)
    if seconds <= 0:
        return None
    side = None
    if exp.vary.side_prompt:
        side = _side_request(upstream, exp, turn)
    say(f"observe: {exp.name}: idle {seconds:,.0f} s before turn {turn}")
    time.sleep(seconds)
    return side


def _side_request(upstream: str, exp: AppExperiment, turn: int) -> dict[str, Any]:
    """One chat request of another conversation; what the endpoint reported, for the turn's record."""
    import httpx

    body = {"model": exp.model, "max_tokens": 4,
            "messages": [{"role": "user", "content": f"{exp.vary.side_prompt} (before turn {turn})"}]}
    url = upstream.rstrip("/") + "/chat/completions"
    try:
        response = httpx.post(url, json=body, timeout=exp.timeout_s, trust_env=False)
        usage = response.json().get("usage") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError) as exc:
        return {"url": url, "error": f"{type(exc).__name__}"}
    u = read_usage(usage if isinstance(usage, dict) else None)
    return {"url": url, "status": response.status_code, "prompt": u.prompt, "cached": u.cached}


def _session(exp: AppExperiment, app: InstalledApp, base_url: str, run_dir: Path, value: str | None,
             context_window: int | None = None) -> AppSession:
    session = AppSession(app, base_url, exp.model, run_dir, max_tokens=exp.max_tokens, api=exp.api,
                         context_window=context_window)
    _set_value(exp, session, value, run_dir)
    return session


def _set_value(exp: AppExperiment, session: AppSession, value: str | None, run_dir: Path) -> None:
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


def _with_experiment(row: dict[str, Any], exp: AppExperiment, app: InstalledApp) -> dict[str, Any]:
    row = dict(row)
    row["experiment"] = exp.name
    row["factor"] = exp.vary.factor
    config = dict(row.get("config") or {})
    config["experiment_file"] = exp.path
    config["overrides"] = dict(exp.overrides)
    row["config"] = config
    row["app"] = {"profile": app.profile.name, "version": app.version, "version_from": app.version_source,
                  "commit": app.commit, "turn": (row.get("label") or {}).get("turn"),
                  "api": app.profile.api_base_url(exp.api)[0] or None}
    if exp.source:
        row["hazard_source"] = dict(exp.source)
    return row


def attach_reported(rows: list[dict[str, Any]], turns: list[dict[str, Any]]) -> None:
    """Put the app's own usage for each model call beside the server's raw usage in that call's row.

    Pairing is by response id when the app reports one (Pi does), else by order within the turn; a call the app
    reported without a matching row, or a row without a report, is left unpaired, never guessed.
    """
    for t in turns:
        mine = [r for r in rows if r.get("series") == t["series"] and (r.get("label") or {}).get("turn") == t["turn"]]
        reported = [e for e in t["reported"] if not e.get("error")]
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


def _analyse_prefix(result: AppRunResult, engine_url: str | None, lookup: Any = None) -> None:
    """The prefix analysis of the rows, written beside the log; a missing or failing analysis is said, not hidden."""
    import json

    from analyzer.atomic import write_text_atomic

    try:
        from analyzer.prefix import analyse
    except ImportError:
        result.prefix_error = "the prefix analysis (analyzer.prefix) is not available in this build"
        return
    try:
        # control requests against the one before them in the session; each treatment request against the
        # control request at the same index (the one-factor comparison)
        report = analyse(result.rows, against="control", engine_url=engine_url, lookup=lookup, log=str(result.log))
    except Exception as exc:  # the rows are on disk either way; say why the analysis is missing
        result.prefix_error = f"prefix analysis failed: {exc}"
        return
    result.prefix = report
    path = result.log.with_suffix(".prefix.json")
    payload = report.as_json() if hasattr(report, "as_json") else report
    write_text_atomic(path, json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")
    result.prefix_path = path


def turn_lines(turns: list[dict[str, Any]]) -> list[str]:
    """One line per app turn: exit code, time and what the app reported."""
    lines = []
    for t in turns:
        calls = "; ".join(
            (f"error: {e['error']}" if e.get("error") else f"prompt {e['prompt']:,} cached {e['cached']:,}")
            for e in t["reported"]) or "no usage reported"
        lines.append(f"{t['series']:<10} turn {t['turn']}: exit {t['exit_code']} in {t['seconds']:.1f} s — app "
                     f"reported {calls}")
    return lines
