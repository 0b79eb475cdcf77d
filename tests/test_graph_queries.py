"""callers / callees / symbols on the fixture monorepos: several symbols per call, ambiguity said out loud,
test code and guesses left out unless asked, bodies reported (through `analyzer.api`); the commands' text,
exit codes and no emoji in text output."""

from __future__ import annotations

import json
import tomllib

import pytest
from graphfixtures import FIXTURES, build_world

from analyzer.api import NeighbourOptions, callees, callers, symbols
from analyzer.cli import main
from analyzer.cli.context import CliContext
from analyzer.errors import AnalyzerError

EXPECTED = tomllib.loads((FIXTURES / "expected_edges.toml").read_text())
H = "harness:packages/dynamic/src/"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    return build_world(tmp_path_factory.mktemp("queries"))


def cli(world, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--lock", str(world.lock_path), "--cache-dir", str(world.ctx.cache_dir), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_several_symbols_in_one_call(world, capsys) -> None:
    done = callees(world.ctx, ["withRetry", "signIn", "KeyedAdapter.send"])
    assert not done.failed and done.direction == "callees"
    assert [r["symbol"] for r in done.results] == ["withRetry", "signIn", "KeyedAdapter.send"]
    by = {r["symbol"]: {e["callee"] for e in r["edges"]} for r in done.results}
    assert by["withRetry"] == {H + "callbacks.ts:fetchOnce", H + "callbacks.ts:logFailure",
                               H + "callbacks.ts:loadInline"}
    assert by["signIn"] == {H + "receivers.ts:OAuthLogin.login", H + "receivers.ts:KeyLogin.login"}
    assert by["KeyedAdapter.send"] == {H + "wire.ts:lookupKey", H + "wire.ts:createKeyed.onPayload"}
    code, out, _ = cli(world, capsys, "--json", "callees", "withRetry", "signIn", "KeyedAdapter.send")
    assert code == 0 and json.loads(out) == {"direction": "callees", "results": done.results}


def test_an_unknown_symbol_among_several_fails_that_one_only(world, capsys) -> None:
    done = callers(world.ctx, ["withRetry", "NoSuchThing"])
    assert done.failed and done.results[1]["error"].startswith("unknown symbol 'NoSuchThing'")
    assert done.results[0]["edges"]
    with pytest.raises(AnalyzerError, match="unknown symbol 'NoSuchThing'"):
        callers(world.ctx, ["NoSuchThing"])
    code, out, err = cli(world, capsys, "callers", "withRetry", "NoSuchThing")
    assert code == 3
    assert "callers of withRetry" in out and "load" in out
    assert err.startswith("error: unknown symbol 'NoSuchThing'") and "Traceback" not in err


def test_an_ambiguous_symbol_is_said_and_each_definition_listed(world, capsys) -> None:
    (data,) = callees(world.ctx, ["stream"]).results
    assert data["ambiguous"] is True and len(data["definitions"]) >= 2
    for dfn in data["definitions"]:
        assert all(e["caller"] == dfn["node"] for e in dfn["edges"])  # never merged across definitions
    code, out, _ = cli(world, capsys, "callees", "stream")
    assert "is ambiguous" in out
    assert out.count("callees of stream") == len(data["definitions"])


def test_merged_declaration_is_one_symbol(world) -> None:
    (data,) = callers(world.ctx, ["CallId"]).results
    assert data["ambiguous"] is False
    assert [d["node"] for d in data["definitions"]] == [H + "merged.ts:CallId"]
    assert {e["caller"] for e in data["edges"]} == {H + "use.ts:mint"}


def test_test_code_is_marked_and_left_out_unless_asked(world, capsys) -> None:
    test_caller = "harness:packages/dynamic/test/options.test.ts:checkKeyed"
    (data,) = callers(world.ctx, ["createKeyed"]).results
    assert test_caller not in {e["caller"] for e in data["edges"]} and data["hidden"]["tests"] == 1
    (data,) = callers(world.ctx, ["createKeyed"], NeighbourOptions(include_tests=True)).results
    assert [(e["caller"], e["test"]) for e in data["edges"]] == [(test_caller, True)]
    _, out, _ = cli(world, capsys, "callers", "createKeyed", "--include-tests")
    assert "[test]" in out


def test_guess_precision_on_the_fixture_corpus_keeps_guesses_out_of_queries(world, capsys) -> None:
    g = world.analysis().graph
    judged = {(e["from"], e["to"], e["line"]): e["guess_right"] for e in EXPECTED["edge"] if e["kind"] == "name"}
    made = {(u, v, d["line"]) for u, v, d in g.edges(data=True) if d["kind"] == "name"}
    assert made and made == set(judged)
    assert all(u.split(":", 1)[0] == v.split(":", 1)[0] for u, v, _ in made)  # never across repos
    precision = sum(judged[m] for m in made) / len(made)
    assert precision == 0.5  # stated in docs/callgraph.md; under 80%, so queries leave guesses out by default
    (data,) = callers(world.ctx, ["Summary.summarize"]).results
    assert data["edges"] == [] and data["hidden"]["guesses"] == 2
    (data,) = callers(world.ctx, ["Summary.summarize"], NeighbourOptions(allow_guesses=True)).results
    assert {e["kind"] for e in data["edges"]} == {"name"}
    _, out, _ = cli(world, capsys, "--json", "callers", "Summary.summarize", "--allow-guesses")
    assert json.loads(out) == {"direction": "callers", **data}


def test_symbols_json_says_whether_a_definition_has_a_body(world, capsys) -> None:
    rows = {r["symbol"]: r for r in symbols(world.ctx, "Registry*").rows}
    assert rows["Registry#type.size"]["kind"] == "method" and rows["Registry#type.size"]["has_body"] is False
    assert rows["Registry.count"]["has_body"] is True
    _, out, _ = cli(world, capsys, "symbols", "Registry*")
    assert "no body" in out


def test_text_output_has_no_emoji_codes(capsys) -> None:
    CliContext().out.print("packages/x.ts:100: call")
    assert capsys.readouterr().out == "packages/x.ts:100: call\n"


def test_a_runtime_mixin_is_possible_and_cites_the_pick_line(world) -> None:
    g = world.analysis().graph
    src, dst = H + "effects.ts:install", "harness:vendor/cordis-like/src/index.ts:Fiber.effect"
    edges = [d for _, v, d in g.out_edges(src, data=True) if v == dst]
    assert len(edges) == 1 and edges[0]["kind"] == "interface" and edges[0]["possible"]
    assert any("extends/implements Pick<Fiber, 'effect'>" in ev for ev in edges[0]["evidence"])


def test_merged_halves_name_each_other(world) -> None:
    g = world.analysis().graph
    assert g.nodes[H + "merged.ts:CallId"]["kind"] == "function"
    assert g.nodes[H + "merged.ts:CallId#type"]["kind"] == "type_alias"
    assert g.in_degree(H + "merged.ts:CallId#type") == 0


def test_test_definitions_are_left_out_unless_asked_and_listed_last(world, capsys) -> None:
    double = "harness:packages/dynamic/test/doubles.test.ts:lookupKey"
    (data,) = callers(world.ctx, ["lookupKey"]).results
    assert double not in [d["node"] for d in data["definitions"]] and data["hidden"]["test_definitions"] == 1
    assert data["ambiguous"] is False
    _, out, _ = cli(world, capsys, "callers", "lookupKey")
    assert "1 definition(s) in test code hidden; --include-tests shows them" in out
    (data,) = callees(world.ctx, ["lookupKey"], NeighbourOptions(include_tests=True)).results
    assert [(d["node"], d["test"]) for d in data["definitions"]][-1] == (double, True)  # production first
    _, out, _ = cli(world, capsys, "callees", "lookupKey", "--include-tests")
    assert "callees of lookupKey (function) harness:packages/dynamic/test/doubles.test.ts:2 [test]" in out


def test_annotate_resolves_past_test_definitions_and_lists_production_first(world, capsys, tmp_path) -> None:
    notes = tmp_path / "notes.toml"
    code, out, err = cli(world, capsys, "annotate", "lookupKey", "looks the key up", "--annotations", str(notes))
    assert code == 0 and "wire.ts" in notes.read_text() and "doubles.test.ts" not in notes.read_text()
    code, _, err = cli(world, capsys, "annotate", "lookupKey", "x", "--include-tests", "--annotations", str(notes))
    assert code == 3
    listed = err.split(": ", 2)[2]
    assert listed.index("wire.ts") < listed.index("doubles.test.ts")
    assert "doubles.test.ts:lookupKey (line 2) [test]" in err
