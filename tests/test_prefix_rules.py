"""`analyze prefix` without a server: endpoint detection, the structure diff over the request model,
attribution to hazards and to pinned literals (a small fixture repository indexed for real), and the report
over hand-built rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import git
import pytest

from analyzer.cli import main
from analyzer.index.build import index_repo
from analyzer.prefix import analyse, report_lines
from analyzer.prefix.attribute import attribute, match_hazard, needles, value_at
from analyzer.prefix.endpoint_rule import detect_rule
from analyzer.prefix.source_lookup import IndexLiterals
from analyzer.prefix.structure import first_difference, visible
from analyzer.prefix.tokens import PlainRenderer
from analyzer.requests import parse_request

SYSTEM = "You are a coding agent.\nRead files before editing them.\nCurrent working directory: /work/alpha\n"
TOOLS = [{"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": {}}},
         {"type": "function", "function": {"name": "bash", "description": "Run a command", "parameters": {}}}]


def body(system: str = SYSTEM, tools: list[dict[str, Any]] | None = None,
         messages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    msgs = messages if messages is not None else [{"role": "user", "content": "list the files"}]
    return {"model": "m", "messages": [{"role": "system", "content": system}, *msgs],
            "tools": TOOLS if tools is None else tools}


# -- endpoint detection ------------------------------------------------------------------------------------------

def test_the_endpoint_rule_is_detected_from_the_rows_server_first() -> None:
    assert detect_rule({"usage": {"prompt_cache_hit_tokens": 3}})[0] == "deepseek"
    assert detect_rule({"server": {"version": "llama.cpp b1-abc"}})[0] == "llama.cpp"
    # llama.cpp serving the Anthropic shape reports Anthropic's usage fields: the server decides
    assert detect_rule({"server": {"version": "llama.cpp b1"}, "usage": {"cache_read_input_tokens": 5}})[0] == \
        "llama.cpp"
    assert detect_rule({"config": {"endpoint": "https://api.anthropic.com/v1"}})[0] == "anthropic"
    rule, why = detect_rule({"usage": {"prompt_tokens": 3}, "config": {"endpoint": "http://10.0.0.1/v1"}})
    assert rule == "llama.cpp" and "assumed" in why


# -- request structure -------------------------------------------------------------------------------------------

def test_a_system_change_is_located_by_char_offset_with_visible_whitespace() -> None:
    d = first_difference(body(), body(system=SYSTEM.replace("alpha", "beta")))
    assert (d.kind, d.part, d.path) == ("changed", "system", "messages[0]")
    assert d.offset == SYSTEM.index("alpha") and d.before.endswith("directory: /work/")
    assert d.old.startswith("alpha") and d.new.startswith("beta")
    assert visible(d.before).endswith("directory:·/work/") and visible("a\n\tb") == "a↵→b"


def test_tool_order_history_rewrite_and_appended_turn() -> None:
    d = first_difference(body(), body(tools=TOOLS[::-1]))
    assert (d.kind, d.part, d.path, d.index, d.offset, d.old, d.new) == (
        "changed", "tools", "tools[0].function.name", 0, 0, "read", "bash")
    history = [{"role": "user", "content": "list the files"}, {"role": "assistant", "content": "a.txt b.txt"},
               {"role": "user", "content": "open a.txt"}]
    rewritten = [{"role": "user", "content": "Summary: listed files"}, *history[2:]]
    d = first_difference(body(messages=history), body(messages=rewritten))
    assert (d.part, d.path, d.role, d.offset) == ("messages", "messages[1]", "user", 0)
    d = first_difference(body(messages=history[:1]), body(messages=history))
    assert (d.kind, d.path, d.role) == ("appended", "messages[2]", "assistant")
    d = first_difference(body(messages=history), body(messages=[history[0], {"role": "tool", "content": "x"}]))
    assert (d.path, d.old, d.new) == ("messages[2].role", "assistant", "tool")
    assert first_difference(body(), body()).kind == "identical"


# -- attribution -------------------------------------------------------------------------------------------------

def _finding(fid: str, kind: str, part: str, through: int | None = None) -> dict[str, Any]:
    """A hazards finding; `through`: a line of src/prompt.ts its chain passes."""
    steps = [{"repo": "app", "path": "src/env.ts", "line": 3, "why": "source"}]
    if through is not None:
        steps.append({"repo": "app", "path": "src/prompt.ts", "line": through, "why": "template literal"})
    return {"id": fid, "category": "value", "kind": kind,
            "source": {"repo": "app", "path": "src/env.ts", "line": 3, "text": "process.cwd()", "rule": "r"},
            "sink": {"repo": "app", "path": "src/prompt.ts", "line": 9, "part": part, "rule": "s", "text": ""},
            "steps": steps}


def test_a_hazard_matches_by_request_part_and_the_shape_of_the_value() -> None:
    d = first_difference(body(), body(system=SYSTEM.replace("alpha", "beta")))
    assert value_at(d.field_text, d.offset or 0) == "/work/beta"
    findings = [_finding("t1", "time", "system prompt"), _finding("e1", "environment", "system prompt"),
                _finding("e2", "environment", "tool definitions")]
    hit, why, others = match_hazard(d, findings)
    assert hit is not None and hit["id"] == "e1" and "path" in why and others == 0
    assert match_hazard(d, findings[:1])[0] is None           # a clock cannot have written a path
    order = first_difference(body(), body(tools=TOOLS[::-1]))
    assert match_hazard(order, [_finding("o1", "ordering", "tool definitions")])[0]["id"] == "o1"
    assert match_hazard(order, [_finding("o2", "ordering", "system prompt")])[0] is None


@pytest.fixture(scope="module")
def app_index(tmp_path_factory: pytest.TempPathFactory) -> Any:
    where = tmp_path_factory.mktemp("app")
    repo = git.Repo.init(where, initial_branch="main")
    (where / "src").mkdir()
    (where / "src" / "prompt.ts").write_text(
        "export function buildPrompt(cwd: string): string {\n"
        "  const lines = [\"You are a coding agent.\", \"Read files before editing them.\"];\n"
        "  lines.push(`Current working directory: ${cwd}`);\n"
        "  return lines.join(\"\\n\");\n"
        "}\n"
        "// Current working directory: mentioned in a comment is not a literal\n")
    (where / "src" / "tools.ts").write_text("export const read = { name: \"read\", description: \"Read a file\" };\n")
    repo.index.add(["src/prompt.ts", "src/tools.ts"])
    actor = git.Actor("Fixture", "fixture@example.invalid")
    commit = repo.index.commit("app", author=actor, committer=actor).hexsha
    idx = index_repo(repo, commit, repo_name="app", cache=None, workers=1)
    yield idx, commit


def test_the_literal_next_to_a_divergence_is_found_at_its_pinned_line(app_index: Any) -> None:
    idx, commit = app_index
    lookup = IndexLiterals([idx])
    d = first_difference(body(), body(system=SYSTEM.replace("alpha", "beta")))
    assert [n for _side, n in needles(d)][:2] == ["Current working directory: /work/", "Current working directory: "]
    # two environment findings reach the system prompt; only one's chain passes the literal that holds the text
    a = attribute(d, [_finding("e0", "environment", "system prompt", through=2),
                      _finding("e1", "environment", "system prompt", through=3)], lookup)
    assert a.literal is not None and a.hazard is not None and a.hazard["id"] == "e1"
    assert "its chain passes src/prompt.ts:3" in a.hazard_why and a.other_hazards == 0
    elsewhere = attribute(d, [_finding("e0", "environment", "system prompt", through=2)], lookup)
    assert elsewhere.hazard is None and "none passes src/prompt.ts:3" in elsewhere.hazard_why
    assert "src/prompt.ts:2" in elsewhere.hazard_why
    assert (a.literal.repo, a.literal.path, a.literal.line, a.literal.commit) == ("app", "src/prompt.ts", 3, commit)
    assert a.literal.via == "index literals" and a.literal.side == "before"
    facts = lookup("Read a file")                  # a string property value: straight from the index's facts
    assert [(h.path, h.line, h.via) for h in facts] == [("src/tools.ts", 1, "index facts")]
    array = lookup("Read files before editing")    # an array element: not a string fact, a literal fact
    assert [(h.path, h.line, h.via) for h in array] == [("src/prompt.ts", 2, "index literals")]
    assert lookup("mentioned in a comment") == []                # text outside any literal is not an attribution


def test_the_report_over_rows_names_part_token_prediction_and_attribution(app_index: Any) -> None:
    idx, _commit = app_index
    bodies = [body(), body(system=SYSTEM.replace("alpha", "beta")), body(system=SYSTEM.replace("alpha", "beta"))]
    renderer = PlainRenderer()
    rows = []
    for i, b in enumerate(bodies, 1):
        request = parse_request(b)
        assert request is not None
        n = len(renderer.render_request(request).tokens)
        cached = 0 if i == 1 else (n - 1 if i == 3 else 3)
        rows.append({"series": "pi", "index": i, "request_body": json.dumps(b),
                     "usage": {"prompt_tokens": n, "prompt_tokens_details": {"cached_tokens": cached}},
                     "server": {"version": "llama.cpp test"}})
    rows.insert(1, {"series": "pi", "index": 0, "method": "GET", "usage": None})  # a non-chat exchange
    rep = analyse(rows, findings=[_finding("e1", "environment", "system prompt", through=3)],
                  lookup=IndexLiterals([idx]))
    assert [r.row for r in rep.requests] == [1, 3, 4]
    assert rep.skipped == ["row 2: no request body of a known shape"]
    assert [r.conversation for r in rep.requests] == [1, 1, 1]       # one changed line: the same lineage
    assert [r.baseline_row for r in rep.requests] == [None, 1, 3]
    second = rep.requests[1]
    assert second.structure is not None and (second.structure.part, second.structure.path) == ("system",
                                                                                              "messages[0]")
    assert second.token_index is not None and second.token_context["new"][0] == "beta"
    assert second.predicted == second.token_index and second.match is not None and second.match.entry == 1
    assert second.difference == 3 - second.token_index
    assert second.cause is not None and second.cause.kind == "state-gap"
    assert any("fewer than predicted" in f for f in second.findings)
    third = rep.requests[2]
    assert third.structure is not None and third.structure.kind == "identical" and third.difference == 0
    assert third.cause is None
    text = "\n".join(report_lines(rep))
    assert f"request 3 lost {second.lost:,} of {second.prompt_tokens:,} tokens at messages[0] char" in text
    assert "written by app src/prompt.ts:3" in text and "hazard e1" in text
    assert "assumed: a plain template" in text
    against = analyse(rows, against=1)
    assert [r.baseline_row for r in against.requests] == [None, 1, 1]


def test_prefix_cli_bad_input_is_one_error_line(tmp_path: Path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"series": "x", "index": 1, "usage": None}) + "\n")
    assert main(["prefix", str(log), "--no-source"]) == 3
    assert "no row carries a request body of a known shape" in capsys.readouterr().err
    log.write_text(json.dumps({"series": "x", "index": 1, "request_body": json.dumps(body())}) + "\n")
    assert main(["prefix", str(log), "--no-source", "--against", "first"]) == 2
    assert "expected a row number" in capsys.readouterr().err
    assert main(["prefix", str(log), "--no-source", "--against", "5"]) == 3
    assert "row 5 of the log is not a successful request" in capsys.readouterr().err
    (tmp_path / "h.json").write_text("{}")
    assert main(["prefix", str(log), "--no-source", "--hazards", str(tmp_path / "h.json")]) == 3
    assert "not an `analyze hazards --json` result" in capsys.readouterr().err
    assert main(["--json", "prefix", str(log), "--no-source"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["schema"] == "analyzer.prefix/2" and out["requests"][0]["predicted"]["cached"] == 0


class _ExactStandIn:
    """A renderer that claims to be exact (as a llama.cpp server would) for a log from another endpoint."""

    exact = True
    describe = "the server's own chat template and tokenizer (stand-in)"

    def render(self, b: dict[str, Any]) -> Any:
        return PlainRenderer().render(b)

    def render_request(self, request: Any) -> Any:
        return PlainRenderer().render_request(request)


def test_a_deepseek_log_through_the_proxy_is_predicted_in_cache_units(tmp_path: Path) -> None:
    import httpx
    from observe_server import fake_engine

    from analyzer.observe.jsonl import read_rows
    from analyzer.proxy import start_proxy

    long_system = SYSTEM + "Rules: " + "keep every answer short and exact. " * 40
    with fake_engine(usage_style="deepseek") as up, start_proxy(up.base_url, tmp_path) as proxy:
        for b in (body(long_system), body(long_system, messages=[{"role": "user", "content": "other question"}])):
            streamed = {**b, "stream": True, "stream_options": {"include_usage": True}}
            assert httpx.post(proxy.base_url + "/chat/completions", json=streamed).status_code == 200
    rows = read_rows(proxy.log_path)
    rep = analyse(rows, renderer=_ExactStandIn())
    assert rep.rule == "deepseek" and "prompt_cache_hit_tokens" in rep.rule_why
    assert rep.renderer.startswith("assumed: ") and not rep.exact  # another server's tokenizer is an assumption
    second = rep.requests[1]
    # A+B then A+C: the first request's unit (its whole prompt) is not a prefix of the second → nothing predicted
    assert second.predicted == 0
    assert second.reported == rows[1]["usage"]["prompt_cache_hit_tokens"]
    assert second.structure is not None and second.structure.path == "messages[1]"


def test_against_control_pairs_each_treatment_request_with_the_control_at_its_index() -> None:
    rows = []
    for series, cwd in (("control", "alpha"), ("treatment", "beta")):
        for i in (1, 2):
            b = body(system=SYSTEM.replace("alpha", cwd if i == 2 or series == "control" else "alpha"))
            rows.append({"series": series, "index": i, "request_body": json.dumps(b)})
    rep = analyse(rows, against="control")
    assert [(r.row, r.baseline_row) for r in rep.requests] == [(1, None), (2, 1), (3, 1), (4, 2)]
    assert rep.requests[2].structure is not None and rep.requests[2].structure.kind == "identical"
    fourth = rep.requests[3].structure
    assert fourth is not None and (fourth.part, fourth.new[:4]) == ("system", "beta")
    # the prediction still follows what the cache held (row 3's state, the latest with that prefix)
    assert rep.requests[3].match is not None and rep.requests[3].match.entry == 3


def test_the_index_records_every_literal_a_needle_can_be_looked_up_in() -> None:
    """Needles are at least `min_chars` long; the index keeps literal texts of at least LITERAL_MIN_CHARS."""
    from analyzer.index.model import LITERAL_MIN_CHARS
    from analyzer.prefix.attribute import literal_settings

    assert int(literal_settings()["min_chars"]) >= LITERAL_MIN_CHARS
