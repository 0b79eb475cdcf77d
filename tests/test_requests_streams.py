"""Stream and JSON answers of every shape, hand-built: where each stream ends, which delta is the first token,
where the usage (with its cache fields) comes from, and how an error or a cut stream is judged."""

from __future__ import annotations

from typing import Any

from request_fixtures import ANTHROPIC_USAGE, anthropic_stream, chat_stream, responses_stream, sse

from analyzer.requests import read_usage
from analyzer.requests.answers import answer_from_json
from analyzer.requests.streams import StreamReader


class LineClock:
    """A clock that reads the number of lines fed so far: TTFT says *which* line produced the first token."""

    def __init__(self) -> None:
        self.lines = 0

    def __call__(self) -> float:
        return float(self.lines)


def run(lines: list[str], shape: Any = None) -> tuple[Any, StreamReader]:
    clock = LineClock()
    reader = StreamReader(0.0, shape, clock=clock)
    for line in lines:
        clock.lines += 1
        if not reader.feed(line):
            break
    return reader.finish(), reader


def first_line_with(lines: list[str], needle: str) -> int:
    return next(i + 1 for i, line in enumerate(lines) if needle in line)


def test_a_complete_anthropic_stream_is_ok_with_message_start_usage_updated_by_message_delta() -> None:
    lines = anthropic_stream()
    answer, reader = run(lines, "anthropic")
    assert answer.outcome == "ok" and answer.error is None and reader.done
    assert answer.usage == {**ANTHROPIC_USAGE, "output_tokens": 7}
    u = read_usage(answer.usage)
    assert (u.prompt, u.cached, u.cache_write, u.output) == (12 + 2048 + 64, 2048, 64, 7)
    assert answer.finish_reason == "end_turn" and answer.output_chars == len("Hello there")
    assert answer.ttft_s == first_line_with(lines, "text_delta")
    assert answer.server == {"id": "msg_1", "model": "claude-x"}


def test_a_complete_responses_stream_takes_usage_from_response_completed_and_ttft_from_a_tool_argument() -> None:
    lines = responses_stream()
    answer, reader = run(lines, "responses")
    assert answer.outcome == "ok" and reader.done
    u = read_usage(answer.usage)
    assert (u.prompt, u.cached, u.output) == (2100, 1920, 5)
    assert answer.ttft_s == first_line_with(lines, "function_call_arguments.delta\"")
    assert answer.finish_reason == "completed" and answer.output_chars == len("{\"p\":ok")


def test_a_chat_stream_ends_at_done_with_usage_and_timings_of_its_last_chunk() -> None:
    lines = chat_stream()
    answer, _ = run(lines, "chat")
    assert answer.outcome == "ok"
    assert answer.usage is not None and answer.usage["prompt_tokens"] == 9 and answer.timings == {"cache_n": 4,
                                                                                                 "prompt_n": 5}
    assert answer.ttft_s == first_line_with(lines, "reasoning_content")  # reasoning counts as the first token
    assert answer.finish_reason == "stop"


def test_the_shape_is_taken_from_the_first_event_when_not_given() -> None:
    for lines, shape in ((anthropic_stream(), "anthropic"), (responses_stream(), "responses"),
                         (chat_stream(), "chat")):
        answer, reader = run(lines)
        assert (answer.outcome, reader.shape) == ("ok", shape)


def test_a_stream_cut_before_its_end_marker_is_a_protocol_error_naming_the_marker() -> None:
    for lines, marker, usage_kept in ((anthropic_stream()[:-3], "message_stop", True),
                                      (responses_stream()[:-3], "response.completed", False),
                                      (chat_stream()[:-2], "[DONE]", True)):
        answer, _ = run(lines)
        assert answer.outcome == "protocol-error" and marker in (answer.error or "")
        assert (answer.usage is not None) == usage_kept  # what arrived is kept (message_start's usage)


def test_errors_in_streams_of_each_shape() -> None:
    anthropic = anthropic_stream()[:9] + sse(("error", {"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}}))
    answer, _ = run(anthropic)
    assert answer.outcome == "http-error" and "Overloaded" in (answer.error or "")
    # llama.cpp's Anthropic error event carries the bare error object
    answer, _ = run(sse(("error", {"code": 500, "message": "Failed to parse tools", "type": "server_error"})),
                    "anthropic")
    assert answer.outcome == "http-error" and "Failed to parse tools" in (answer.error or "")
    failed = responses_stream()[:3] + sse(("response.failed", {"type": "response.failed", "response": {
        "status": "failed", "error": {"code": "server_error", "message": "model crashed"}}}))
    answer, _ = run(failed)
    assert answer.outcome == "http-error" and "model crashed" in (answer.error or "")
    answer, _ = run(sse((None, {"error": {"message": "context full"}})), "chat")
    assert answer.outcome == "http-error" and "context full" in (answer.error or "")
    answer, _ = run(["data: {not json", "", "data: [DONE]", ""], "chat")
    assert answer.outcome == "protocol-error" and "unparseable" in (answer.error or "")


def test_a_data_field_split_over_lines_is_one_event() -> None:
    answer, _ = run(["event: message_stop", "data: {\"type\":", "data: \"message_stop\"}", ""], "anthropic")
    assert answer.outcome == "ok"


def test_non_streamed_answers_of_each_shape() -> None:
    a = answer_from_json({"id": "msg_1", "type": "message", "model": "claude-x", "stop_reason": "tool_use",
                          "content": [{"type": "text", "text": "abc"},
                                      {"type": "tool_use", "id": "t", "name": "read", "input": {"p": "x"}}],
                          "usage": ANTHROPIC_USAGE}, 1.0)
    assert (a.shape, a.outcome, a.finish_reason, a.output_chars) == ("anthropic", "ok", "tool_use",
                                                                      3 + len('{"p":"x"}'))
    assert read_usage(a.usage).cached == 2048
    r = answer_from_json({"id": "resp_1", "object": "response", "status": "incomplete",
                          "incomplete_details": {"reason": "max_output_tokens"},
                          "output": [{"type": "message", "content": [{"type": "output_text", "text": "ab"}]}],
                          "usage": {"input_tokens": 5, "input_tokens_details": {"cached_tokens": 0}}}, 1.0)
    assert (r.shape, r.finish_reason, r.output_chars, read_usage(r.usage).cached) == (
        "responses", "max_output_tokens", 2, 0)
    c = answer_from_json({"choices": [{"message": {"content": "Hello"}, "finish_reason": "length"}],
                          "usage": {"prompt_tokens": 3}}, 1.0)
    assert (c.shape, c.output_chars, c.finish_reason) == ("chat", 5, "length")
    e = answer_from_json({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}, 1.0)
    assert e.outcome == "http-error" and "bad" in (e.error or "")


def test_odd_chunks_are_skipped_not_fatal() -> None:
    lines = sse((None, {"choices": [{"delta": ["not", "a", "map"]}, 5, {"delta": {"tool_calls": 3}}]}),
                (None, {"choices": "none", "usage": {"prompt_tokens": 1}}), (None, [1, 2]), (None, "[DONE]"))
    answer, _ = run(lines, "chat")
    assert answer.outcome == "ok" and answer.usage == {"prompt_tokens": 1}
    anthropic = sse(("content_block_delta", {"type": "content_block_delta", "delta": "x"}),
                    ("message_delta", {"type": "message_delta", "delta": None, "usage": {"output_tokens": 2}}),
                    ("message_stop", {"type": "message_stop"}))
    answer, _ = run(anthropic, "anthropic")
    assert answer.outcome == "ok" and answer.usage == {"output_tokens": 2}
    odd = answer_from_json({"choices": "x", "usage": None}, 1.0)
    assert odd.outcome == "ok" and odd.output_chars == 0
