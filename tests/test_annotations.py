"""Annotations: the TOML store (atomic, comment-preserving), re-anchoring by symbol, stale and orphaned notes."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from recheck_fixtures import Upstreams, graph_at, make_upstreams, reader

from analyzer import atomic
from analyzer.annotations import Note, anchor_note, load_notes, note_body_diff, remove_note, upsert_note
from analyzer.errors import AnalyzerError


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Upstreams:
    return make_upstreams(tmp_path_factory.mktemp("upstreams"))


def _note(g, repo: str, symbol: str, commit: str, text: str = "what it does") -> Note:
    node = next(n for n, a in g.nodes(data=True) if a["repo"] == repo and a["qualname"] == symbol)
    a = g.nodes[node]
    return Note(repo, symbol, text, commit, a["body_hash"], a["path"])


# --- store -------------------------------------------------------------------------------------------


def test_upsert_adds_then_updates_and_keeps_comments(tmp_path: Path) -> None:
    path = tmp_path / "reports" / "annotations.toml"
    n1 = Note("lib", "send", "first text", "a" * 40, "h1", "src/send.ts")
    assert upsert_note(path, n1) == "added"
    text = path.read_text()
    path.write_text("# my own comment stays\n" + text)
    assert upsert_note(path, Note("lib", "encode", "two\nlines", "a" * 40, "h2")) == "added"
    assert upsert_note(path, Note("lib", "send", "second text", "b" * 40, "h3", "src/send.ts")) == "updated"
    notes = load_notes(path)
    assert [(n.symbol, n.text, n.commit, n.body_hash) for n in notes] == [
        ("send", "second text", "b" * 40, "h3"), ("encode", "two\nlines", "a" * 40, "h2")]
    assert notes[1].path is None
    assert path.read_text().startswith("# my own comment stays\n")


def test_same_symbol_in_another_file_is_another_note(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    upsert_note(path, Note("lib", "stream", "one", "a" * 40, "h", "src/a.ts"))
    assert upsert_note(path, Note("lib", "stream", "two", "a" * 40, "h", "src/b.ts")) == "added"
    assert remove_note(path, "lib", "stream", "src/a.ts")
    assert [n.path for n in load_notes(path)] == ["src/b.ts"]
    assert not remove_note(path, "lib", "nothing")


def test_missing_file_has_no_notes_and_bad_files_fail_in_one_line(tmp_path: Path) -> None:
    assert load_notes(tmp_path / "absent.toml") == []
    bad = tmp_path / "bad.toml"
    bad.write_text("[[note]]\nrepo = \"lib\"\nsymbol = \"send\"\n")
    with pytest.raises(AnalyzerError, match=r"note 1: missing or empty text, commit, body_hash"):
        load_notes(bad)
    bad.write_text("[[note]\n")
    with pytest.raises(AnalyzerError, match="malformed TOML"):
        load_notes(bad)


def test_interrupted_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "annotations.toml"
    upsert_note(path, Note("lib", "send", "kept", "a" * 40, "h"))
    before = path.read_bytes()

    def crash(src: str, dst: str) -> None:
        raise KeyboardInterrupt  # the user hits ^C between writing the temp file and renaming it

    monkeypatch.setattr(atomic.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        upsert_note(path, Note("lib", "send", "lost", "b" * 40, "h2"))
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["annotations.toml"]  # no temp file left behind


# --- anchoring -----------------------------------------------------------------------------------------


def test_unchanged_symbol_is_ok(up: Upstreams) -> None:
    g1 = graph_at(up, {"app": up.a1, "lib": up.l1})
    g2 = graph_at(up, {"app": up.a1, "lib": up.l2})
    a = anchor_note(g2, _note(g1, "app", "renderPrompt", up.a1))
    assert (a.status, a.moved, a.path, a.line) == ("ok", False, "src/prompt.ts", 1)


def test_line_shift_keeps_the_note_current(up: Upstreams) -> None:
    g1 = graph_at(up, {"app": up.a1, "lib": up.l1})
    g2 = graph_at(up, {"app": up.a1, "lib": up.l2})
    note = _note(g1, "lib", "encode", up.l1)
    assert g1.nodes["lib:src/encode.ts:encode"]["line"] == 3
    a = anchor_note(g2, note)
    assert (a.status, a.path, a.line) == ("ok", "src/encode.ts", 4)


def test_moved_and_changed_symbol_is_stale_with_a_body_diff(up: Upstreams) -> None:
    g1 = graph_at(up, {"app": up.a1, "lib": up.l1})
    g2 = graph_at(up, {"app": up.a1, "lib": up.l2})
    note = _note(g1, "lib", "parseUsage", up.l1)
    a = anchor_note(g2, note)
    assert (a.status, a.moved, a.path, a.line) == ("stale", True, "src/api/usage.ts", 2)
    note_body_diff(reader(up), a, up.l2)
    assert a.diff_error is None
    assert a.diff[0].startswith(f"--- lib@{up.l1[:10]}:src/old/usage.ts:1")
    assert a.diff[1].startswith(f"+++ lib@{up.l2[:10]}:src/api/usage.ts:2")
    assert "-  return x.length;" in a.diff
    assert "+  return words.length;" in a.diff


def test_gone_symbol_is_orphaned(up: Upstreams) -> None:
    g1 = graph_at(up, {"app": up.a1, "lib": up.l1})
    g3 = graph_at(up, {"app": up.a1, "lib": up.l3})
    a = anchor_note(g3, _note(g1, "lib", "parseUsage", up.l1))
    assert a.status == "orphaned" and a.node is None


def test_note_on_an_unanalysed_repo_is_not_pinned(up: Upstreams) -> None:
    g1 = graph_at(up, {"app": up.a1})
    assert anchor_note(g1, Note("lib", "send", "x", up.l1, "h")).status == "not-pinned"


def test_same_name_in_several_other_files_is_not_guessed() -> None:
    import networkx as nx

    from analyzer.annotations import find_symbol

    g = nx.MultiDiGraph()
    for path, body in (("src/a.ts", "h1"), ("src/b.ts", "h2")):
        g.add_node(f"lib:{path}:stream", repo="lib", path=path, qualname="stream", kind="function", body_hash=body)
    assert find_symbol(g, "lib", "stream", "src/gone.ts", "other") is None
    assert find_symbol(g, "lib", "stream", "src/b.ts", "other") == "lib:src/b.ts:stream"
    assert find_symbol(g, "lib", "stream", "src/gone.ts", "h2") == "lib:src/b.ts:stream"  # unchanged body wins
    assert find_symbol(g, "lib", "stream", "old/b.ts", "other") == "lib:src/b.ts:stream"  # moved file
    a = anchor_note(g, Note("lib", "stream", "x", "c" * 40, "other", "src/gone.ts"))
    assert a.status == "orphaned" and a.candidates == ["lib:src/a.ts:stream", "lib:src/b.ts:stream"]


def test_a_lone_namesake_in_another_file_needs_a_similar_signature() -> None:
    import networkx as nx

    from analyzer.annotations import find_symbol

    g = nx.MultiDiGraph()
    g.add_node("lib:src/api/x.ts:stream", repo="lib", path="src/api/x.ts", qualname="stream", kind="function",
               body_hash="new", signature="const stream = (model: Model<'x'>, context: Context) =>")
    old_sig = "function stream<T extends Api>(model: Model<T>, ctx: Context, options?: Options): Events"
    assert find_symbol(g, "lib", "stream", "src/stream.ts", "old", old_sig) is None  # an unrelated namesake
    assert find_symbol(g, "lib", "stream", "src/stream.ts", "old") == "lib:src/api/x.ts:stream"  # notes: by name
    close = "const stream = (model: Model<'x'>, context: Context, extra: number) =>"
    assert find_symbol(g, "lib", "stream", "src/stream.ts", "old", close) == "lib:src/api/x.ts:stream"


def test_shipped_notes_file_is_valid() -> None:
    from conftest import DSH_RC2, PI_V0_82_1, ROOT

    notes = load_notes(ROOT / "reports" / "annotations.toml")
    assert {n.symbol for n in notes} >= {"ReactLoopAgent.step", "renderPrompt", "LlmRuntime.prepareCall",
                                         "LlmRuntime.stream", "PiAiAdapter.streamWithSnapshot",
                                         "ModelsImpl.streamSimple", "lazyApi", "stream", "parseChunkUsage"}
    assert {(n.repo, n.commit) for n in notes} == {("dsh", DSH_RC2), ("pi", PI_V0_82_1)}
    assert all(n.path and re.fullmatch(r"[0-9a-f]{16}", n.body_hash) and len(n.text) > 40 for n in notes)
    assert len({(n.repo, n.symbol, n.path) for n in notes}) == len(notes)
