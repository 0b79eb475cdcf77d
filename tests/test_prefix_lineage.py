"""`analyze prefix` on hand-built logs: interleaved conversations grouped by lineage, a rejected request left out
of the cache state, a two-slot server, a TTL expiry, each API shape, and an engine that cannot render.

Expected figures come from the requests themselves (the estimated tokens of the earlier prompt a request
extends), never from the cache model's own output."""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any

from analyzer.prefix import analyse, report_lines
from analyzer.prefix.tokens import PlainRenderer, RenderError
from analyzer.requests import parse_request

MAIN_SYSTEM = "You are the harbour agent. Work in the repository and keep answers short.\n" * 8
SIDE_SYSTEM = ("Write a five-word title for the conversation below. Use plain words, no quotes, no trailing "
               "punctuation, and name the task rather than the tool. ") * 3
AGENTS_V1 = "AGENTS.md: run the linter before committing."
AGENTS_V2 = "AGENTS.md: run the tests before committing."
ONE_SLOT = {"version": "llama.cpp test", "slots": 1, "cache_ram_mib": 8192, "slot_prompt_similarity": 0.1,
            "cache_reuse": 0}
T0 = _dt.datetime(2026, 12, 7, 3, 0, 0, tzinfo=_dt.UTC)


def chat(system: str, *turns: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for i, text in enumerate(turns):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return {"model": "local", "messages": messages}


def tokens_of(body: dict[str, Any], path: str = "/v1/chat/completions") -> int:
    request = parse_request(body, path=path)
    assert request is not None
    return len(PlainRenderer().render_request(request).tokens)


def shared(a: dict[str, Any], b: dict[str, Any]) -> int:
    """Tokens two chat requests share from the start (estimated tokens)."""
    ra, rb = (PlainRenderer().render_request(parse_request(x, path="/v1/chat/completions")) for x in (a, b))
    n = 0
    while n < min(len(ra.tokens), len(rb.tokens)) and ra.tokens[n] == rb.tokens[n]:
        n += 1
    return n


def row(body: dict[str, Any], *, at: float = 0.0, cached: int | None = None, status: int = 200,
        server: dict[str, Any] | None = None, path: str = "/v1/chat/completions", error: str | None = None,
        usage: dict[str, Any] | None = None, endpoint: str = "http://127.0.0.1:8080/v1") -> dict[str, Any]:
    if usage is None and cached is not None:
        usage = {"prompt_tokens": tokens_of(body, path), "completion_tokens": 1,
                 "prompt_tokens_details": {"cached_tokens": cached}}
    return {"series": "proxy", "index": 0, "request_body": json.dumps(body), "client_path": path, "status": status,
            "outcome": "ok" if status == 200 else "http-error", "error": error,
            "started_at": (T0 + _dt.timedelta(seconds=at)).isoformat().replace("+00:00", "Z"), "total_s": 1.0,
            "usage": usage, "server": dict(ONE_SLOT if server is None else server), "config": {"endpoint": endpoint}}


def interleaved() -> list[dict[str, Any]]:
    """Two tasks of one agent, each a main call and a side call (a title), arriving interleaved."""
    m1 = chat(MAIN_SYSTEM, "Fix the berth report.")
    t1 = chat(SIDE_SYSTEM, "Fix the berth report.")
    m2 = chat(MAIN_SYSTEM, "Fix the berth report.", "Done: report fixed.", "Now the crane list.")
    t2 = chat(SIDE_SYSTEM, "Now the crane list.")
    m3 = chat(MAIN_SYSTEM, "Fix the berth report.", "Done: report fixed.", "Now the crane list.",
              "Done: list sorted.", f"{AGENTS_V2}\nAnd the tide table.")
    return [m1, t1, m2, t2, m3]


def test_interleaved_conversations_are_grouped_and_each_request_meets_its_own_lineage() -> None:
    m1, t1, m2, t2, m3 = interleaved()
    # what the one-slot server with its host prompt cache reports: each main call finds the previous main call
    rows = [row(m1, at=0, cached=0), row(t1, at=5, cached=shared(m1, t1)), row(m2, at=10, cached=tokens_of(m1)),
            row(t2, at=15, cached=shared(t1, t2)), row(m3, at=20, cached=tokens_of(m2))]
    rep = analyse(rows)
    assert [r.conversation for r in rep.requests] == [1, 2, 1, 2, 1]
    # the first side call is not compared with the main call whose template header it shares
    assert [r.baseline_row for r in rep.requests] == [None, None, 1, 2, 3]
    main2, title2, main3 = rep.requests[2], rep.requests[3], rep.requests[4]
    assert main2.structure is not None and (main2.structure.kind, main2.structure.path) == ("appended",
                                                                                        "messages[2]")
    assert title2.structure is not None and title2.structure.path == "messages[1]"
    # the server's slot held the title call; the prompt cache gave back the main call: predicted = reported
    assert main2.predicted == tokens_of(m1) and main2.match is not None and main2.match.entry == 1
    assert any(h.where == "prompt cache" and h.key == 1 for h in main2.match.held)
    assert main3.predicted == tokens_of(m2) and main3.cause is None and title2.cause is None
    assert rep.agreement() == {"requests": 5, "reported": 5, "within": 5, "causes": {}}
    text = "\n".join(report_lines(rep))
    assert "predicted within max(8 tokens, 2%) for 5" in text
    assert "conversation 1 (3 request(s), first row 1)" in text and "conversation 2 (2 request(s), first row 2)" in text
    assert "another client" not in text


def test_a_changed_agents_file_near_the_end_is_placed_in_its_message_comparing_like_with_like() -> None:
    base = chat(MAIN_SYSTEM, f"{AGENTS_V1}\nFix the berth report.")
    changed = chat(MAIN_SYSTEM, f"{AGENTS_V2}\nFix the berth report.")
    title = chat(SIDE_SYSTEM, "Fix the berth report.")
    rep = analyse([row(base, cached=0), row(title, at=1, cached=0), row(changed, at=2, cached=0)])
    last = rep.requests[2]
    assert last.baseline_row == 1 and last.conversation == 1
    s = last.structure
    assert s is not None and (s.part, s.path, s.role) == ("messages", "messages[1]", "user")
    assert s.offset == AGENTS_V1.index("linter") and s.new.startswith("tests")


def test_a_rejected_request_is_skipped_with_its_error_and_leaves_the_state_alone() -> None:
    m1, t1, m2, *_ = interleaved()
    rows = [row(m1, cached=0), row(t1, at=1, status=400, error="request (9,000 tokens) exceeds the available "
                                                                "context size (8,192 tokens)"),
            row(m2, at=2, cached=tokens_of(m1))]
    rep = analyse(rows)
    assert [r.row for r in rep.requests] == [1, 3]
    assert rep.skipped == ["row 2: HTTP 400: request (9,000 tokens) exceeds the available context size (8,192 "
                           "tokens) — not in the cache state"]
    second = rep.requests[1]
    assert second.predicted == tokens_of(m1) and second.cause is None
    assert not any(h.key == 2 for h in second.match.held) if second.match else False
    assert "skipped 1 row(s):" in "\n".join(report_lines(rep))


def test_a_two_slot_server_keeps_both_conversations_and_one_slot_explains_the_hit_by_the_entry_it_dropped() -> None:
    m1, t1, m2, t2, _ = interleaved()
    two = {**ONE_SLOT, "slots": 2, "cache_ram_mib": 0}
    reported = [0, 0, tokens_of(m1), shared(t1, t2)]
    rows = [row(b, at=i, cached=c, server=two) for i, (b, c) in enumerate(zip([m1, t1, m2, t2], reported, strict=True))]
    rep = analyse(rows)
    assert rep.requests[2].predicted == tokens_of(m1)
    assert rep.requests[2].match is not None and rep.requests[2].match.slot != rep.requests[1].match.slot
    assert "2 slot(s)" in (rep.settings or "")
    # the same log read as a one-slot server without a prompt cache: the hit is explained by row 1's state,
    # which the model had dropped for the title call — never by "another client"
    one = {**ONE_SLOT, "cache_ram_mib": 0}
    rows = [row(b, at=i, cached=c, server=one) for i, (b, c) in enumerate(zip([m1, t1, m2], reported[:3], strict=True))]
    third = analyse(rows).requests[2]
    assert third.predicted is not None and third.predicted < tokens_of(m1)
    assert third.cause is not None and third.cause.kind == "other-slot" and "row 1" in third.cause.text


def test_server_settings_missing_from_the_rows_are_said_to_be_assumed() -> None:
    m1, _t1, m2, *_ = interleaved()
    rep = analyse([row(m1, cached=0, server={"version": "llama.cpp test"}),
                   row(m2, at=1, cached=tokens_of(m1), server={"version": "llama.cpp test"})])
    assert rep.settings is not None and "assumed" in rep.settings and "slots" in rep.settings
    assert rep.requests[1].predicted == tokens_of(m1)


def anthropic_body(*turns: str, system: Any = None, marker_on_last: bool = True) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for i, text in enumerate(turns):
        block: dict[str, Any] = {"type": "text", "text": text}
        if marker_on_last and i == len(turns) - 1:
            block["cache_control"] = {"type": "ephemeral"}
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": [block]})
    return {"model": "claude-sonnet-4-5", "max_tokens": 64,
            "system": system if system is not None else [{"type": "text", "text": MAIN_SYSTEM * 8,
                                                          "cache_control": {"type": "ephemeral"}}],
            "messages": messages}


def anthropic_usage(read: int, written: int) -> dict[str, Any]:
    return {"input_tokens": 5, "cache_read_input_tokens": read, "cache_creation_input_tokens": written,
            "output_tokens": 3}


def test_an_anthropic_ttl_expiry_is_predicted_and_named() -> None:
    first = anthropic_body("Fix the berth report.")
    request = parse_request(first, path="/v1/messages")
    assert request is not None
    rendered = PlainRenderer().render_request(request)
    system_end = rendered.block_ends[0]
    assert system_end > 1024        # above the model's minimum
    url = "https://api.anthropic.com/v1"
    kw: dict[str, Any] = {"path": "/v1/messages", "endpoint": url, "server": {}}
    rows = [row(first, at=0, usage=anthropic_usage(0, len(rendered.tokens)), **kw),
            row(first, at=60, usage=anthropic_usage(len(rendered.tokens) - 1, 0), **kw),
            # 440 s after the last read: the 5-minute entry is gone, yet this server still reports a read
            row(first, at=500, usage=anthropic_usage(system_end, 0), **kw)]
    rep = analyse(rows)
    assert rep.rule == "anthropic" and "api.anthropic.com" in rep.rule_why
    first_r, second, third = rep.requests
    assert first_r.match is not None and first_r.match.written > 0 and first_r.predicted == 0
    assert second.predicted is not None and second.predicted >= system_end and second.match.entry == 1
    assert third.predicted == 0 and third.match is not None and third.match.lost[0].why == "ttl"
    assert third.cause is not None and third.cause.kind == "ttl"


def test_each_shape_is_compared_by_its_segments_markers_and_text_blocks_aside() -> None:
    # Anthropic: the top-level system string and one text block are the same prompt; moving the cache_control
    # marker to the newest turn is no divergence either: the second request appends
    a1 = anthropic_body("Fix the berth report.", system=MAIN_SYSTEM)
    a2 = anthropic_body("Fix the berth report.", "Done.", "Now the cranes.",
                        system=[{"type": "text", "text": MAIN_SYSTEM, "cache_control": {"type": "ephemeral"}}])
    a3 = anthropic_body("Fix the berth report.", "Done.", "Now the cranes.", system=MAIN_SYSTEM + "Extra rule.")
    rows = [row(b, at=i, path="/v1/messages", usage=anthropic_usage(0, 0)) for i, b in enumerate((a1, a2, a3))]
    rep = analyse(rows)
    assert [r.shape for r in rep.requests] == ["anthropic"] * 3
    s2, s3 = rep.requests[1].structure, rep.requests[2].structure
    assert s2 is not None and (s2.kind, s2.path) == ("appended", "messages[1]")
    assert s3 is not None and (s3.kind, s3.part, s3.offset) == ("changed", "system", len(MAIN_SYSTEM))
    assert s3.new.startswith("Extra")
    # Responses: instructions and input items
    r1 = {"model": "local", "instructions": MAIN_SYSTEM + "Work in /srv/harbour.",
          "input": [{"role": "user", "content": "Fix it."}]}
    r2 = {**r1, "instructions": MAIN_SYSTEM + "Work in /srv/airport."}
    rep = analyse([row(b, at=i, path="/v1/responses", usage={"input_tokens": 9, "output_tokens": 1,
                                                              "input_tokens_details": {"cached_tokens": 0}})
                   for i, b in enumerate((r1, r2))])
    assert [r.shape for r in rep.requests] == ["responses", "responses"]
    s = rep.requests[1].structure
    assert s is not None and s.part == "system" and s.offset == len(MAIN_SYSTEM + "Work in /srv/")
    assert rep.requests[1].baseline_row == 1 and rep.requests[1].conversation == 1
    assert rep.requests[1].reported == 0 and rep.requests[1].reported_field is not None


class _FailingEngine:
    """Stands in for a llama.cpp server that cannot render Anthropic tools (its own error, verbatim)."""

    exact = True
    describe = "the server's own chat template and tokenizer (test stand-in)"

    def render(self, body: dict[str, Any]) -> Any:
        if any("input_schema" in t for t in body.get("tools") or []):
            raise RenderError("http://127.0.0.1:1/apply-template answered HTTP 500: Failed to parse tools: Missing "
                              "tool type")
        return PlainRenderer().render(body)


def test_an_engine_that_cannot_render_is_quoted_and_the_report_falls_back_to_estimates(monkeypatch) -> None:
    import analyzer.prefix.tokens as tokens

    monkeypatch.setattr(tokens, "_to_chat", lambda body, request: body)   # the conversion left as sent
    body = anthropic_body("Fix the berth report.")
    body["tools"] = [{"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}]
    rep = analyse([row(body, path="/v1/messages", usage=anthropic_usage(0, 0))], renderer=_FailingEngine())
    assert not rep.exact and rep.renderer.startswith("assumed: a plain template")
    assert len(rep.render_errors) == 1 and "Failed to parse tools: Missing tool type" in rep.render_errors[0]
    assert rep.requests[0].prompt_tokens > 0
    assert "render: row 1 (anthropic): the engine could not render it" in "\n".join(report_lines(rep))


def test_an_earlier_request_sharing_more_than_the_reused_state_is_shown_with_its_difference() -> None:
    def system(cwd: str, agents: str) -> str:
        return MAIN_SYSTEM + f"Current working directory: /srv/{cwd}\n{agents}\n"

    a = chat(system("project-a", AGENTS_V1), "List the files.")
    b = chat(system("project-b", AGENTS_V1), "List the files.")
    c = chat(system("project-a", AGENTS_V2), "List the files.")
    one = {**ONE_SLOT, "cache_ram_mib": 0}
    rep = analyse([row(a, cached=0, server=one), row(b, at=1, server=one, cached=shared(a, b)),
                   row(c, at=2, server=one, cached=shared(b, c))])
    last = rep.requests[2]
    assert last.baseline_row == 2 and last.structure is not None and last.structure.new.startswith("a")
    assert last.closest is not None and last.closest[0] == 1 and last.closest[1] == shared(a, c)
    diff = last.closest[2]
    assert (diff.part, diff.path) == ("system", "messages[0]") and diff.new.startswith("tests")
    assert "closest: row 1 shares" in "\n".join(report_lines(rep))


def test_the_http_status_decides_what_entered_the_cache_not_the_clients_verdict() -> None:
    # a complete 200 a proxy could not read (protocol-error, unmeasured) was processed by the server: it is in
    # the state; a 400 is not, whatever else the row says
    m1, t1, m2, *_ = interleaved()
    misread = row(m1, cached=None)
    misread.update(outcome="protocol-error", measured=False, error="the stream ended without data: [DONE]")
    rejected = row(t1, at=1, status=400, error="HTTP 400: bad tool")
    rejected["measured"] = True
    rep = analyse([misread, rejected, row(m2, at=2, cached=tokens_of(m1))])
    assert [r.row for r in rep.requests] == [1, 3]
    assert rep.skipped == ["row 2: HTTP 400: bad tool — not in the cache state"]
    assert rep.requests[1].predicted == tokens_of(m1) and rep.requests[1].match.entry == 1


def test_rows_of_another_server_start_from_an_empty_cache() -> None:
    m1, _t1, m2, *_ = interleaved()
    first = row(m1, cached=0)
    again = row(m2, at=5, cached=0, endpoint="http://127.0.0.1:9090/v1")   # another server: a restart
    rep = analyse([first, again])
    second = rep.requests[1]
    assert second.predicted == 0 and second.cause is None
    assert second.match is not None and second.match.lost and second.match.lost[0].why == "restart"
    same = analyse([first, row(m2, at=5, cached=0)]).requests[1]
    assert same.predicted == tokens_of(m1) and same.cause is not None and same.cause.kind == "state-gap"


class _EngineStandIn:
    """A server renderer (exact) that runs another model than the one that served the log."""

    exact = True
    describe = "the server's own chat template and tokenizer (stand-in)"

    def render(self, body: dict[str, Any]) -> Any:
        return PlainRenderer().render(body)

    def model(self) -> str:
        return "tiny.gguf"


def test_tokens_from_another_model_than_the_logs_are_said_to_stand_in() -> None:
    m1, *_ = interleaved()
    same = row(m1, cached=0, server={**ONE_SLOT, "settings": {"model": "tiny.gguf"}})
    other = row(m1, cached=0, server={**ONE_SLOT, "settings": {"model": "qwen3-8b.gguf"}})
    assert analyse([same], renderer=_EngineStandIn()).exact
    rep = analyse([other], renderer=_EngineStandIn())
    assert not rep.exact and "qwen3-8b.gguf" in rep.renderer and rep.renderer.startswith("assumed: ")
