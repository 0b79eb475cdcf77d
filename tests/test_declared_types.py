"""Reading a called value's declared type through type texts: conditionals, type parameters, mapped types,
folded object annotations (the pieces `FunctionTypes.member_texts` is built from) and the resolver on the
graph fixture (`dynamic/src/declared.ts`: which members it finds, which it must not)."""

from __future__ import annotations

import pytest

from analyzer.resolve.typetext import (
    conditional_parts,
    folded_object_members,
    literal_keys,
    mapped_type,
    strip_comments,
    template_key,
    template_prefixes,
    type_parameters,
)


def test_conditional_parts_split_at_the_top_level_only() -> None:
    assert conditional_parts("N extends keyof M & string ? { t: T<N> } : object") == (
        "N", "keyof M & string", "{ t: T<N> }", "object")
    assert conditional_parts("A extends B ? C extends D ? x : y : z") == ("A", "B", "C extends D ? x : y", "z")
    assert conditional_parts("{ a?: (b?: B) => C }") is None  # optional members are no conditional
    assert conditional_parts("(a?: A) => B") is None


def test_type_parameters_with_constraints_and_defaults() -> None:
    sig = "export type P< K extends keyof S & string, M = never, F extends (a: X) => Y = Z> = A<K>"
    assert type_parameters(sig) == [("K", None), ("M", "never"), ("F", "Z")]
    assert type_parameters("type T<N extends keyof M & string> = U<N>") == [("N", None)]
    assert type_parameters("type T = U") == []


def test_mapped_types_and_remapped_keys() -> None:
    assert mapped_type("{ [N in keyof HS & string as `use${Capitalize<N>}`]: Hook<HS[N]> }") == (
        "N", "keyof HS & string", "`use${Capitalize<N>}`", "Hook<HS[N]>")
    assert mapped_type("{ [K in Keys]?: V }") == ("K", "Keys", None, "V")
    assert mapped_type("{ a: A; [K in Keys]: V }") is None
    assert template_key("`use${Capitalize<N>}`", "N", "useSession") == "session"
    assert template_key("`use${Capitalize<N>}`", "N", "user") is None  # not Capitalize's output
    assert template_key("`on${K}Done`", "K", "onSaveDone") == "Save"
    assert template_key("`on${K}Done`", "K", "onDone") is None
    assert template_prefixes("{ [N in keyof H as `use${Capitalize<N>}`]: X }") == {"use"}


def test_folded_annotations_and_literal_keys() -> None:
    assert folded_object_members("{ node: Node active: boolean t: Props['t'] }") == {
        "node": "Node", "active": "boolean", "t": "Props['t']"}
    assert folded_object_members("{ a: X extends Y ? C : D; b?: (x: T) => U, readonly c: { d: E } }") == {
        "a": "X extends Y ? C : D", "b": "(x: T) => U", "c": "{ d: E }"}
    assert folded_object_members(strip_comments("{ /** say it, (please) */ say: S }")) == {"say": "S"}
    assert literal_keys("'say' | \"popup\"") == {"say", "popup"}
    assert literal_keys("'say' | Keys") is None


@pytest.fixture(scope="module")
def ftypes(tmp_path_factory: pytest.TempPathFactory):
    from graphfixtures import build_world

    from analyzer.resolve.functypes import FunctionTypes
    from analyzer.resolve.program import Program
    from analyzer.resolve.receivers import Types
    from analyzer.resolve.symbols import SymbolResolver

    world = build_world(tmp_path_factory.mktemp("declared"))
    program: Program = world.analysis(need_program=True).program
    types = Types(program, SymbolResolver(program))
    mod = next(m for m in program.files if m.path.endswith("dynamic/src/declared.ts"))
    return FunctionTypes(program, types), mod


def _members(ftypes, text: str, key: str) -> set[str]:
    ft, mod = ftypes
    return {nt.ref.qualname for nt in ft.member_types(mod, text, key, f"{mod.path}: test")}


def test_members_are_read_through_aliases_wrappers_and_mapped_types(ftypes) -> None:
    assert _members(ftypes, "PickerProps", "say") == {"SpeakIn"}
    assert _members(ftypes, "PickerProps", "abort") == {"Abort"}
    assert _members(ftypes, "Readonly<Pick<PickerProps, 'say' | 'popup'>>", "say") == {"SpeakIn"}
    assert _members(ftypes, "Pick<PickerProps, 'popup'>", "say") == set()
    assert _members(ftypes, "Omit<PickerProps, 'say'>", "say") == set()
    assert _members(ftypes, "Face<ViewInjected>", "useDuration") == {"Hook"}
    assert _members(ftypes, "Face<ViewInjected>", "useSession") == set()  # ViewInjected's hooks has no session
    assert _members(ftypes, "Face<ViewInjected>", "hooks") == set()  # Omit<I, 'hooks'>
    assert _members(ftypes, "Slot<Speak>", "fill") == {"Speak"}  # `T | undefined`, T bound to the use's Speak
    assert _members(ftypes, "Slot<Speak>", "pick") == {"Speak"}  # a conditional member type: either branch
    assert _members(ftypes, "Slot<Abort>", "fill") == {"Abort"}
    ft, mod = ftypes
    aliases = ft.function_aliases(ft.member_types(mod, "PickerProps", "say", "test"))
    assert [a.ref.qualname for a in aliases] == ["Speak"]
    producers = {(r.qualname, returned) for r, _, returned in ft.producers(aliases[0].ref)}
    # the closure bind returns (not the body-less overloads), and seat's declared local `said` (not seat)
    assert producers == {("Phrasebook.bind", True), ("seat.said", False)}


def test_member_evidence_names_each_alias_line(ftypes) -> None:
    ft, mod = ftypes
    [found] = ft.member_types(mod, "PickerProps", "say", "declared.ts:65: { say } of Picker")
    assert found.evidence[0] == "declared.ts:65: { say } of Picker"
    assert any(":61: type PickerProps = PickerInjected & WithSpeech<'picker'>" in e for e in found.evidence)
    assert any(":14: type WithSpeech<N> = N extends keyof Phrases & string ? { say: SpeakIn<N> }" in e
               for e in found.evidence)


def test_released_typing_parts_hold_no_cycle(ftypes) -> None:
    """`Types.release()` takes back the two upward references, so with the cyclic GC off (as during a
    build) dropping `Types` frees every part and its memo tables by reference counting alone."""
    import gc
    import weakref

    from analyzer.resolve.receivers import Types
    from analyzer.resolve.symbols import SymbolResolver

    ft, mod = ftypes
    types = Types(ft.p, SymbolResolver(ft.p))
    assert types.decls.resolve_text(mod, "PickerProps", "test")  # the parts answer (and fill memo tables)
    try:
        parts = [weakref.ref(p) for p in (types.decls, types.hierarchy, types.exprs, types.literals,
                                          types.contextual)]
    except TypeError:
        pytest.skip("compiled parts take no weak references")
    enabled = gc.isenabled()
    gc.disable()
    try:
        types.release()
        del types
        assert [r() for r in parts] == [None] * 5
    finally:
        if enabled:
            gc.enable()
