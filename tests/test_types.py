"""Reducing annotation texts to candidate named types (analyzer.index.types)."""

from __future__ import annotations

import pytest

from analyzer.index.types import base_name, candidate_types, split_top_level, type_arguments


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Promise<PreparedLlmCall | undefined>", ["PreparedLlmCall"]),
        ("Map<string, AdapterRegistration>", ["Map"]),
        ("LlmAdapter | undefined", ["LlmAdapter"]),
        ("LlmAdapter | null", ["LlmAdapter"]),
        ("Readonly<Session>", ["Session"]),
        ("readonly Tool[]", ["Tool"]),
        ("Array<Tool>", ["Tool"]),
        ("Tool[] | undefined", ["Tool"]),
        ("typeof defaultRuntime", ["defaultRuntime"]),
        ("ns.Client", ["ns.Client", "Client"]),
        ("Promise<api.Response<T>>", ["api.Response", "Response"]),
        ("A & B", ["A", "B"]),
        ("(Foo | Bar)[]", ["Foo", "Bar"]),
        (": Foo", ["Foo"]),
        ("string", []),
        ("void", []),
        ("{ a: Foo }", []),
        ("(x: Foo) => Bar", []),
        ("'openai' | 'anthropic'", []),
        ("", []),
        (None, []),
        ("AsyncIterable<StreamEvent>", ["StreamEvent"]),
        ("x is Model", ["Model"]),
    ],
)
def test_candidate_types(text: str | None, expected: list[str]) -> None:
    assert candidate_types(text) == expected


def test_type_arguments_top_level_only() -> None:
    assert type_arguments("Map<string, A>") == ["string", "A"]
    assert type_arguments("Record<string, Map<K, (x: A) => B>>") == ["string", "Map<K, (x: A) => B>"]
    assert type_arguments("Foo") == []


def test_base_name_and_split() -> None:
    assert base_name("ns.Foo<T>") == "ns.Foo"
    assert base_name("{ a: 1 }") is None
    assert split_top_level("A<B | C> | D", "|") == ["A<B | C>", "D"]
    assert split_top_level("'a|b' | C", "|") == ["'a|b'", "C"]
