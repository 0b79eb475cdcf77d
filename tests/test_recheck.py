"""Re-check: hops added/removed/moved/changed, where the path broke, rules, notes, exit codes, pin sets."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from recheck_fixtures import Upstreams, graph_at, make_upstreams, pins_json, reader, write_lock

import analyzer.usage as usage
from analyzer.annotations import Note
from analyzer.errors import AnalyzerError
from analyzer.lock import load_lock
from analyzer.recheck import EXIT_BROKEN, EXIT_CHANGED, EXIT_OK, compare, old_pins, render_recheck_markdown
from analyzer.recheck.usage_deltas import diff_ledgers, reconciliation_deltas


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Upstreams:
    return make_upstreams(tmp_path_factory.mktemp("upstreams"))


def run_compare(up: Upstreams, old_lib: str, new_lib: str, notes: list[Note] | None = None) -> dict:
    old, new = {"app": up.a1, "lib": old_lib}, {"app": up.a1, "lib": new_lib}
    r = compare(graph_at(up, old), graph_at(up, new), pins_json(up, old), pins_json(up, new), "renderPrompt",
                "parseUsage", reader(up), notes)
    r["old"] = {"pins": pins_json(up, old), "origin": "old", "label": "o"}
    r["new"] = {"pins": pins_json(up, new), "origin": "new", "label": "n"}
    return r


def hop(r: dict, symbol: str) -> dict:
    return next(h for h in r["hops"] if h["symbol"] == symbol)


def test_same_pins_exit_0(up: Upstreams) -> None:
    r = run_compare(up, up.l1, up.l1)
    assert r["exit_code"] == EXIT_OK and r["reasons"] == []
    assert all(h["changes"] == [] and h["on_old_path"] and h["on_new_path"] for h in r["hops"])
    assert "Verdict: unchanged — exit 0" in render_recheck_markdown(r)


def test_moved_changed_and_removed_hops_exit_1(up: Upstreams) -> None:
    g1 = graph_at(up, {"app": up.a1, "lib": up.l1})
    a = g1.nodes["lib:src/old/usage.ts:parseUsage"]
    notes = [Note("lib", "parseUsage", "counts characters", up.l1, a["body_hash"], a["path"])]
    r = run_compare(up, up.l1, up.l2, notes)
    assert r["exit_code"] == EXIT_CHANGED and not r["broken"]["at_new"]
    to = r["endpoints"]["to"]
    assert (to["old"]["path"], to["new"]["path"]) == ("src/old/usage.ts", "src/api/usage.ts")
    assert to["changes"] == ["moved-file", "body-changed"]
    assert "-  return x.length;" in to["diff"] and "+  return words.length;" in to["diff"]
    # unchanged hop
    assert hop(r, "renderPrompt")["changes"] == [] and hop(r, "renderPrompt")["on_new_path"]
    # hops that left the path (still defined), one of them only shifted by a line
    for name in ("handleSend", "encode"):
        h = hop(r, name)
        assert h["on_old_path"] and not h["on_new_path"] and h["new"] is not None
    assert hop(r, "encode")["changes"] == ["moved-line"]
    assert (hop(r, "encode")["old"]["line"], hop(r, "encode")["new"]["line"]) == (3, 4)
    assert hop(r, "send")["changes"] == ["body-changed"]
    assert r["rules_stopped"] == [{"rule": "named-events", "old_matches": 1, "new_matches": 0, "on_path": True}]
    assert [(x["status"], x["old_status"], x["newly"]) for x in r["annotations"]] == [("stale", "ok", True)]
    md = render_recheck_markdown(r)
    assert "### Removed from the path" in md and "lib:`handleSend`" in md
    assert "`named-events`: 1 matches → 0 (used on the path)" in md


def test_to_gone_exit_2_still_reports_everything(up: Upstreams) -> None:
    r = run_compare(up, up.l1, up.l3)
    assert r["exit_code"] == EXIT_BROKEN and r["broken"]["at_new"]
    assert r["broken"]["where"].startswith("TO not found at the new pins (unknown symbol 'parseUsage'")
    assert "readUsage" in r["broken"]["where"]  # the closest name is offered
    assert r["endpoints"]["from"]["new"]["path"] == "src/prompt.ts"  # FROM is still reported
    assert r["endpoints"]["to"]["new"] is None
    both = {h["symbol"] for h in r["hops"] if h["old"] and h["new"]}
    assert both == {"Agent.step", "renderPrompt", "Agent.finish", "send", "handleSend", "encode"}
    assert "Where the path broke:" in render_recheck_markdown(r)


def test_vanished_hop_exit_2_says_which_edge_broke(up: Upstreams) -> None:
    r = run_compare(up, up.l1, up.l4)
    assert r["exit_code"] == EXIT_BROKEN
    assert r["broken"]["where"] == ("edge 5 (handleSend → encode, direct at lib:src/handlers.ts:5): "
                                    "the callee encode is gone")
    assert hop(r, "encode")["new"] is None and hop(r, "parseUsage")["new"] is not None
    assert hop(r, "handleSend")["changes"] == ["moved-line", "body-changed"]
    ok = [c["ok"] for c in r["edges"]]
    assert ok == [True, True, True, True, False, False]


def test_path_missing_at_old_pins_is_explained(up: Upstreams) -> None:
    r = run_compare(up, up.l4, up.l1)  # the reverse: broken before, whole now
    assert r["exit_code"] == EXIT_CHANGED and not r["old_path"]["found"] and r["new_path"]["found"]
    assert "handleSend → encode" in r["old_break"] and "the callee encode is gone" in r["old_break"]
    assert r["path_change"] == "rerouted" and r["cause"]["kind"] == "no-old-path" and r["side_by_side"] is None
    assert "rerouted — exit 1: a path exists at the new pins, and there was none at the old pins" in \
        render_recheck_markdown(r)


# --- pin sets ------------------------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def project(tmp_path: Path, up: Upstreams) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    git(proj, "init", "-q", "-b", "main")
    write_lock(proj / "repos.lock", up, up.l1)
    git(proj, "add", "repos.lock")
    git(proj, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "lock")
    write_lock(proj / "repos.lock", up, up.l2)
    return proj


def test_default_old_pins_are_the_committed_lock(project: Path, up: Upstreams) -> None:
    lock = load_lock(project / "repos.lock")
    pins, origin = old_pins(lock)
    assert {p.name: p.commit for p in pins} == {"app": up.a1, "lib": up.l1}
    assert origin == "repos.lock at HEAD"


def test_from_lockfile_rev_and_commit(project: Path, up: Upstreams, tmp_path: Path) -> None:
    lock = load_lock(project / "repos.lock")
    other = write_lock(tmp_path / "other.lock", up, up.l3)
    assert old_pins(lock, str(other))[0][1].commit == up.l3
    assert old_pins(lock, "HEAD")[0][1].commit == up.l1
    pins, origin = old_pins(lock, None, [f"lib={up.l4}"])
    assert pins[1].commit == up.l4 and pins[0].commit == up.a1 and "lib=" in origin
    with pytest.raises(AnalyzerError, match="NAME=SHA with NAME one of app, lib"):
        old_pins(lock, None, ["nope=" + "a" * 40])
    with pytest.raises(AnalyzerError, match="full 40-hex sha"):
        old_pins(lock, None, ["lib=abc"])
    with pytest.raises(AnalyzerError, match="cannot read repos.lock at git revision 'no-such-rev'"):
        old_pins(lock, "no-such-rev")


def test_lock_outside_git_needs_from(tmp_path: Path, up: Upstreams) -> None:
    lock = load_lock(write_lock(tmp_path / "repos.lock", up, up.l1))
    with pytest.raises(AnalyzerError, match="pass --from LOCKFILE or --from-commit"):
        old_pins(lock)


# --- reconciliation hook -------------------------------------------------------------------------------


def test_generic_ledger_diff() -> None:
    assert diff_ledgers({"a": {"b": 1, "c": [1, 2]}}, {"a": {"b": 2, "c": [1, 3]}, "d": 1}) == [
        {"key": "a.b", "old": 1, "new": 2}, {"key": "a.c[1]", "old": 2, "new": 3}, {"key": "d", "old": None, "new": 1}]


def test_reconciliation_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(usage, "ledger_for_pins", raising=False)
    assert reconciliation_deltas(None, [], [])["available"] is False
    monkeypatch.setattr(usage, "ledger_for_pins", lambda ctx, pins: {"x": len(pins)}, raising=False)
    monkeypatch.setattr("analyzer.usage.delta.ledger_deltas", lambda a, b: [{"key": "x", "old": a["x"],
                                                                              "new": b["x"]}])
    out = reconciliation_deltas(None, [], [1])
    assert out == {"available": True, "deltas": [{"key": "x", "old": 0, "new": 1}], "reason": None}


def test_changed_values_read_as_a_person_writes_them(up: Upstreams) -> None:
    r = run_compare(up, up.l1, up.l1)
    r["reconciliation"] = {"available": True, "reason": None, "deltas": [
        {"key": "usage.cached_tokens", "old": None, "new": 200},
        {"key": "usage.cache_hit", "old": False, "new": True},
        {"key": "usage.input_tokens", "old": 12000, "new": 12500},
        {"key": "cost.usd", "old": 0.0123, "new": 0.01}]}
    md = render_recheck_markdown(r)
    assert "- `usage.cached_tokens`: absent → 200" in md and "None" not in md
    assert "- `usage.cache_hit`: no → yes" in md and "False" not in md
    assert "- `usage.input_tokens`: 12,000 → 12,500" in md
    assert "- `cost.usd`: 0.0123 → 0.01" in md


# --- verdicts and causes ----------------------------------------------------------------------------------


def test_verdict_unchanged(up: Upstreams) -> None:
    r = run_compare(up, up.l1, up.l1)
    assert (r["path_change"], r["exit_code"], r["cause"]) == ("unchanged", EXIT_OK, None)


def test_verdict_changed_bodies_keeps_the_hops(up: Upstreams) -> None:
    r = run_compare(up, up.l1, up.l5)
    assert (r["path_change"], r["exit_code"], r["cause"]) == ("changed bodies", EXIT_CHANGED, None)
    assert [h["symbol"] for h in r["old_path"]["hop_list"]] == [h["symbol"] for h in r["new_path"]["hop_list"]]


def test_verdict_rerouted_side_by_side_with_the_seam_and_the_call_that_went(up: Upstreams) -> None:
    r = run_compare(up, up.l1, up.l2)
    assert (r["path_change"], r["exit_code"]) == ("rerouted", EXIT_CHANGED) and not r["broken"]["at_new"]
    seam = r["side_by_side"]["seam"]
    assert seam["parts_after"].startswith("lib:send (src/send.ts:")
    assert [x.split(" ")[0] for x in seam["old"]] == ["lib:handleSend", "lib:encode"] and seam["new"] == []
    assert seam["rejoins_at"].startswith("lib:parseUsage (src/old/usage.ts:1)")
    rows = r["side_by_side"]["rows"]
    assert [(x["old"]["symbol"] if x["old"] else None, x["new"]["symbol"] if x["new"] else None) for x in rows
            if not x["same"]] == [("handleSend", None), ("encode", None)]
    cause = r["cause"]  # send no longer emits the event at all: the call site went, not the rule
    assert cause["kind"] == "call-removed" and cause["call"] == "lib:src/send.ts:4"
    assert cause["text"].startswith("the call bus.emit(…) at lib:src/send.ts:4 is gone: send")
    # the summary counts are the hop list's
    removed = [h["symbol"] for h in r["hops"] if h["membership"] == "removed"]
    assert removed == ["handleSend", "encode"] and r["hops"] and all("no longer on the path" in h["status"]
                                                                     for h in r["hops"] if h["symbol"] in removed)
    from analyzer.recheck.verdict import counts

    assert (counts(r)["removed"], counts(r)["added"]) == (2, 0)
    md = render_recheck_markdown(r)
    assert "**Verdict: rerouted — exit 1" in md and "| old path | new path |" in md


def test_cause_dispatch_rule_that_stopped_matching(up: Upstreams) -> None:
    r = run_compare(up, up.l1, up.l8)
    assert (r["path_change"], r["exit_code"]) == ("broken", EXIT_BROKEN)
    cause = r["cause"]
    assert cause["kind"] == "dispatch-rule" and cause["rule"] == "named-events"
    assert cause["text"] == ("dispatch rule named-events no longer connects send to handleSend (1 matches → 0); "
                             "the call at lib:src/send.ts:4 is still written")


def test_cause_symbol_renamed_names_the_closest_candidate(up: Upstreams) -> None:
    r = run_compare(up, up.l2, up.l3)
    assert (r["path_change"], r["exit_code"]) == ("broken", EXIT_BROKEN)
    cause = r["cause"]
    assert cause["kind"] == "symbol-removed" and cause["endpoint"] == "to"
    assert cause["candidate"]["symbol"] == "readUsage" and cause["candidate"]["where"] == "lib:src/api/usage.ts:1"
    assert cause["text"] == ("lib:parseUsage was removed (was lib:src/api/usage.ts:2); closest candidate: readUsage "
                             "at lib:src/api/usage.ts:1")


def test_cause_symbol_removed_without_a_lookalike(up: Upstreams) -> None:
    r = run_compare(up, up.l1, up.l4)
    assert r["path_change"] == "broken" and r["cause"]["kind"] == "symbol-removed"
    assert r["cause"]["symbol"] == "encode" and r["cause"]["candidate"] is None  # 'send' shares no word with it
    assert r["cause"]["edge"] == 5


def test_cause_call_site_removed(up: Upstreams) -> None:
    r = run_compare(up, up.l1, up.l6)
    assert (r["path_change"], r["exit_code"]) == ("broken", EXIT_BROKEN)
    assert r["cause"]["kind"] == "call-removed" and r["cause"]["call"] == "lib:src/handlers.ts:5"
    assert r["cause"]["text"].startswith("the call encode(…) at lib:src/handlers.ts:5 is gone: handleSend")


def test_cause_import_stopped_resolving_after_a_package_rename(up: Upstreams) -> None:
    old, new = {"app": up.a1, "lib": up.l1}, {"app": up.a1, "lib": up.l7}
    r = compare(graph_at(up, old), graph_at(up, new), pins_json(up, old), pins_json(up, new), "renderPrompt",
                "parseUsage", reader(up), None, aliases={"lib": ["@fx/old"]})
    assert (r["path_change"], r["exit_code"]) == ("broken", EXIT_BROKEN)
    cause = r["cause"]
    assert cause["kind"] == "import-unresolved" and cause["specifier"] == "@fx/lib"
    assert cause["import"] == "app:src/agent.ts:2" and cause["now"] == "third-party package"
    assert cause["package"] == {"folder": "", "old_name": "@fx/lib", "new_name": "@fx2/lib"}
    assert cause["aliases_fix"] == 'aliases = ["@fx/old", "@fx/lib"]'
    assert "lib now publishes its root as @fx2/lib (it was @fx/lib)" in cause["text"]
    # the fix it names works: with the old name as an alias the path is back
    fixed = graph_at(up, new, aliases={"lib": ("@fx/lib",)})
    again = compare(graph_at(up, old), fixed, pins_json(up, old), pins_json(up, new), "renderPrompt", "parseUsage",
                    reader(up), None)
    assert again["path_change"] == "unchanged"


def test_cause_with_no_path_at_either_pin_set_names_the_import_of_a_renamed_package(up: Upstreams) -> None:
    r = run_compare(up, up.l7, up.l7)
    assert (r["path_change"], r["exit_code"]) == ("broken", EXIT_BROKEN) and not r["old_path"]["found"]
    cause = r["cause"]
    assert cause["kind"] == "import-unresolved" and cause["pins"] == "new"
    assert cause["text"] == ("at the new pins the import of '@fx/lib' at app:src/agent.ts:2 resolves to no locked "
                             'repo, while lib publishes its root as @fx2/lib; aliases = ["@fx/lib"] in [repos.lib] '
                             "lets it resolve (whether a path then exists is not proven: re-check)")
    assert "To try in the lock:" in render_recheck_markdown(dict(r, old={"origin": "o", "pins": {}},
                                                                 new={"origin": "n", "pins": {}}))
    appeared = run_compare(up, up.l7, up.l1)  # the path appears once the name is published again
    assert appeared["path_change"] == "rerouted" and appeared["cause"]["pins"] == "old"
    assert "in the lock:" in render_recheck_markdown(r) and "in the lock:" not in \
        render_recheck_markdown(dict(appeared, old=r["old"], new=r["new"]))  # the old pins need no fix now
