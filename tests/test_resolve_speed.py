"""The speed machinery of graph building changes nothing: memo tables, graph assembly
straight into networkx's dicts, the frozen GC, and `git fsck` started before indexing."""

from __future__ import annotations

import gc
import subprocess
from pathlib import Path

import networkx as nx
import pytest
from graphfixtures import fixture_program, graph_snapshot

import analyzer.graph.build as build
from analyzer.gcpause import gc_paused
from analyzer.graph.build import build_graph
from analyzer.resolve.calls import CallResolver
from analyzer.resolve.contextual import Contextual
from analyzer.resolve.declarations import Declarations
from analyzer.resolve.expressions import Expressions
from analyzer.resolve.functypes import FunctionTypes
from analyzer.resolve.hierarchy import Hierarchy
from analyzer.resolve.objectliterals import Literals
from analyzer.resolve.receivers import Types
from analyzer.resolve.rules import load_rules
from analyzer.resolve.symbols import SymbolResolver
from analyzer.resolve.valuesites import ValueSites
from analyzer.sources.repair import DeepCheck


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory):
    return fixture_program(tmp_path_factory.mktemp("speed"))


_snapshot = graph_snapshot


class _Forgetful(dict):
    """A memo table that never remembers: every question is computed again."""

    def get(self, key, default=None):  # type: ignore[override]
        return default

    def __contains__(self, key: object) -> bool:
        return False

    def __setitem__(self, key, value) -> None:
        pass


# each receiver-typing part patched on its own class: a part's memo tables are made in its own __init__
MEMOS = {Declarations: ("_typed_cache", "_having", "_having_base"), Hierarchy: ("_subtypes", "_implementations"),
         Expressions: ("_scope_params",), Literals: ("_object_impls_of",), Contextual: ("_closure_index",),
         CallResolver: ("_impl_targets", "_receivers"), ValueSites: ("_owners",),
         SymbolResolver: ("_imports", "_exports"), FunctionTypes: ("_member_memo",)}


def test_memo_tables_change_no_edge(program, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = load_rules()
    with gc_paused():
        memoised = build_graph(program, rules)
    for cls, names in MEMOS.items():
        real = cls.__init__

        def init(self, *args, _real=real, _names=names, **kw) -> None:
            _real(self, *args, **kw)
            for name in _names:
                assert isinstance(getattr(self, name), dict), name  # the table exists under that name
                setattr(self, name, _Forgetful())

        monkeypatch.setattr(cls, "__init__", init)
    with gc_paused():
        recomputed = build_graph(program, rules)
    kinds = recomputed.graph["stats"]["edges_by_kind"]
    assert kinds.get("interface") and kinds.get("method") and kinds.get("dispatch")  # the memos were exercised
    assert _snapshot(memoised) == _snapshot(recomputed)


def test_program_and_module_memos_change_no_edge(program, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scope-chain, local-function and nearest-tsconfig memos (filled by earlier builds of this
    program) answer exactly what recomputing answers: the graph is the same with them forgetting."""
    rules = load_rules()
    with gc_paused():
        memoised = build_graph(program, rules)
    assert program._scope_chains and program._local_functions and program.resolver._nearest  # exercised
    monkeypatch.setattr(program, "_scope_chains", _Forgetful())
    monkeypatch.setattr(program, "_local_functions", _Forgetful())
    monkeypatch.setattr(program.resolver, "_nearest", _Forgetful())
    program.resolver._cache.clear()  # resolutions made with the memo are asked again without it
    with gc_paused():
        recomputed = build_graph(program, rules)
    assert _snapshot(memoised) == _snapshot(recomputed)


def test_memoised_scope_answers_are_immutable_and_keyed_per_name(program) -> None:
    """A caller cannot change what the next one is told, and one name's answer is not another's."""
    mod, fn = next((m, d) for m, facts in program.files.items() for d in facts.definitions
                   if d.kind == "function" and d.parent is not None)
    chain = program.scope_chain(mod, fn.parent)
    assert isinstance(chain, tuple) and chain[0] == fn.parent and chain[-1] is None
    assert program.scope_chain(mod, fn.parent) is chain
    assert program.local_function(mod, fn.parent, fn.name) is fn
    assert program.local_function(mod, fn.parent, fn.name + "_not_declared") is None
    assert program.local_function(mod, fn.parent, fn.name) is fn


def test_direct_assembly_builds_what_add_edge_builds(program, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    real = build._add_edges

    def spy(g, edges):
        seen.append((dict(g._node), list(edges)))  # the nodes before any edge, and the edges in order
        real(g, edges)

    monkeypatch.setattr(build, "_add_edges", spy)
    with gc_paused():
        g = build_graph(program, load_rules())
    nodes, edges = seen[0]
    ref = nx.MultiDiGraph()
    for n, attrs in nodes.items():
        ref.add_node(n, **attrs)
    for e in edges:
        for node in (e.source, e.target):
            if node not in ref:  # an endpoint without a definition: the attributes build_graph gave it
                ref.add_node(node, **g.nodes[node])
        attrs = e.to_dict()
        attrs.pop("source")
        attrs.pop("target")
        ref.add_edge(e.source, e.target, **attrs)
    built = list(g.nodes(data=True))
    assert built[:len(ref)] == list(ref.nodes(data=True))
    assert all(n.startswith("npm:") for n, _ in built[len(ref):])  # added after the edges, on purpose
    assert list(g.edges(keys=True, data=True)) == list(ref.edges(keys=True, data=True))
    assert {n: list(g._pred[n].items()) for n in ref} == {n: list(ref._pred[n].items()) for n in ref}
    assert any(len(keyed) > 1 for adj in g._succ.values() for keyed in adj.values())  # parallel edges too
    # one key dict per node pair, shared by both directions (as networkx does)
    assert all(g._pred[v][u] is keyed for u, adj in g._succ.items() for v, keyed in adj.items())


def test_resolve_text_memo_keeps_evidence_apart_and_hands_out_copies(program) -> None:
    from analyzer.resolve.symbols import SymbolResolver

    types = Types(program, SymbolResolver(program))
    mod, cls = next((m, d) for m, facts in program.files.items() for d in facts.definitions
                    if d.kind == "class" and d.parent is None)
    named = [cls]
    first = types.decls.resolve_text(mod, named[0].name, "here: one")
    assert first and first[0].evidence[0] == "here: one"
    first.clear()  # a caller that mutates its answer does not change the next one
    again = types.decls.resolve_text(mod, named[0].name, "here: one")
    other = types.decls.resolve_text(mod, named[0].name, "there: two")
    assert again and again[0].evidence[0] == "here: one"
    assert other and other[0].evidence[0] == "there: two"


def test_receiver_memo_keys_on_scope_chain_and_line(program) -> None:
    """Counted through the memo table and the identity of the answers (not by patching `chain_types`: a
    compiled `Types` has read-only methods): a repeated question returns the very list the first got."""
    from analyzer.resolve.symbols import SymbolResolver

    symbols = SymbolResolver(program)
    types = Types(program, symbols)
    calls = CallResolver(program, symbols, types)
    mod = next(iter(program.files))
    first = calls.receiver_types(mod, "f", ["x", "a"], 3)
    assert calls.receiver_types(mod, "f", ["x", "a"], 4) is not first  # a named root's binding depends on the line
    assert calls.receiver_types(mod, "g", ["x", "a"], 3) is not first
    assert calls.receiver_types(mod, "f", ["x", "b"], 3) is not first
    assert calls.receiver_types(mod, "f", ["x", "a"], 3) is first  # the repeated question: from the table
    assert len(calls._receivers) == 4
    this = calls.receiver_types(mod, "f", ["this", "a"], 5)
    assert calls.receiver_types(mod, "f", ["this", "a"], 9) is this  # `this.a` means the same on every line
    assert calls.receiver_types(mod, "g", ["this", "a"], 9) is not this
    assert len(calls._receivers) == 6


def test_gc_paused_can_freeze_what_was_built() -> None:
    before = gc.get_freeze_count()
    try:
        with gc_paused(freeze=True):
            kept = [[i] for i in range(1000)]
            assert not gc.isenabled()
        assert gc.isenabled()
        assert gc.get_freeze_count() >= before + len(kept)
    finally:
        gc.unfreeze()


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


def test_deep_check_started_early_still_finds_a_corrupt_object(tmp_path: Path) -> None:
    warnings: list[str] = []
    sound, broken = tmp_path / "sound", tmp_path / "broken"
    for dest in (sound, broken):
        dest.mkdir()
        _git(dest, "init", "-q")
        (dest / "a.ts").write_text("export const a = 1;\n" * 50)
        _git(dest, "add", "a.ts")
        _git(dest, "commit", "-qm", "one")
    blob = subprocess.run(["git", "rev-parse", "HEAD:a.ts"], cwd=broken, capture_output=True, text=True,
                          check=True).stdout.strip()
    loose = broken / ".git" / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    data = bytearray(loose.read_bytes())
    data[len(data) // 2] ^= 0xFF  # a flipped byte inside the compressed blob: only the full fsck reads it
    loose.write_bytes(bytes(data))
    checks = [DeepCheck(sound, "sound"), DeepCheck(broken, "broken"), DeepCheck(tmp_path / "absent", "absent")]
    assert [c.finish(warn=warnings.append) for c in checks] == [False, True, False]
    assert sound.is_dir() and not broken.exists()
    assert len(warnings) == 1 and "broken" in warnings[0] and "damaged" in warnings[0]


def _one_file_program(*definitions):
    from analyzer.index.configs import RepoConfigs
    from analyzer.index.model import FileFacts
    from analyzer.resolve.modules import RepoModules
    from analyzer.resolve.program import Program, RepoInput

    facts = FileFacts(path="src/a.ts", language="typescript", definitions=list(definitions))
    return Program([RepoInput("r", "c0", [facts], RepoModules("r", {"src/a.ts"}, RepoConfigs()))])


def test_parameter_index_keeps_the_first_parameter_that_binds_a_name() -> None:
    """Root typing looks parameters up in a per-definition index; it must answer what the scan in
    parameter order answered: a plain parameter, or the key of a typed object pattern, whichever is first."""
    from analyzer.index.model import Definition, Param
    from analyzer.resolve.modules import ModuleRef
    from analyzer.resolve.symbols import SymbolResolver

    plain_first = Definition("f", "f", "function", 1, 3, params=[
        Param("a", "Plain"), Param("{ a, b: c }", "Props")])
    pattern_first = Definition("g", "g", "function", 5, 7, params=[
        Param("{ x: a, c }", "Props"), Param("a", "Plain"), Param("{ d }")])  # untyped pattern: binds no key
    program = _one_file_program(plain_first, pattern_first)
    types = Types(program, SymbolResolver(program))
    mod = ModuleRef("r", "src/a.ts")
    assert types.exprs._params_named(mod, "f")["a"] == (plain_first, 0, None)
    assert types.exprs._params_named(mod, "f")["c"] == (plain_first, 1, "b")
    assert types.exprs._params_named(mod, "g")["a"] == (pattern_first, 0, "x")
    assert "d" not in types.exprs._params_named(mod, "g")
    assert types.exprs._params_named(mod, "nowhere") == {}
    plain = types.exprs.root_types(mod, "f", "a", 2)
    assert [t.text for t in plain] == ["Plain"] and "parameter a: Plain" in plain[0].evidence


def test_make_edge_fills_every_field_by_name() -> None:
    """`make_edge` builds edges positionally (cheaper); each value must still land in its own field."""
    from analyzer.index.model import Call
    from analyzer.resolve.modules import ModuleRef
    from analyzer.resolve.program import DefRef
    from analyzer.resolve.symbols import SymbolResolver

    program = _one_file_program()
    symbols = SymbolResolver(program)
    calls = CallResolver(program, symbols, Types(program, symbols))
    call = Call(scope="A.run", callee=["this", "llm", "stream"], line=7, column=11, nested=2, text="this.llm.stream")
    e = calls.make_edge(ModuleRef("r", "src/a.ts"), call, DefRef("r", "src/b.ts", "Llm.stream"), "interface",
                        ["src/b.ts:3: why"], possible=True, seam="seam:x", rule="rule-x")
    assert (e.source, e.target, e.kind, e.line, e.path, e.repo) == (
        "r:src/a.ts:A.run", "r:src/b.ts:Llm.stream", "interface", 7, "src/a.ts", "r")
    assert e.evidence == ["src/a.ts:7: this.llm.stream(…)", "src/b.ts:3: why"]
    assert (e.rule, e.possible, e.nested, e.column, e.call_text, e.seam, e.passer) == (
        "rule-x", True, 2, 11, "this.llm.stream", "seam:x", None)
    module_level = calls.make_edge(ModuleRef("r", "src/a.ts"), Call(scope=None, callee=["f"], line=1, column=0),
                                   DefRef("r", "src/a.ts", "f"), "direct", [])
    assert module_level.source == "r:src/a.ts:<module>" and module_level.call_text == "f"


def test_symbol_indexes_answer_what_the_file_order_scans_answered() -> None:
    """Names and exports are looked up in per-file indexes; the first import of a name, the first export
    statement of a name and the `export *`s (only when no statement names it) decide, as the scans did."""
    from analyzer.index.configs import RepoConfigs
    from analyzer.index.model import Definition, Export, FileFacts, Import
    from analyzer.resolve.modules import ModuleRef, RepoModules
    from analyzer.resolve.program import DefRef, Program, RepoInput

    files = [
        FileFacts(path="src/a.ts", language="typescript", imports=[
            Import("./b", "B", "B", 1), Import("./c", "C", "B", 2), Import("./c", "*", "ns", 3)]),
        FileFacts(path="src/b.ts", language="typescript", definitions=[
            Definition("B", "B", "class", 1, 2, exported=True), Definition("hidden", "hidden", "function", 3, 4)],
            exports=[Export("*", 5, specifier="./c"), Export("Alias", 6, local="hidden"),
                     Export("Alias", 7, local="B"), Export("C", 8, local="C", specifier="./c")]),
        FileFacts(path="src/c.ts", language="typescript", definitions=[
            Definition("C", "C", "class", 1, 2, exported=True),
            Definition("Deep", "Deep", "class", 3, 4, exported=True)]),
    ]
    paths = {f.path for f in files}
    program = Program([RepoInput("r", "c0", files, RepoModules("r", paths, RepoConfigs()))])
    symbols = SymbolResolver(program)
    a, b, c = (ModuleRef("r", p) for p in ("src/a.ts", "src/b.ts", "src/c.ts"))
    assert symbols.resolve_name(a, "B").definition == DefRef("r", "src/b.ts", "B")  # the first import of B
    assert symbols.resolve_name(a, "ns").namespace == c
    assert symbols.resolve_export(b, "Alias").definition == DefRef("r", "src/b.ts", "hidden")  # first statement
    assert symbols.resolve_export(b, "C").definition == DefRef("r", "src/c.ts", "C")
    assert symbols.resolve_export(b, "Deep").definition == DefRef("r", "src/c.ts", "Deep")  # via export *
    assert symbols.resolve_export(b, "hidden") is None  # not exported under its own name
    assert [i.line for i in symbols.imports_of(a, "B")] == [1, 2] and symbols.imports_of(a, "nothing") == []


def test_closure_parameter_index_keeps_the_scan_order() -> None:
    """Untyped closure parameters are typed from the nearest call at or before their line that passes a
    closure declaring them (its first such argument); the per-scope index must keep that order."""
    from analyzer.index.model import Arg, Call, Definition
    from analyzer.resolve.modules import ModuleRef

    early = Call("f", ["run"], 3, 0, args=[Arg("function", "(s) => s.go()")])
    twice = Call("f", ["pair"], 5, 0, args=[Arg("identifier", "x"), Arg("function", "(a) => a"),
                                            Arg("function", "(b, s) => s"), Arg("function", "(s) => s")])
    late = Call("f", ["later"], 8, 0, args=[Arg("function", "(s, s2) => s")])
    program = _one_file_program(Definition("f", "f", "function", 1, 9))
    program.files[ModuleRef("r", "src/a.ts")].calls.extend([late, early, twice])
    types = Types(program, SymbolResolver(program))
    index = types.contextual.closure_params(ModuleRef("r", "src/a.ts"), "f")
    assert [(c.line, i) for c, i, _ in index["s"]] == [(8, 0), (5, 2), (3, 0)]  # latest first, first argument
    assert [(c.line, i, ps) for c, i, ps in index["a"]] == [(5, 1, ["a"])]
    assert "go" not in index and "x" not in index
