"""`analyze hazards --experiment ID`: an observe experiment that varies one finding's value in the real
application (the shape `analyze observe` reads: name, question, [endpoint], [app], [vary], [source]).

Which factor varies what is rules data (analyzer/rules/hazards/experiments.toml); which application runs
a repository's code is the app profiles' `repo` key (analyzer/rules/apps/*.toml).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from analyzer.atomic import write_text_atomic
from analyzer.errors import AnalyzerError
from analyzer.rules.files import read_rule_files


@dataclass(frozen=True)
class ExperimentRule:
    name: str
    factor: str
    values: tuple[str, ...]
    turns: tuple[str, ...]
    sources: tuple[str, ...] = ()
    effects: tuple[str, ...] = ()
    text: re.Pattern[str] | None = None
    env: str = ""
    link_to: str = ""  # env/cwd: each missing path value becomes a symlink to this (the same install elsewhere)


FACTORS = ("env", "cwd", "arg", "config-file", "none")


def load_experiment_rules() -> list[ExperimentRule]:
    files, _ = read_rule_files("analyzer.rules.hazards", what="hazard rule file")
    out = []
    for f in files:
        for e in f.data.get("experiment", []):
            if e.get("factor") not in FACTORS:
                raise AnalyzerError(f"{f.name}: [[experiment]] {e.get('name')!r}: factor must be one of "
                                    f"{', '.join(FACTORS)}")
            out.append(ExperimentRule(e["name"], e["factor"], tuple(e.get("values", ())), tuple(e["turns"]),
                                      tuple(e.get("sources", ())), tuple(e.get("effects", ())),
                                      re.compile(e["text"]) if e.get("text") else None, str(e.get("env", "")),
                                      str(e.get("link_to", ""))))
    return out


def app_profiles(folder: Path | None = None) -> dict[str, str]:
    """repo name → app profile name, from the shipped app profiles (or `folder`, for tests)."""
    texts: list[tuple[str, str]] = []
    if folder is not None:
        texts = [(p.stem, p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.toml"))]
    else:
        try:
            entries = list(resources.files("analyzer.rules.apps").iterdir())
        except ModuleNotFoundError:
            entries = []
        texts = [(e.name[:-5], e.read_text(encoding="utf-8")) for e in entries if e.name.endswith(".toml")]
    out: dict[str, str] = {}
    for stem, text in texts:
        data = tomllib.loads(text)
        out.setdefault(str(data.get("repo", stem)), str(data.get("name", stem)))
    return out


def find_entry(result: dict[str, Any], wanted: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(value finding, its hazard) for a finding id or a hazard id (its first branch)."""
    by_id = {f["id"]: f for f in result["findings"] if f["category"] == "value"}
    for h in result.get("hazards", []):
        if h["id"] == wanted and h["branches"] and h["branches"][0] in by_id:
            return by_id[h["branches"][0]], h
    if wanted in by_id:
        hazard = next((h for h in result.get("hazards", []) if wanted in h["branches"]), None)
        return by_id[wanted], hazard
    raise AnalyzerError(f"--experiment {wanted}: no value finding or hazard has this id; run `analyze hazards` "
                        "and copy an id it prints")


def experiment_for(result: dict[str, Any], wanted: str, *, profiles: dict[str, str] | None = None,
                   rules: list[ExperimentRule] | None = None) -> dict[str, Any]:
    finding, hazard = find_entry(result, wanted)
    src = finding["source"]
    profiles = app_profiles() if profiles is None else profiles
    profile = profiles.get(src["repo"])
    if profile is None:
        raise AnalyzerError(f"--experiment {wanted}: no app profile runs repo {src['repo']!r} "
                            "(analyzer/rules/apps/*.toml, key repo); the value cannot be varied in an app")
    for rule in rules if rules is not None else load_experiment_rules():
        if rule.sources and src["rule"] not in rule.sources:
            continue
        if rule.effects and finding["effect"] not in rule.effects:
            continue
        match = rule.text.search(src["text"]) if rule.text is not None else None
        if rule.text is not None and match is None:
            continue
        vary: dict[str, Any] = {"factor": rule.factor}
        if rule.factor == "env":
            vary["name"] = rule.env.replace("{1}", match.group(1) if match and match.groups() else "")
        if rule.values:
            vary["values"] = list(rule.values)
        if rule.link_to:
            vary["link_to"] = rule.link_to
        where = f"{src['repo']}:{src['path']}:{src['line']}"
        return {
            "name": f"hazard-{finding['id']}",
            "question": (f"Does {src['text']} ({finding['kind']}, {finding['granularity']}) change the "
                         f"{finding['sink']['part']} {profile} sends, as the hazard scan says ({finding['effect']})?"),
            "endpoint": {},
            "app": {"profile": profile, "turns": list(rule.turns)},
            "vary": vary,
            "source": {"hazard": hazard["id"] if hazard else None, "finding": finding["id"],
                       "rule": src["rule"], "effect_rule": finding["effect_rule"], "experiment_rule": rule.name,
                       "where": where,
                       "sink": f"{finding['sink']['repo']}:{finding['sink']['path']}:{finding['sink']['line']}"},
        }
    raise AnalyzerError(f"--experiment {wanted}: no [[experiment]] rule varies source rule {src['rule']!r} "
                        "(analyzer/rules/hazards/experiments.toml); write the experiment by hand")


def to_toml(exp: dict[str, Any]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if v is None:
            return '""'
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["# Written by `analyze hazards --experiment`; run it with `analyze observe`.",
             f"name = {value(exp['name'])}", f"question = {value(exp['question'])}", "", "[endpoint]"]
    for table in ("app", "vary", "source"):
        lines += ["", f"[{table}]"] + [f"{k} = {value(v)}" for k, v in exp[table].items()]
    return "\n".join(lines) + "\n"


def write_experiment(result: dict[str, Any], wanted: str, out: Path) -> Path:
    exp = experiment_for(result, wanted)
    write_text_atomic(out, to_toml(exp))
    return out
