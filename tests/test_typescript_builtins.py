"""TypeScript's built-ins come from analyzer/rules/typescript.toml: read whole, wired into the resolver's
and the index's tables, kept out of the dispatch rules, and a broken file is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

import analyzer.rules.typescript as ts
from analyzer.errors import AnalyzerError
from analyzer.index import types as index_types
from analyzer.resolve import contextual, declarations, expressions, functypes, stored, typetext
from analyzer.resolve.rules import load_rules

SHIPPED = Path(ts.__file__).with_name(ts.FILE)


def test_every_table_is_read_with_its_shape() -> None:
    b = ts.typescript()
    assert {"Promise", "Array", "Generator"} <= b.transparent_generics and "string" in b.primitive
    assert b.element_methods["Map"] == {"get": 1} and b.iterator_elements["Map"] == {"values": 1, "keys": 0}
    assert b.callback_elements["Map"]["forEach"] == (1, 0)  # positions, in order: (value, key)
    assert b.callback_elements["ReadonlyArray"] == b.callback_elements["Array"]
    assert b.add_methods == {"push": 0, "unshift": 0, "add": 0, "set": 1}
    assert b.arrays == ("Array", "ReadonlyArray") and "filter" in b.same_array_methods


def test_the_resolver_and_index_tables_are_the_files() -> None:
    b = ts.typescript()
    assert index_types.TRANSPARENT_GENERICS is b.transparent_generics and index_types.NON_TYPES is b.primitive
    assert typetext.WRAPPERS is b.named_through and typetext.NON_TYPES is b.primitive
    assert expressions.BUILTIN_ELEMENT_METHODS is b.element_methods
    assert expressions.ITERATOR_ELEMENTS is b.iterator_elements
    assert contextual.CALLBACK_ELEMENTS is b.callback_elements and contextual.SPREAD_ITERABLES is b.spread_iterables
    assert declarations.MIXIN_TYPES is b.member_subsets and functypes.SAME_MEMBERS is b.same_members
    assert stored.ADD_METHODS is b.add_methods and stored.ELEMENT_CALLBACKS is b.element_callbacks


def test_it_is_not_a_dispatch_rule_file() -> None:
    assert not any(source.endswith(ts.FILE) for source in load_rules().sources)


@pytest.mark.parametrize("text, says", [
    ("[types\n", "malformed"),
    (SHIPPED.read_text().replace("[collections.iterator_elements]", "[collections.iterators]"), "missing"),
    (SHIPPED.read_text().replace('arrays = ["Array", "ReadonlyArray"]', "arrays = 3"), "wrong kind"),
])
def test_a_broken_file_is_one_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
                                              says: str) -> None:
    (tmp_path / ts.FILE).write_text(text)

    class Folder:
        @staticmethod
        def files(package: str) -> Path:
            return tmp_path

    monkeypatch.setattr(ts, "resources", Folder)
    ts.typescript.cache_clear()
    try:
        with pytest.raises(AnalyzerError) as err:
            ts.typescript()
    finally:
        ts.typescript.cache_clear()  # the next caller reads the shipped file again
    assert ts.SHOWN in str(err.value) and says in str(err.value)
