"""Extraction facts that interface recall relies on: what a closure passed as an argument returns, and the
type arguments of `new Map<K, V>()`."""

from __future__ import annotations

import textwrap

from analyzer.parse.extract import extract_facts


def _facts(src: str):  # type: ignore[no-untyped-def]
    return extract_facts(textwrap.dedent(src).encode(), "src/mod.ts")


def test_a_literal_returned_by_a_closure_argument_names_the_call_and_position() -> None:
    f = _facts("""
        export function show(ctx: Ctx) {
          ctx.ui.custom<string>(tui, (done) => {
            return { render(w: number) { return []; } };
          });
          run(() => ({ render: () => [] }));
          return { render: () => [] };
        }
        """)
    by_line = {o.line: o for o in f.objects}
    assert by_line[4].holder == "return" and by_line[4].returned_to == "ctx.ui.custom:1"
    assert by_line[6].returned_to == "run:0"
    assert by_line[7].holder == "return" and by_line[7].returned_to is None  # the function's own return


def test_new_with_type_arguments_types_the_field_and_the_variable() -> None:
    f = _facts("""
        class Store {
          private readonly slots = new Map<string, Slot>();
          private readonly names = new Set();
        }
        const index = new Map<string, Entry>();
        """)
    fields = {x.name: x for x in f.fields}
    assert (fields["slots"].type, fields["slots"].new_class) == ("Map<string, Slot>", "Map")
    assert fields["names"].type is None and fields["names"].new_class == "Set"
    assert {b.name: b.type for b in f.bindings}["index"] == "Map<string, Entry>"


def test_dictionary_value_types() -> None:
    from analyzer.resolve.typetext import dictionary_value

    assert dictionary_value("Record<string, Handler>") == "Handler"
    assert dictionary_value("Partial<Record<Kind, { run(): void }>>") == "{ run(): void }"
    assert dictionary_value("{ [k: string]: H }") == "H"
    assert dictionary_value("{ [K in keyof M]: { invoke(api: A): void } }") == "{ invoke(api: A): void }"
    # not dictionaries: named members, a plain name, an index signature next to other members
    assert dictionary_value("{ a: A }") is None and dictionary_value("Foo") is None
    assert dictionary_value("{ [key: string]: X; other: Y }") is None


def test_await_of_a_generic_call_keeps_the_callee_chain() -> None:
    # tree-sitter parses `await a.b<{ x: T }>(…)` as a call whose callee is `await a.b`
    f = _facts("""
        async function h(ctx: Ctx) {
          const r = await ctx.ui.custom<{ action: string } | undefined>(
            () => ({ render() { return []; } }), { overlay: true });
        }
        """)
    call = next(c for c in f.calls if c.callee[-1] == "custom")
    assert call.callee == ["ctx", "ui", "custom"] and call.text == "ctx.ui.custom"
    assert [o.returned_to for o in f.objects if o.holder == "return"] == ["ctx.ui.custom:0"]
