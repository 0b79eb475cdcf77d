"""`reconcile`: replay a usage scenario through the pinned upstream usage code, per route."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.api.session import Session
from analyzer.records.i18n import DEFAULT_LANG

REPLAYED = ("pi", "dsh")


@dataclass(frozen=True)
class ReconcileOptions:
    """What to replay (a shipped scenario name or TOML path, default deepseek-10k; or the raw usage of an
    `analyze observe` log), through which route (pi-ai, deepseek-native or both), at which commits
    (`at`: name → sha or tag, default the lock's) read from which git dirs (`repo_dirs`, default the cache);
    `record`: also build the research record (in `lang`), written to `record_file` when given."""

    scenario: str | None = None
    from_log: Path | None = None
    route: str = "both"
    at: Mapping[str, str] = field(default_factory=dict)
    repo_dirs: Mapping[str, str] = field(default_factory=dict)
    record: bool = False
    record_file: Path | None = None
    lang: str = DEFAULT_LANG


@dataclass(frozen=True)
class ReconcileResult:
    document: dict[str, Any]  # routes, ledgers, invariants, the comparison (analyzer.usage.ledger)
    record: str | None = None  # the research record as Markdown, when asked for
    log_notes: list[str] = field(default_factory=list)  # what reading an observe log skipped or assumed

    @property
    def ok(self) -> bool:
        return bool(self.document["ok"])


def shipped_scenarios() -> list[str]:
    from analyzer.usage.scenarios import shipped_names

    return list(shipped_names())


def reconcile(session: Session, options: ReconcileOptions = ReconcileOptions()) -> ReconcileResult:
    """Replay the scenario in analyzer's TypeScript-subset evaluator over the pinned functions (never in
    Node). The record's request path is the trace (`api.trace`) at the same commits."""
    from analyzer.errors import AnalyzerError
    from analyzer.usage.ledger import reconcile_routes, routes_for
    from analyzer.usage.pins import locator_for
    from analyzer.usage.scenarios import load_scenario

    for name in [*options.at, *options.repo_dirs]:
        if name not in REPLAYED:
            raise AnalyzerError(f"unknown upstream {name!r} in --at/--repo-dir; reconcile reads pi, dsh")
    notes: list[str] = []
    if options.from_log is not None:
        from analyzer.usage.fromlog import scenario_from_log

        if options.scenario:
            raise AnalyzerError("give a SCENARIO or --from-log FILE.jsonl, not both")
        scenario, notes = scenario_from_log(options.from_log)
        for note in notes:
            session.warn(note)
    else:
        scenario = load_scenario(options.scenario)
    routes = routes_for(options.route)
    repos = sorted({name for r in routes for name in r.repos})
    dirs = dict(options.repo_dirs)
    locators = {name: locator_for(session, session.lock.get(name), options.at.get(name), dirs.get(name))
                for name in repos}
    doc = reconcile_routes(scenario, locators, routes)
    if not options.record:
        return ReconcileResult(doc, None, notes)
    from analyzer.usage.record import reconcile_record, request_path

    path = request_path(session, {name: loc.commit for name, loc in locators.items()}, dirs)
    target = options.scenario or (f"--from-log {options.from_log}" if options.from_log else "")
    command = " ".join(a for a in ("--route " + options.route, target) if a)
    record = reconcile_record(doc, locators, session, path, options.lang, command)
    if options.record_file is not None:
        from analyzer.atomic import write_text_atomic

        try:
            write_text_atomic(options.record_file, record)
        except OSError as exc:
            raise AnalyzerError(f"cannot write {exc.filename or options.record_file}: {exc.strerror or exc}; "
                                "choose a writable path") from exc
        doc["record_file"] = str(options.record_file)
    return ReconcileResult(doc, record, notes)
