"""Stored records by type in `analyze hazards`: a volatile value written into field F of a value of a declared
record type T reaches the reads of F on values of type T elsewhere (records.toml), with no value path between."""

from __future__ import annotations

from typing import Any

import pytest
from hazardfixtures import FIXTURES, build_records_world

from analyzer.hazards.rules import load_hazard_rules
from analyzer.hazards.run import compute_hazards, git_dirs_for, index_facts_for

STORE, PROMPT = "packages/store/src/index.ts", "packages/prompt/src/index.ts"
SESSIONS, SESSION_PROMPT = "packages/store/src/sessions.ts", "packages/prompt/src/session-prompt.ts"


def line_of(path: str, text: str) -> int:
    lines = (FIXTURES / "mini-records" / path).read_text().splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, (path, text, hits)
    return hits[0]


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    world = build_records_world(tmp_path_factory.mktemp("records"))
    analysis = world.analysis()
    return compute_hazards(analysis, git_dirs_for(world.ctx, analysis), index_facts_for(world.ctx, analysis),
                           include_near_misses=True)


def _whys(f: dict[str, Any]) -> list[tuple[str, int, str]]:
    return [(s["path"], s["line"], s["why"]) for s in f["steps"]]


def test_each_typed_write_reaches_the_reads_of_its_type_and_field(result: dict[str, Any]) -> None:
    got = {(f["source"]["text"], f["source"]["line"], f["sink"]["path"], f["sink"]["rule"]) for f in result["findings"]}
    assert got == {
        ("process.cwd()", line_of(STORE, "process.cwd()"), PROMPT, "rendered-system-prompt"),
        ("Date.now()", line_of(STORE, "Date.now()"), PROMPT, "rendered-system-prompt"),
        ("hostname()", line_of(STORE, "hostname()"), PROMPT, "rendered-system-prompt"),
        ("Math.random()", line_of(STORE, "Math.random()"), PROMPT, "rendered-system-prompt"),
        ("session.header.cwd", line_of(SESSION_PROMPT, "session.header.cwd"), SESSION_PROMPT,
         "rendered-system-prompt"),
    }


def test_an_annotated_object_literal_is_written_into_its_record_type(result: dict[str, Any]) -> None:
    f = next(f for f in result["findings"] if f["source"]["text"] == "process.cwd()")
    whys = _whys(f)
    assert (STORE, line_of(STORE, "process.cwd()"), "written into ConversationHeader.cwd") in whys
    assert (PROMPT, line_of(PROMPT, "conversation.meta.cwd"), "read from a stored ConversationHeader.cwd") in whys
    assert f["granularity"] == "session" and f["effect"] == "cross-session"


def test_a_member_write_through_a_field_keeping_generic(result: dict[str, Any]) -> None:
    """`draft.label = …` with `draft: Partial<ConversationHeader>` writes ConversationHeader.label."""
    f = next(f for f in result["findings"] if f["source"]["text"] == "hostname()")
    assert (STORE, line_of(STORE, "draft.label ="), "written into ConversationHeader.label") in _whys(f)
    assert (PROMPT, line_of(PROMPT, "conversation.meta.label"), "read from a stored ConversationHeader.label") \
        in _whys(f)


def test_a_same_named_field_of_another_type_is_another_record(result: dict[str, Any]) -> None:
    """`ToolContext.cwd` and `ConversationHeader.cwd`: each read sees only its own type's writes, and a value
    stored once per record is at least per session (fixed-in-record)."""
    f = next(f for f in result["findings"] if f["source"]["text"] == "Math.random()")
    whys = [w for _, _, w in _whys(f)]
    assert "read from a stored ToolContext.cwd" in whys and not any("ConversationHeader" in w for w in whys)
    assert (f["granularity"], f["granularity_rule"]) == ("session", "fixed-in-record")
    cwd = next(f for f in result["findings"] if f["source"]["text"] == "process.cwd()")
    assert not any("ToolContext" in w for _, _, w in _whys(cwd))


def test_a_typed_object_that_is_not_kept_is_no_record(result: dict[str, Any]) -> None:
    """`scratchHeader` returns a ConversationHeader it does not store: its clock value is no record write
    (the header's `startedAt` readers see only the kept header's clock)."""
    line = line_of(STORE, "performance.now()")
    assert not [f for f in result["findings"] if f["source"]["line"] == line]
    assert not [m for m in result["near_misses"] if m["source"]["line"] == line
                and any("written into" in s["why"] for s in m["steps"])]


def test_record_rules_are_data() -> None:
    rules = load_hazard_rules()
    assert [r.name for r in rules.records] == ["typed-record-field"]
    assert "Pick" in rules.records[0].field_subsets and rules.records[0].fixed == "fixed-in-record"
    assert rules.records[0].kept_by == ("stored",)
    assert rules.scoped("record") is not None


def test_a_record_field_read_names_every_entry_point_that_writes_it(result: dict[str, Any]) -> None:
    """`session.header.cwd` is read at assembly; the header is built in `prepare` from a parameter that the
    command-line entry fills with `process.cwd()` and the API handler with the request's `cwd` or its
    fallback, and `relocate` assigns the field of a header it is handed: the finding names those writers and
    the calls down to the write."""
    (f,) = [f for f in result["findings"] if f["source"]["text"] == "session.header.cwd"]
    assert f["writers_of"] == "SessionHeader.cwd"
    writers = {(w["path"], w["line"], w["text"]) for w in f["writers"]}
    assert writers == {
        (SESSIONS, line_of(SESSIONS, "meta: { cwd: process.cwd() }"), "process.cwd()"),
        (SESSIONS, line_of(SESSIONS, "request.payload.cwd ??"), "request.payload.cwd"),
        (SESSIONS, line_of(SESSIONS, "request.payload.cwd ??"), "fallback"),
        (SESSIONS, line_of(SESSIONS, "header.cwd = "), "process.env.PROJECT_DIR"),
        (SESSIONS, line_of(SESSIONS, "header.cwd = "), "'/srv/project'"),
    }
    (headless,) = [w for w in f["writers"] if w["text"] == "process.cwd()"]
    assert headless["via"] == [f"{SESSIONS}:{line_of(SESSIONS, 'meta: { cwd: process.cwd() }')}",
                               f"{SESSIONS}:{line_of(SESSIONS, 'return this.sessions.prepare(')}"]


def test_a_finding_that_reads_no_record_names_no_writers(result: dict[str, Any]) -> None:
    assert [f["source"]["text"] for f in result["findings"] if f.get("writers")] == ["session.header.cwd"]
