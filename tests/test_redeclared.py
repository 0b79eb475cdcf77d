"""Redeclarations TypeScript reads as one member: interface overload signatures and accessor pairs."""

from __future__ import annotations

import textwrap

from analyzer.parse.extract import extract_facts


def _defs(src: str) -> dict:
    f = extract_facts(textwrap.dedent(src).encode(), "src/mod.ts")
    return {d.qualname: d for d in f.definitions}


def test_interface_method_overload_signatures_are_one_member() -> None:
    d = _defs("""
        export interface Api {
          on(event: "start", handler: (e: Start) => void): void;
          on(event: "stop", handler: (e: Stop) => void): void;
          off(event: string): void;
        }
        export type Bus = {
          emit(name: "a"): void;
          emit(name: "b", x: number): void;
        };
        """)
    assert {q for q in d if q.startswith(("Api.", "Bus."))} == {"Api.on", "Api.off", "Bus.emit"}
    assert d["Api.on"].params[0].type == '"start"' and not d["Api.on"].has_body
    assert "signature-only" not in d["Api.on"].modifiers
    # the folded overloads keep their parameters (contextual typing picks one by the string literal)
    assert [[prm.type for prm in params] for params in d["Api.on"].signatures()] == [
        ['"start"', "(e: Start) => void"], ['"stop"', "(e: Stop) => void"]]
    assert len(d["Bus.emit"].signatures()) == 2 and d["Api.off"].signatures() == [d["Api.off"].params]


def test_accessor_pair_is_one_property_with_two_halves() -> None:
    d = _defs("""
        class View {
          get focused(): boolean { return this.f; }
          set focused(v: boolean) { this.f = v; this.redraw(); }
          set mode(v: string) { this.m = v; }
          get mode(): string { return this.m; }
          redraw(): void {}
        }
        """)
    assert d["View.focused"].kind == "getter" and d["View.focused#set"].kind == "setter"
    assert d["View.mode"].kind == "setter" and d["View.mode#get"].kind == "getter"
    assert not any(q.endswith("#2") for q in d)


def test_separate_definitions_of_one_name_stay_apart() -> None:
    d = _defs("""
        export function make() {
          use({ run() { return 1; } });
          use({ run() { return 2; } });
        }
        class C {
          static check(x: string): void {}
          check(): void {}
        }
        """)
    assert d["make.run"].line != d["make.run#2"].line
    assert {"C.check", "C.check#2"} <= set(d)
