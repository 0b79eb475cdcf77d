"""`analyze hazards` on fixture monorepos with known hazards and known non-hazards side by side."""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hazardfixtures import FIXTURES, build_hazard_world

from analyzer.api import (
    RecheckOptions,
    RecheckResult,
    ReportOptions,
    TraceOptions,
    open_session,
    recheck,
    report,
)
from analyzer.cli import main
from analyzer.errors import AnalyzerError
from analyzer.hazards.model import validate_hazards_json
from analyzer.hazards.rules import load_hazard_rules
from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for

EXPECTED = tomllib.loads((FIXTURES / "expected.toml").read_text())


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    return build_hazard_world(tmp_path_factory.mktemp("hazards"))


@pytest.fixture(scope="module")
def result(world) -> dict[str, Any]:
    analysis = world.analysis()
    return compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis),
                           include_near_misses=True)


def _value(result: dict[str, Any], path: str, line: int, text: str | None = None) -> dict[str, Any]:
    found = [f for f in result["findings"] if f["category"] == "value" and f["source"]["path"] == path
             and f["source"]["line"] == line and text in (None, f["source"]["text"])]
    assert len(found) == 1, found
    return found[0]


def test_exact_value_findings(result: dict[str, Any]) -> None:
    got = {(f["kind"], f["sink"]["part"], f["source"]["path"], f["source"]["line"], f["source"]["text"])
           for f in result["findings"] if f["category"] == "value"}
    want = {(e["kind"], e["part"], e["path"], e["line"], e["text"]) for e in EXPECTED["finding"]}
    assert got == want


def test_exact_structural_findings(result: dict[str, Any]) -> None:
    got = {(f["rule"], f["sink"]["part"], f["sink"]["path"], f["sink"]["line"])
           for f in result["findings"] if f["category"] == "structural"}
    want = {(e["rule"], e["part"], e["path"], e["line"]) for e in EXPECTED["structural"]}
    assert got == want
    for f in result["findings"]:
        if f["category"] == "structural":
            assert f["evidence"] and f["sink"]["path"] in f["evidence"][0]


def test_known_non_hazards_are_dismissed_with_their_reason(result: dict[str, Any]) -> None:
    got = {(m["source"]["path"], m["source"]["line"], m["dismissed_by"]) for m in result["near_misses"]}
    want = {(e["path"], e["line"], e["dismissed_by"]) for e in EXPECTED["near_miss"]}
    assert got == want
    assert result["near_miss_count"] == len(result["near_misses"])
    reported = {(f["source"]["path"], f["source"]["line"]) for f in result["findings"] if f["category"] == "value"}
    assert not reported & {(e["path"], e["line"]) for e in EXPECTED["near_miss"]}
    assert all(m["reason"] for m in result["near_misses"])


def test_chain_crosses_functions_with_lines_and_reasons(result: dict[str, Any]) -> None:
    """new Date() in stamp() → returned to buildSystemPrompt → template → join → returned (a request part)."""
    f = _value(result, "packages/prompt/src/index.ts", 12)
    steps = f["steps"]
    assert steps[0]["line"] == 12 and "time source" in steps[0]["why"]
    whys = [s["why"] for s in steps]
    assert any(s["line"] == 21 and "returned by stamp" in s["why"] for s in steps)
    assert "template literal" in whys and ".join()" in whys
    assert f["sink"]["rule"] == "rendered-system-prompt" and f["sink"]["line"] == 28
    assert f["granularity"] == "request" and "round it to the day" in f["neutralised_by"]
    assert (f["effect"], f["effect_rule"]) == ("breaks-prefix", "per-request-value-in-prefix")
    assert f["source"]["function"] == "app:packages/prompt/src/index.ts:stamp"


def test_every_finding_names_its_granularity_and_effect_rules(result: dict[str, Any]) -> None:
    rules = load_hazard_rules()
    effect_rules = {e.name: e.effect for e in rules.effects} | {s.name: s.effect for s in rules.structural}
    grain_rules = {s.name for s in rules.sources} | {f.name for f in rules.fixed} | {s.name for s in rules.structural}
    for f in result["findings"]:
        assert effect_rules[f["effect_rule"]] == f["effect"] and f["granularity_rule"] in grain_rules
    for e in EXPECTED["finding"]:
        f = _value(result, e["path"], e["line"], e["text"])
        assert (f["granularity"], f["effect"], f["effect_rule"]) == (e["granularity"], e["effect"], e["effect_rule"])
        if "granularity_rule" in e:
            assert f["granularity_rule"] == e["granularity_rule"]


def test_findings_rank_breaks_prefix_first_and_group_by_sink_and_template(result: dict[str, Any]) -> None:
    from analyzer.hazards.rules import EFFECTS

    ranks = [EFFECTS.index(f["effect"]) for f in result["findings"]]
    assert ranks == sorted(ranks) and result["findings"][0]["effect"] == "breaks-prefix"
    groups = result["hazards"]
    assert sorted(b for h in groups for b in h["branches"]) == sorted(f["id"] for f in result["findings"])
    by_id = {f["id"]: f for f in result["findings"]}
    # hostname() and __dirname enter buildSystemPrompt's lines through two templates: two hazards
    prompt = [h for h in groups if h["sink"]["rule"] == "rendered-system-prompt"]
    assert all(len({by_id[b]["sink"]["line"] for b in h["branches"]}) == 1 for h in prompt)
    assert len(prompt) == len({(h["template"]["line"] if h["template"] else 0) for h in prompt})
    # `Home: ${process.env.MINI_HOME ?? homedir()}`: two sources, one template, one hazard with two branches
    home = [h for h in prompt if h["template"] and h["template"]["line"] == 27]
    assert len(home) == 1 and sorted(by_id[b]["source"]["text"] for b in home[0]["branches"]) == [
        "homedir()", "process.env.MINI_HOME"]
    assert (home[0]["effect"], home[0]["granularity"]) == ("cross-session", "machine")


def test_constructor_arguments_reach_the_fields_another_method_renders(result: dict[str, Any]) -> None:
    f = _value(result, "packages/agent/src/index.ts", 70, "process.cwd()")
    whys = [(s["line"], s["why"]) for s in f["steps"]]
    assert (70, "argument 1 of new Workspace() → Workspace.constructor (constructor)") in whys
    assert (60, "stored in this.root") in whys and (65, "read from this.root") in whys
    assert f["sink"]["function"].endswith(":Workspace.getSystemPrompt")


def test_chain_through_a_method_return_to_the_tools_field(result: dict[str, Any]) -> None:
    f = _value(result, "packages/tools/src/index.ts", 31)
    assert f["sink"]["path"] == "packages/agent/src/index.ts" and f["sink"]["line"] == 28
    assert any("returned by ToolRegistry.definitions (method)" in s["why"] for s in f["steps"])


def test_iteration_order_survives_accumulation_but_code_order_is_no_source(result: dict[str, Any]) -> None:
    f = _value(result, "packages/tools/src/index.ts", 37)  # `text += …` inside `for (… of map.values())`
    assert f["sink"]["part"] == "system prompt"
    assert any("accumulated in this iteration order" in s["why"] for s in f["steps"])
    places = [(e["source"]["path"], e["source"]["line"]) for e in result["findings"] + result["near_misses"]
              if e["category"] == "value"]
    assert ("packages/tools/src/index.ts", 17) not in places  # Builtins: a Map built whole from a literal


def test_cross_repo_sink_in_the_provider_repo(result: dict[str, Any]) -> None:
    f = _value(result, "packages/ai/src/params.ts", 21)
    assert f["source"]["repo"] == "ai" and f["sink"]["part"] == "cache key"


def test_json_schema_and_ids_are_stable(result: dict[str, Any], world) -> None:
    assert validate_hazards_json(result) == []
    analysis = world.analysis()
    again = compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis),
                            include_near_misses=True)
    assert [f["id"] for f in again["findings"]] == [f["id"] for f in result["findings"]]
    broken = json.loads(json.dumps(result))
    first = next(i for i, f in enumerate(broken["findings"]) if f["category"] == "value")
    del broken["findings"][first]["source"]
    assert validate_hazards_json(broken)
    broken = json.loads(json.dumps(result))
    broken["findings"][first]["effect"] = "sometimes"
    assert validate_hazards_json(broken) == [f"findings[{first}].effect: expected one of the effects"]


def test_cli_exit_codes_and_output(world, capsys: pytest.CaptureFixture[str]) -> None:
    lock = str(world.lock_path)
    cache = str(world.ctx.cache_dir)
    assert main(["--lock", lock, "--cache-dir", cache, "hazards"]) == 1
    out = capsys.readouterr().out
    assert "17 value finding(s), 2 structural" in out and "by effect: breaks-prefix" in out
    assert "app:packages/prompt/src/index.ts:12" in out and "near-misses" not in out
    assert main(["--lock", lock, "--cache-dir", cache, "hazards", "--all"]) == 1
    out = capsys.readouterr().out
    assert "near-misses" in out and "only logged" in out and "cut flows" in out
    assert main(["--lock", lock, "--cache-dir", cache, "--json", "hazards"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert validate_hazards_json(data) == [] and data["near_misses"] == [] and data["near_miss_count"] == 9


def test_cli_bad_input_is_one_error_line(world, capsys: pytest.CaptureFixture[str]) -> None:
    lock = str(world.lock_path)
    assert main(["--lock", lock, "--cache-dir", str(world.ctx.cache_dir), "hazards", "--at", "app=xyz"]) == 2  # usage
    err = capsys.readouterr().err
    assert err.startswith("error: --at") and err.count("\n") == 1 and "Traceback" not in err
    with pytest.raises(SystemExit) as refused:  # argparse refuses it, like every other --max-depth
        main(["--lock", lock, "hazards", "--max-depth", "0"])
    assert refused.value.code == 2 and "--max-depth: 0 is below 1" in capsys.readouterr().err


def test_clean_repos_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import git
    from graphfixtures import write_fixture_lock

    src = tmp_path / "clean"
    (src / "src").mkdir(parents=True)
    (src / "src" / "index.ts").write_text(
        "export function buildParams(model: string) {\n  const at = Date.now()\n  console.log(at)\n"
        "  return { model, system: 'You are helpful.', messages: [] }\n}\n")
    repo = git.Repo.init(src, initial_branch="main")
    repo.git.add("-A")
    actor = git.Actor("Fixture Author", "fixture@example.invalid")
    sha = repo.index.commit("clean", author=actor, committer=actor).hexsha
    lock = write_fixture_lock(tmp_path / "repos.lock", {"clean": (src, sha)})
    assert main(["--lock", str(lock), "--cache-dir", str(tmp_path / "cache"), "hazards", "--all"]) == 0
    out = capsys.readouterr().out
    assert "0 value finding(s), 0 structural; 1 near-miss" in out and "only logged" in out


def test_rule_files_are_validated(tmp_path: Path) -> None:
    rules = load_hazard_rules()
    assert {s.kind for s in rules.sources} >= {"time", "random", "environment", "filesystem", "ordering",
                                              "counter", "locale"}
    assert all(s.granularity and s.neutralised for s in rules.sources)
    bad = tmp_path / "bad.toml"
    bad.write_text("[[returns]]\nname = 'x'\npart = 'the moon'\nfunctions = ['f']\n")
    with pytest.raises(AnalyzerError, match="part 'the moon' is not one of"):
        load_hazard_rules([bad])
    bad.write_text("[[effect]]\nname = 'x'\neffect = 'sometimes'\nreason = 'r'\n")
    with pytest.raises(AnalyzerError, match="effect must be one of breaks-prefix"):
        load_hazard_rules([bad])
    bad.write_text("[[source]]\nname = 'x'\nkind = 'time'\ngranularity = 'per tuesday'\nneutralised = 'n'\n")
    with pytest.raises(AnalyzerError, match="granularity 'per tuesday' is not one of request"):
        load_hazard_rules([bad])
    bad.write_text("[[sourc]]\nname = 'x'\n")
    with pytest.raises(AnalyzerError, match=r"unknown hazard rule table \[\[sourc\]\]"):
        load_hazard_rules([bad])
    bad.write_text("[[source]\n")
    with pytest.raises(AnalyzerError, match="malformed hazard rule file"):
        load_hazard_rules([bad])


def test_recheck_reports_new_and_gone_hazards(tmp_path: Path) -> None:
    """A second app commit swaps the host name in the prompt for the working directory: one hazard gone,
    one new, so the re-check exits 1 and its report has both; the same pins twice exit 0."""
    import git
    from graphfixtures import ACTOR, write_fixture_lock

    world = build_hazard_world(tmp_path)
    app = tmp_path / "upstreams" / "mini-app"
    prompt = app / "packages" / "prompt" / "src" / "index.ts"
    prompt.write_text(prompt.read_text().replace("`Host: ${hostname()}`", "`Dir: ${process.cwd()}`"))
    repo = git.Repo(app)
    repo.git.add("-A")
    new_sha = repo.index.commit("cwd instead of host", author=ACTOR, committer=ACTOR).hexsha
    ai = (tmp_path / "upstreams" / "mini-ai", world.commits["ai"])
    lock = write_fixture_lock(tmp_path / "repos.lock", {"app": (app, new_sha), "ai": ai})
    session = open_session(lock, cache_dir=tmp_path / "cache", environ={})

    def check(old_app: str) -> RecheckResult:
        return recheck(session, RecheckOptions("Agent.send", "buildParams", old_commits=[f"app={old_app}"],
                                               out=tmp_path / "reports"))

    same = check(new_sha)
    assert same.exit_code == 0
    assert same.document["hazards"]["available"] and same.document["hazards"]["new"] == []
    assert same.document["hazards"]["gone"] == []
    done = check(world.commits["app"])
    data = done.document
    assert done.exit_code == 1 and data["exit_code"] == 1
    h = data["hazards"]
    assert [(f["kind"], f["source"]["text"]) for f in h["new"]] == [("environment", "process.cwd()")]
    assert [(f["kind"], f["source"]["text"]) for f in h["gone"]] == [("environment", "hostname()")]
    assert any(r.startswith("new hazard ") and "process.cwd()" in r for r in data["reasons"])
    assert done.report_path is not None
    text = done.report_path.read_text()
    assert "## Hazards" in text and "**new**" in text and "gone" in text and "hostname()" in text


def test_report_marks_the_hops_where_a_hazard_enters(world, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    done = report(world.ctx, ReportOptions(TraceOptions("Agent.send", "buildParams"), out=out))
    assert sorted(p.name for p in done.files) == ["trace.html", "trace.json", "trace.md"]
    data = json.loads((out / "trace.json").read_text())
    marked = {h["symbol"]: [m["summary"] for m in h["hazards"]] for h in data["hops"]}
    assert data["hazards"]["available"] and data["hazards"]["findings"] == 19
    # the random cache key enters in buildParams; the in-place history rewrite is in Agent.compact (not a hop)
    assert any("random → cache key" in s for s in marked["buildParams"]), marked
    assert marked["Agent.send"] == []
    assert "Hazard enters here" in (out / "trace.md").read_text()
    assert "Hazard enters here" in (out / "trace.html").read_text()
    assert main(["--lock", str(world.lock_path), "--cache-dir", str(world.ctx.cache_dir), "report", "Agent.send",
                 "buildParams", "--out", str(tmp_path / "plain"), "--no-hazards"]) == 0
    assert "Hazard enters here" not in (tmp_path / "plain" / "trace.md").read_text()


def test_one_scan_per_graph_then_answers_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first hazards_for scans and stores; the next one (same graph and options) reads the stored
    result without scanning; a damaged stored file is reported and scanned again."""
    from analyzer.hazards import run
    from analyzer.hazards.cache import scan_key, scan_path

    world = build_hazard_world(tmp_path)
    analysis = world.analysis()
    warnings: list[str] = []
    session = replace(world.ctx, on_warning=warnings.append)  # the library session; its warnings land here
    first = run.hazards_for(session, analysis, include_near_misses=True)
    stored = scan_path(world.ctx.cache_dir, scan_key(analysis.pins, {"max_depth": 6, "allow_guesses": False,
                                                                     "include_tests": False}))
    assert stored.is_file() and first["near_misses"]

    def no_scan(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise AssertionError("scanned again")

    monkeypatch.setattr(run, "compute_hazards", no_scan)
    again = run.hazards_for(session, analysis)
    assert [f["id"] for f in again["findings"]] == [f["id"] for f in first["findings"]]
    assert again["near_misses"] == [] and again["near_miss_count"] == first["near_miss_count"]
    with pytest.raises(AssertionError, match="scanned again"):  # other options: another scan
        run.hazards_for(session, analysis, max_depth=3)
    stored.write_text("{not json")
    monkeypatch.undo()
    third = run.hazards_for(session, analysis)
    assert [f["id"] for f in third["findings"]] == [f["id"] for f in first["findings"]]
    assert any("damaged" in w for w in warnings) and json.loads(stored.read_text())["result"]["findings"]


def test_a_parameter_flow_cut_at_a_call_without_an_edge_is_a_near_miss(result: dict[str, Any]) -> None:
    miss = [m for m in result["near_misses"] if m["source"]["path"] == "packages/prompt/src/cut.ts"]
    assert len(miss) == 1 and miss[0]["dismissed_by"] == "not-followed"
    assert miss[0]["sink"]["line"] == 9 and "formatWithPlugin()" in miss[0]["reason"]
    assert any("argument 1 of describe()" in s["why"] for s in miss[0]["steps"])
    cut = result["cut_flows"]
    assert cut["total"] == sum(cut["by_reason"].values()) and cut["by_reason"]["not-followed"] >= 1
    assert any(p["path"] == "packages/prompt/src/cut.ts" and p["line"] == 9 and p["reason"] == "not-followed"
               for p in cut["places"])


def test_the_depth_limit_cuts_flows_visibly(world) -> None:
    analysis = world.analysis()
    shallow = compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis),
                              max_depth=1, include_near_misses=True)
    assert shallow["cut_flows"]["by_reason"]["depth-limit"] >= 1
    assert any(m["dismissed_by"] == "depth-limit" and "--max-depth" in m["reason"] for m in shallow["near_misses"])


def test_a_module_level_install_path_reaches_an_early_prompt_section_with_its_position(result: dict[str, Any]) -> None:
    f = _value(result, "packages/prompt/src/checkout.ts", 4)
    assert f["sink"]["rule"] == "prompt-section-text" and f["sink"]["line"] == 11
    assert f["sink"]["position"] == {"name": "app:checkout", "order": "-99"}
    assert any("argument 2 of addCheckoutSection()" in s["why"] for s in f["steps"])


def test_a_prompt_variable_names_itself(result: dict[str, Any]) -> None:
    f = _value(result, "packages/prompt/src/variables.ts", 11)
    assert f["sink"]["rule"] == "prompt-variable" and f["sink"]["position"] == {"name": "cwd"}


def test_experiment_varies_the_findings_value_in_the_app(result: dict[str, Any], tmp_path: Path) -> None:
    from analyzer.hazards.experiment import app_profiles, experiment_for, to_toml

    (tmp_path / "mini.toml").write_text('name = "mini"\nrepo = "app"\n')
    profiles = app_profiles(tmp_path)
    assert profiles == {"app": "mini"}
    env = _value(result, "packages/prompt/src/index.ts", 27, "process.env.MINI_HOME")
    exp = tomllib.loads(to_toml(experiment_for(result, env["id"], profiles=profiles)))
    assert exp["app"] == {"profile": "mini", "turns": ["Say hello."]}
    assert exp["vary"]["factor"] == "env" and exp["vary"]["name"] == "MINI_HOME" and len(exp["vary"]["values"]) == 2
    assert exp["source"]["finding"] == env["id"] and exp["source"]["where"] == "app:packages/prompt/src/index.ts:27"
    assert exp["source"]["experiment_rule"] == "vary-environment-variable" and "endpoint" in exp
    cwd = _value(result, "packages/agent/src/index.ts", 70, "process.cwd()")
    group = next(h for h in result["hazards"] if cwd["id"] in h["branches"])
    by_group = experiment_for(result, group["id"], profiles=profiles)
    assert by_group["vary"]["factor"] == "cwd" and by_group["source"]["hazard"] == group["id"]
    clock = _value(result, "packages/prompt/src/index.ts", 12)
    assert experiment_for(result, clock["id"], profiles=profiles)["app"]["turns"] == ["Say hello.", "Say hello again."]
    with pytest.raises(AnalyzerError, match="no app profile runs repo 'app'"):
        experiment_for(result, env["id"], profiles={})
    with pytest.raises(AnalyzerError, match="no value finding or hazard has this id"):
        experiment_for(result, "0000", profiles=profiles)


def test_cli_experiment_without_a_profile_is_one_error_line(world, capsys: pytest.CaptureFixture[str]) -> None:
    lock, cache = str(world.lock_path), str(world.ctx.cache_dir)
    assert main(["--lock", lock, "--cache-dir", cache, "hazards", "--experiment", "nope"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: --experiment nope") and err.count("\n") == 1


def test_an_apps_own_folder_is_varied_as_the_same_install_at_another_path(result: dict[str, Any],
                                                                            tmp_path: Path) -> None:
    """A variable naming the app's package folder cannot point at an empty folder (the app would not start):
    the experiment keeps the install and changes only the path, through a symlink."""
    import copy

    from analyzer.hazards.experiment import app_profiles, experiment_for

    (tmp_path / "mini.toml").write_text('name = "mini"\nrepo = "app"\n')
    env = _value(result, "packages/prompt/src/index.ts", 27, "process.env.MINI_HOME")
    changed = copy.deepcopy(result)
    finding = next(f for f in changed["findings"] if f["id"] == env["id"])
    finding["source"]["text"] = "process.env.MINI_PACKAGE_DIR"
    exp = experiment_for(changed, env["id"], profiles=app_profiles(tmp_path))
    assert exp["source"]["experiment_rule"] == "vary-package-directory"
    assert exp["vary"] == {"factor": "env", "name": "MINI_PACKAGE_DIR",
                           "values": ["{app_dir}", "{run_dir}/store/app-package"], "link_to": "{app_dir}"}


def test_candidates_are_index_facts_not_source_text(world, monkeypatch: pytest.MonkeyPatch) -> None:
    """Roots, sink functions and structural candidates are looked up in the index's facts: the scan runs with
    git's text search made to fail, a comment naming a source is no candidate, and without the value facts
    the roots only a member read makes (`import.meta.url` in a module constant, `process.env.X`) are gone."""
    import subprocess
    from dataclasses import replace

    from analyzer.hazards.candidates import Candidates

    analysis = world.analysis()
    git_dirs, facts = git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis)
    install = "packages/prompt/src/install.ts"
    sources = Candidates(facts, load_hazard_rules()).sources("app")
    assert (install, 4) in sources and (install, 11) in sources
    assert (install, 3) not in sources  # `// … (not process.cwd()) …`

    class NoGrep(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, args: Any, *rest: Any, **kw: Any) -> None:
            assert "grep" not in [str(a) for a in (args if isinstance(args, (list, tuple)) else [args])], args
            super().__init__(args, *rest, **kw)

    monkeypatch.setattr(subprocess, "Popen", NoGrep)
    # typed records make every request-side sink function a root (its reads may be of a stored record);
    # without them the roots are exactly the candidates, which is what this compares
    no_records = replace(load_hazard_rules(), records=[])
    monkeypatch.setattr("analyzer.hazards.run.load_hazard_rules", lambda: no_records)
    full = compute_hazards(analysis, git_dirs, facts, include_near_misses=True)
    bare = {repo: [replace(f, values=[]) for f in files] for repo, files in facts.items()}
    without = compute_hazards(analysis, git_dirs, bare, include_near_misses=True)

    def places(r: dict[str, Any]) -> set[tuple[str, int]]:
        return {(f["source"]["path"], f["source"]["line"]) for f in r["findings"] if f["category"] == "value"}

    assert {(install, 4), (install, 11), ("packages/prompt/src/index.ts", 12)} <= places(full)
    assert ("packages/prompt/src/index.ts", 12) in places(without)  # `new Date()`: a call fact
    assert not {(install, 4), (install, 11)} & places(without)


def test_every_identifier_source_is_a_name_the_index_records() -> None:
    """`identifiers` of the source rules are found through the index's `ident` value facts only."""
    from analyzer.parse.extract import extract_facts

    names = [i for s in load_hazard_rules().sources for i in s.identifiers]
    assert names
    for name in names:
        got = extract_facts(f"export function f() {{ return g({name}) }}\n".encode(), "src/a.ts").values
        assert [(v.kind, v.text) for v in got] == [("ident", name)], name
