"""Request plans: the control holds the factor at its first value, the treatment changes it (and nothing else)."""

from __future__ import annotations

from pathlib import Path

from observe_fixtures import SYSTEM, experiment

from analyzer.observe.experiment import parse_experiment
from analyzer.observe.plan import plan


def _plan(tmp_path: Path, factor: str, **sections):
    exp = parse_experiment(experiment(factor, **sections), tmp_path / "e.toml")
    return exp, plan(exp)


def _series(reqs, name):
    return [r for r in reqs if r.series == name and r.measured]


def _changed(a, b) -> list[str]:
    pa, pb = a.parts(), b.parts()
    return [k for k in ("system", "tools", "messages") if pa[k]["sha256"] != pb[k]["sha256"]]


def test_system_prefix_control_repeats_first_value_and_treatment_cycles(tmp_path: Path) -> None:
    _, reqs = _plan(tmp_path, "system-prefix", run={"requests": 4}, vary={"values": ["A.", "B."]})
    control, treatment = _series(reqs, "control"), _series(reqs, "treatment")
    assert [r.system for r in control] == [f"A.\n{SYSTEM}"] * 4
    assert [r.value for r in treatment] == ["A.", "B.", "A.", "B."]
    assert treatment[1].system == f"B.\n{SYSTEM}"
    assert _changed(control[1], treatment[1]) == ["system"] and _changed(control[0], treatment[0]) == []


def test_system_suffix_appends(tmp_path: Path) -> None:
    _, reqs = _plan(tmp_path, "system-suffix")
    t = _series(reqs, "treatment")
    assert t[2].system == f"{SYSTEM}\nTime 10:00:03." and t[2].system.startswith(SYSTEM)


def test_tools_order_changes_only_the_tools_part(tmp_path: Path) -> None:
    _, reqs = _plan(tmp_path, "tools-order")
    c, t = _series(reqs, "control"), _series(reqs, "treatment")
    assert [x["function"]["name"] for x in t[1].tools] == ["gamma", "beta", "alpha"]
    assert sorted(x["function"]["name"] for x in t[1].tools) == sorted(x["function"]["name"] for x in c[1].tools)
    assert _changed(c[1], t[1]) == ["tools"]


def test_tool_added_from_request_two_on(tmp_path: Path) -> None:
    _, reqs = _plan(tmp_path, "tool-added")
    t = _series(reqs, "treatment")
    assert [len(r.tools) for r in t] == [3, 4, 4] and t[1].tools[-1]["function"]["name"] == "delta"
    assert [len(r.tools) for r in _series(reqs, "control")] == [3, 3, 3]


def test_history_compacted_replaces_earlier_messages(tmp_path: Path) -> None:
    _, reqs = _plan(tmp_path, "history-compacted")
    c, t = _series(reqs, "control"), _series(reqs, "treatment")
    assert len(c[0].messages) == 3 and len(t[0].messages) == 3
    assert len(t[1].messages) == 1 and "They talked about berths." in t[1].messages[0]["content"]
    assert t[1].messages[0]["content"].endswith("What is the tide at noon?")
    assert _changed(c[1], t[1]) == ["messages"]


def test_interval_values_are_gaps_and_nothing_else_changes(tmp_path: Path) -> None:
    _, reqs = _plan(tmp_path, "interval")
    assert [r.wait_s for r in _series(reqs, "treatment")] == [0.0, 0.05, 0.1]
    assert [r.wait_s for r in _series(reqs, "control")] == [0.0, 0.0, 0.0]  # the first value; first request 0
    assert all(_changed(reqs[0], r) == [] for r in reqs)


def test_warmup_sends_one_unmeasured_request_first(tmp_path: Path) -> None:
    _, reqs = _plan(tmp_path, "warmup")
    t = [r for r in reqs if r.series == "treatment"]
    assert [r.measured for r in t] == [False, True, True, True] and t[0].index == 0


def test_none_is_one_series(tmp_path: Path) -> None:
    _, reqs = _plan(tmp_path, "none", run={"requests": 4})
    assert {r.series for r in reqs} == {"control"} and len(reqs) == 4


def test_body_streams_with_usage_and_digests_are_of_what_is_sent(tmp_path: Path) -> None:
    import hashlib
    import json
    exp, reqs = _plan(tmp_path, "tools-order")
    body = reqs[3].body(exp)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": SYSTEM} and body["max_tokens"] == 4
    tools_json = json.dumps(body["tools"], ensure_ascii=False, separators=(",", ":")).encode()
    assert reqs[3].parts()["tools"] == {"sha256": hashlib.sha256(tools_json).hexdigest(), "bytes": len(tools_json),
                                        "names": ["alpha", "beta", "gamma"]}
