"""Attribution names the writer: of the literals that hold a request's first differing text, the one in the
function that writes the request part (on the call graph's request path) comes first; an error message, a
logged string and an example extension with the same words come after, each with the reason; when several
writers fit, all of them are listed. A small application repo (tests/attributionfixtures.py) is indexed and
its call graph built for real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from attributionfixtures import WORDS, make_app_repo, system_body

from analyzer.analysis import analyze
from analyzer.api import open_session
from analyzer.cli import main
from analyzer.errors import AnalyzerError
from analyzer.index.build import index_repo
from analyzer.prefix.attribute import attribute, needles, rank_sites
from analyzer.prefix.request_path import ON_PATH, WRITER, RequestPath
from analyzer.prefix.source_lookup import SourceLookup
from analyzer.prefix.structure import first_difference
from analyzer.sources.workspace import open_repo

OPENER = "You assist with small code changes."


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("attribution")
    commit = make_app_repo(tmp / "app")
    lock = tmp / "repos.lock"
    lock.write_text(f'[repos.app]\nurl = "{(tmp / "app").as_posix()}"\ncommit = "{commit}"\n')
    ctx = open_session(lock, cache_dir=tmp / "cache", environ={})
    analysis = analyze(ctx)                       # syncs the repo into the cache, indexes it, stores the graph
    pin = ctx.lock.repos["app"]
    repo = open_repo(ctx, pin, fetch=False)
    idx = index_repo(repo, commit, repo_name="app", cache=None, workers=1)
    lookup = SourceLookup([idx], {"app": repo})
    lookup.request_path = RequestPath.build(analysis.view, lookup)
    return {"lookup": lookup, "bare": SourceLookup([idx]), "commit": commit, "lock": lock, "tmp": tmp}


def _cwd_diff(opener: str = OPENER) -> Any:
    """The working-directory line differs; with the default branch's opener before it, or other words."""
    return first_difference(system_body(f"{opener}\n{WORDS}/home/dev/alpha"),
                            system_body(f"{opener}\n{WORDS}/home/dev/beta"))


def test_the_template_in_the_writer_of_the_system_prompt_is_named_before_the_same_words_elsewhere(app) -> None:
    a = attribute(_cwd_diff(), [], app["lookup"])
    assert a.literal is not None and a.placed
    assert (a.literal.path, a.literal.line) == ("src/prompt.ts", 8)
    ranked = [(w.site.path, w.site.line) for w in a.writers]
    # both branches of the writer hold the line; the default branch's opener is in the request, so it is first
    assert ranked[:2] == [("src/prompt.ts", 8), ("src/prompt.ts", 4)]
    assert a.fitting == 1 and "of what its function writes just before it are in the request" in a.writers[0].why
    # the error message (returned into an Error's super), the logged warning, then the example, in that order
    assert ranked[2:] == [("src/errors.ts", 2), ("src/errors.ts", 11), ("examples/extensions/remote.ts", 2)]
    why = {(w.site.path, w.site.line): w.why for w in a.writers}
    assert "in buildSystemPrompt, which returns the system prompt" in why[("src/prompt.ts", 4)]
    assert "just before it" not in why[("src/prompt.ts", 4)]
    assert "a message's argument (super" in why[("src/errors.ts", 2)]
    assert "a message's argument (console.warn)" in why[("src/errors.ts", 11)]
    assert why[("examples/extensions/remote.ts", 2)].startswith("a test, example or documentation path")


def test_two_writers_that_fit_are_both_listed_and_said_to_fit(app) -> None:
    a = attribute(_cwd_diff("Words of a custom prompt."), [], app["lookup"])   # nothing tells the branches apart
    assert a.fitting == 2 and [w.fits for w in a.writers] == [True, True, False, False, False]
    lines = a.source_lines()
    assert "src/prompt.ts:4" in lines[0]
    assert lines[1] == "  writers: 2 writers fit equally; they and the others, ranked:"
    assert lines[2].startswith("    1.=app src/prompt.ts:4 — ") and lines[3].startswith("    2.=app src/prompt.ts:8 — ")
    assert lines[4].startswith("    3. app src/errors.ts:2 — ")
    listed = a.as_json()
    assert listed["writers_that_fit"] == 2 and [w["rank"] for w in listed["writers"]] == [1, 2, 3, 4, 5]
    assert listed["writers"][0]["function"] == "app:src/prompt.ts:buildSystemPrompt"
    assert listed["writers"][3]["message_call"] == "console.warn" and listed["ranked_by_request_path"] is True


def test_a_function_on_the_request_path_ranks_before_one_the_graph_does_not_connect_to_a_send(app) -> None:
    rp = app["lookup"].request_path
    assert rp.sends == {"app:src/client.ts:send"}
    assert "app:src/session.ts:runTurn" in rp.on_path and "app:src/session.ts:helpText" not in rp.on_path
    assert rp.place("app:src/prompt.ts:buildSystemPrompt", ["system prompt"]).rank == WRITER
    hits = app["lookup"]("Answer in few words, please.")
    diff = first_difference(system_body("S", "Answer in few words, please. one"),
                            system_body("S", "Answer in few words, please. two"))
    ranked = rank_sites(hits, diff, None, rp)
    assert [w.site.node for w in ranked] == ["app:src/session.ts:runTurn", "app:src/session.ts:helpText"]
    assert ranked[0].key[2] == ON_PATH and "on the request path" in ranked[0].why
    assert "does not connect to a send" in ranked[1].why and not ranked[1].fits


def test_without_a_call_graph_messages_and_examples_still_rank_after_templates(app) -> None:
    a = attribute(_cwd_diff(), [], app["bare"])
    assert a.literal is not None and not a.placed
    ranked = [(w.site.path, w.site.line) for w in a.writers]
    assert ranked[0] == ("src/prompt.ts", 8) and a.fitting == 1  # its branch's opener is in the request
    assert ranked[-1] == ("examples/extensions/remote.ts", 2)
    # the logged string is a message by its own call; the one returned into an Error's `super(…)` is known as
    # a message only through the graph's call sites, so here it ties with the other branch's template
    assert ranked.index(("src/errors.ts", 11)) > max(ranked.index(("src/prompt.ts", 4)),
                                                     ranked.index(("src/errors.ts", 2)))
    other = attribute(_cwd_diff("Words of a custom prompt."), [], app["bare"])
    assert {(w.site.path, w.site.line) for w in other.writers if w.fits} == \
        {("src/prompt.ts", 4), ("src/prompt.ts", 8), ("src/errors.ts", 2)}
    assert "not placed on the request path" in a.source_lines()[1]


def test_a_prompt_template_kept_in_a_data_file_is_found_through_the_words_next_to_the_value(app) -> None:
    before = "You help with code on the small-7b model. Your folder is /srv/one."
    d = first_difference(system_body(before), system_body(before.replace("one", "two")))
    assert ("before", "model. Your folder is ") in needles(d)   # the model's name is a placeholder too
    a = attribute(d, [], app["lookup"])
    assert a.literal is not None and (a.literal.path, a.literal.line, a.literal.via) == \
        ("presets/agent.yml", 3, "data file")
    assert a.literal.needle == "model. Your folder is "
    # a shorter needle (`folder is `) is in the system prompt's writer too, but covers less of the field
    assert any(w.site.path == "src/prompt.ts" for w in rank_sites(app["lookup"]("folder is "), d, None,
                                                                   app["lookup"].request_path)[:1])
    bare = attribute(d, [], app["bare"]).literal            # without the repo no data file is read
    assert bare is None or bare.via != "data file"


def test_a_file_content_after_a_heading_line_is_traced_through_the_heading(app) -> None:
    head = f"{OPENER}\n{WORDS}/w\n\n"
    d = first_difference(system_body(head + "first rule of the project"), system_body(head + "second rule"))
    assert d.offset == len(head)
    assert ("before", f"{WORDS}/w") in needles(d)       # the divergence starts a line: the lines before it
    a = attribute(d, [], app["lookup"])
    assert a.literal is not None and a.literal.path == "src/prompt.ts"
    # the same when the file's text differs in the middle of its first line
    mid = first_difference(system_body(head + "first rule of the project"), system_body(head + "first rule changed"))
    assert mid.offset == len(head) + len("first rule ")
    assert ("before", f"{WORDS}/w") in needles(mid)
    b = attribute(mid, [], app["lookup"])
    assert b.literal is not None and b.literal.path == "src/prompt.ts" and b.literal.needle.startswith(WORDS)


def test_analyze_prefix_prints_the_ranked_writers(app, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"series": "app", "index": i, "request_body": json.dumps(system_body(f"Custom words.\n{WORDS}/home/{d}")),
             "usage": {"prompt_tokens": 30, "prompt_tokens_details": {"cached_tokens": 0}},
             "server": {"version": "llama.cpp test"}} for i, d in ((1, "alpha"), (2, "beta"))]
    log = Path(app["tmp"]) / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code = main(["--lock", str(app["lock"]), "--cache-dir", str(Path(app["tmp"]) / "cache"), "prefix", str(log),
                 "--rule", "vllm"])
    out = capsys.readouterr().out
    assert code == 0
    assert "ranked on the request path of the stored call graph (1 send(s))" in out
    assert "writers: 2 writers fit equally" in out and "1.=app src/prompt.ts:4" in out
    assert "(the text before it written by app src/prompt.ts:4 @" in out


def test_a_long_value_does_not_cut_the_words_before_it(app) -> None:
    deep = "/srv/" + "/".join(f"level-{i}" for i in range(12)) + "/"
    d = first_difference(system_body(f"Custom words.\n{WORDS}{deep}one"),
                         system_body(f"Custom words.\n{WORDS}{deep}two"))
    found = [n for side, n in needles(d) if side == "before"]
    assert WORDS in found and not any(n.startswith(WORDS[1:]) for n in found)
    starts = [d.field_text.index(n) for n in found]
    assert all(i == 0 or d.field_text[i - 1] in " \n" for i in starts)   # no needle starts mid-word
    a = attribute(d, [], app["lookup"])
    assert a.literal is not None and a.literal.needle == WORDS and a.literal.path == "src/prompt.ts"


def test_a_constant_at_the_top_level_takes_the_place_of_its_files_functions_and_says_so(app) -> None:
    d = first_difference(system_body("Our words.\nFinish with a short list of what changed. one"),
                         system_body("Our words.\nFinish with a short list of what changed. two"))
    [top] = rank_sites(app["lookup"]("Finish with a short list"), d, None, app["lookup"].request_path)
    assert top.site.node == "app:src/prompt.ts:<module>" and top.key[2] == WRITER
    assert top.why.startswith("at the top level of a file whose function is buildSystemPrompt, which returns")
    # in a user message the same constant is not the system prompt's writer's: other code, said so
    m = first_difference(system_body("S", "Finish with a short list of what changed. one"),
                         system_body("S", "Finish with a short list of what changed. two"))
    [other] = rank_sites(app["lookup"]("Finish with a short list"), m, None, app["lookup"].request_path)
    assert other.key[2] > ON_PATH and "does not connect to a send" in other.why


def test_the_attribution_rules_are_not_part_of_the_stored_graphs_key() -> None:
    """They are read over a built graph: editing them must not make every stored graph stale."""
    import analyzer.graph.store as store

    root = Path(store.__file__).resolve().parent.parent
    assert store._hazard_rule(root / "rules" / "prefix" / "attribution.toml", root)
    assert not store._hazard_rule(root / "rules" / "typescript.toml", root)   # the resolver reads this one


def _later_commit(where: Path, old: str, new: str) -> str:
    """A second commit of the fixture app in which the writer's words changed from `old` to `new`."""
    import git
    from attributionfixtures import ACTOR

    prompt = where / "src" / "prompt.ts"
    prompt.write_text(prompt.read_text().replace(old, new))
    repo = git.Repo(where)
    repo.git.add("-A")
    return repo.index.commit("words changed", author=ACTOR, committer=ACTOR).hexsha


def _moved_words(tmp_path: Path) -> tuple[str, Path, list[dict[str, Any]]]:
    """The app pinned at a first commit whose words a later commit changed, and two requests that carry the
    later words: (the later commit, the lock, the rows)."""
    first = make_app_repo(tmp_path / "app")
    later = _later_commit(tmp_path / "app", "Present folder: ", "Checked-out folder: ")
    lock = tmp_path / "repos.lock"
    lock.write_text(f'[repos.app]\nurl = "{(tmp_path / "app").as_posix()}"\ncommit = "{first}"\n')
    rows = [{"series": "app", "index": i,
             "request_body": json.dumps(system_body(f"Custom words.\nChecked-out folder: /home/{d}")),
             "usage": {"prompt_tokens": 30, "prompt_tokens_details": {"cached_tokens": 0}},
             "server": {"version": "llama.cpp test"}} for i, d in ((1, "alpha"), (2, "beta"))]
    return later, lock, rows


def test_the_lookup_at_another_commit_than_the_lock_pins_finds_the_words_only_there(tmp_path: Path) -> None:
    from analyzer.api import PrefixOptions, open_session, prefix
    from analyzer.api.prefix import pinned_lookup

    later, lock, rows = _moved_words(tmp_path)
    session = open_session(lock, cache_dir=tmp_path / "cache", environ={})
    cold = pinned_lookup(session)  # the lock's own pins are read from the cache, never fetched
    assert cold.lookup is None and cold.note is not None and cold.note.startswith("not looked up in app (")
    moved = pinned_lookup(session, [f"app={later}"])
    assert moved.note is not None and moved.note.startswith(f"literals looked up in app @ {later[:12]}")
    found = prefix(rows, PrefixOptions(rule="vllm", lookup=moved.lookup)).requests[1].attribution
    assert found is not None and found.literal is not None
    assert (found.literal.path, found.literal.line, found.literal.commit) == ("src/prompt.ts", 4, later)
    with pytest.raises(AnalyzerError, match="the commit must be the full 40-hex sha"):
        pinned_lookup(session, ["app=abc123"])


def test_analyze_prefix_at_looks_the_text_up_at_another_commit_than_the_lock_pins(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    later, lock, rows = _moved_words(tmp_path)
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ["--lock", str(lock), "--cache-dir", str(tmp_path / "cache"), "prefix", str(log), "--rule", "vllm"]
    assert main([*base, "--at", f"app={later}"]) == 0
    out = capsys.readouterr().out
    # the words exist only at the later commit: found there, and said to be looked up there
    assert f"literals looked up in app @ {later[:12]}" in out
    assert f"app src/prompt.ts:4 @ {later[:12]}" in out
    assert main([*base, "--at", "app=abc123"]) == 2
    assert "--at 'app=abc123': the commit must be the full 40-hex sha" in capsys.readouterr().err


def test_a_files_content_under_its_own_title_is_traced_to_the_heading_above_the_title(app) -> None:
    # the file's text shares its first words with a string the app shows elsewhere (off the request path);
    # the heading the writer puts above the file stands past the file's own title line and a blank line
    head = f"{OPENER}\n{WORDS}/w\n# Folder notes here\n\nType a task "
    d = first_difference(system_body(head + "first"), system_body(head + "second"))
    assert ("before", f"{WORDS}/w") in needles(d)
    a = attribute(d, [], app["lookup"])
    assert a.literal is not None and (a.literal.path, a.literal.line) == ("src/prompt.ts", 8)


def test_a_heading_line_ending_in_a_long_path_is_looked_up_by_its_opening_words(app) -> None:
    deep = "/srv/" + "/".join(f"level-{i}" for i in range(12)) + "/notes.md"
    head = f"{OPENER}\n{WORDS}{deep}\n# Folder notes here\n\nType a task "
    d = first_difference(system_body(head + "first"), system_body(head + "second"))
    assert ("before", WORDS) in needles(d)
    a = attribute(d, [], app["lookup"])
    assert a.literal is not None and (a.literal.path, a.literal.line) == ("src/prompt.ts", 8)


class _TwoLiteralLookup:
    """Two literals of one module: an intro farther up the block (with framing written just before it) and the
    heading right above a file's content."""

    def __init__(self) -> None:
        from analyzer.prefix.attribute import LiteralSite

        self.sites = [
            LiteralSite("app", "c" * 40, "src/render.ts", 3, "intro", "", "before", "index literals",
                        full="'Intro words for the files below, please read.'", node="app:src/render.ts:intro"),
            LiteralSite("app", "c" * 40, "src/render.ts", 20, "heading", "", "before", "index literals",
                        full="`Notes from: ${path}\\n\\n${content}`", node="app:src/render.ts:section"),
        ]

    def __call__(self, needle: str) -> list[Any]:
        return [s for s in self.sites if needle in s.full]

    def written_before(self, site: Any, lines: int) -> list[str]:
        return ["Framing line that opens the notes box"] if site.line == 3 else []


def test_the_heading_nearest_above_a_files_content_wins_over_a_farther_line_placed_no_better() -> None:
    head = ("Framing line that opens the notes box\nIntro words for the files below, please read.\n\n"
            "Notes from: NOTES.md\n\n# Title of file\n\nBody text shared then ")
    d = first_difference(system_body(head + "one"), system_body(head + "two"))
    a = attribute(d, [], _TwoLiteralLookup())
    assert a.literal is not None and a.literal.line == 20 and a.literal.needle == "Notes from: "


def test_text_that_only_an_example_holds_names_no_writer(app) -> None:
    d = first_difference(system_body("Custom words.\n(in the local host)"),
                         system_body("Custom words.\n(on the remote host)"))
    a = attribute(d, [], app["lookup"])
    assert a.literal is not None and a.literal.path == "examples/extensions/remote.ts"
    assert a.only_later and a.as_json()["only_tests_or_examples"] is True
    line = a.source_lines()[0]
    assert line.startswith("  source:  no application code holds «on·the·remote·host)»")
    assert "app examples/extensions/remote.ts:2" in line and "is in the literal" not in line
    # the application's own template is still named when it holds the words
    assert not attribute(_cwd_diff(), [], app["lookup"]).only_later


def test_the_closest_earlier_request_names_who_wrote_the_text_where_it_differs(app) -> None:
    """A changed file after a session in another folder: the state reused is the other folder's, the closest
    request is the same folder's; where that one differs is traced too (like with like)."""
    from analyzer.prefix import analyse, report_lines
    from analyzer.prefix.tokens import PlainRenderer
    from analyzer.requests import parse_request

    def body(folder: str, notes: str) -> dict[str, Any]:
        return system_body(f"{OPENER}\n{WORDS}/srv/{folder}\n# Folder notes here\n\n{notes}")

    def tokens(b: dict[str, Any]) -> list[int]:
        request = parse_request(b, path="/v1/chat/completions")
        assert request is not None
        return list(PlainRenderer().render_request(request).tokens)

    a, b, c = body("alpha", "Keep tests green."), body("beta", "Keep tests green."), body("alpha", "Keep lint quiet.")
    ta, tb, tc = tokens(a), tokens(b), tokens(c)

    def common(x: list[int], y: list[int]) -> int:
        return next((i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), min(len(x), len(y)))

    server = {"version": "llama.cpp test", "slots": 1, "cache_ram_mib": 0, "slot_prompt_similarity": 0.1,
              "cache_reuse": 0}
    rows = [{"series": "proxy", "index": 0, "request_body": json.dumps(x), "client_path": "/v1/chat/completions",
             "status": 200, "outcome": "ok", "started_at": f"2026-12-07T03:00:0{i}Z", "total_s": 0.5,
             "usage": {"prompt_tokens": len(t), "prompt_tokens_details": {"cached_tokens": cached}},
             "server": server} for i, (x, t, cached) in enumerate(((a, ta, 0), (b, tb, common(ta, tb)),
                                                                    (c, tc, common(tb, tc))))]
    rep = analyse(rows, renderer=PlainRenderer(), lookup=app["lookup"])
    last = rep.requests[2]
    assert last.closest is not None and last.closest[0] == 1
    assert last.closest_attribution is not None and last.closest_attribution.literal is not None
    assert last.closest_attribution.literal.path == "src/prompt.ts"
    text = "\n".join(report_lines(rep))
    assert "closest: row 1 shares" in text and "(the text before it written by app src/prompt.ts:8 @" in text
    assert last.as_json()["closest"]["attribution"]["literal"]["path"] == "src/prompt.ts"
