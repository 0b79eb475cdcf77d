"""Small pieces of resolution: type texts, callback parameters, package specifiers and `exports`."""

from __future__ import annotations

from analyzer.index.configs import PackageManifest, RepoConfigs, TsConfig
from analyzer.resolve.modules import ModuleResolver, RepoModules, split_package
from analyzer.resolve.typetext import arrow_parameters, function_type_parameters, named_types, object_type_members


def test_named_types_unwrap_promises_arrays_and_nullables() -> None:
    assert named_types("Promise<PreparedCall | undefined>") == ["PreparedCall"]
    assert named_types("readonly Adapter[]") == ["Adapter"]
    assert named_types("AsyncIterable<Chunk>") == ["AsyncIterable"]  # its methods are not Chunk's
    assert named_types("string | null") == []


def test_inline_object_types_and_function_types() -> None:
    assert object_type_members("Promise<{ request: Req; prepared?: Call }>") == {"request": "Req", "prepared": "Call"}
    assert function_type_parameters("(streams: Streams, n?: number) => Out") == ["Streams", "number"]
    assert function_type_parameters("((s: S) => void)") == ["S"]
    assert arrow_parameters("(streams) => streams.run()") == ["streams"]
    assert arrow_parameters("async (a, b: Map<string, X> = new Map()) => a") == ["a", "b"]
    assert arrow_parameters("x => x") == ["x"]


def test_split_package() -> None:
    assert split_package("@scope/pkg/api/completions.lazy") == ("@scope/pkg", "./api/completions.lazy")
    assert split_package("lodash") == ("lodash", ".")


def _resolver() -> ModuleResolver:
    pi = RepoModules("pi", {"packages/ai/src/index.ts", "packages/ai/src/api/completions.lazy.ts"}, RepoConfigs(
        packages=[PackageManifest("@new/ai", "packages/ai", "packages/ai/package.json", exports={
            ".": {"types": "./dist/index.d.ts", "import": "./dist/index.js"},
            "./api/*": {"types": "./dist/api/*.d.ts", "import": "./dist/api/*.js"}})]), aliases=("@old/ai",))
    app = RepoModules("app", {"src/main.ts", "vendor/fw/src/index.ts"}, RepoConfigs(
        tsconfigs=[TsConfig("tsconfig.json", "", paths={"fw": ["./vendor/fw/src"]})]))
    return ModuleResolver([pi, app])


def test_cross_repo_exports_pattern_keeps_dots_in_the_star() -> None:
    res = _resolver().resolve("app", "src/main.ts", "@new/ai/api/completions.lazy")
    assert res.module is not None and res.module.repo == "pi"
    assert res.module.path == "packages/ai/src/api/completions.lazy.ts"
    assert "./api/*" in res.how


def test_alias_scope_and_tsconfig_paths_and_externals() -> None:
    r = _resolver()
    alias = r.resolve("app", "src/main.ts", "@old/ai")
    assert alias.module is not None and alias.module.path == "packages/ai/src/index.ts" and "alias" in alias.how
    fw = r.resolve("app", "src/main.ts", "fw")
    assert fw.module is not None and fw.module.path == "vendor/fw/src/index.ts" and "tsconfig paths" in fw.how
    ext = r.resolve("app", "src/main.ts", "zod/v4")
    assert ext.module is None and ext.external == "zod"


def test_function_type_return() -> None:
    from analyzer.resolve.typetext import function_type_return

    assert function_type_return("(key: string) => Store") == "Store"
    assert function_type_return("((a: A) => Promise<B>)") == "Promise<B>"
    assert function_type_return("(a: (x: X) => Y) => Z") == "Z"
    assert function_type_return("Store") is None


def test_named_function_types_are_recognised_by_their_right_hand_side() -> None:
    from analyzer.resolve.functypes import alias_rhs, is_function_type

    rhs = alias_rhs("export type Translate<K extends string = string> = (key: K) => string")
    assert rhs == "(key: K) => string" and is_function_type(rhs)
    assert is_function_type(alias_rhs("type Make = <T>(x: T) => T") or "")
    assert not is_function_type(alias_rhs("type Obj = { run: () => void }") or "")
    assert not is_function_type(alias_rhs("type Pair = [() => void, number]") or "")
    assert alias_rhs("type LabelFn = LabelProps['t']") == "LabelProps['t']"
    assert alias_rhs("interface X { a: string }") is None


def test_memoised_arrow_parameters_hand_out_fresh_lists() -> None:
    from analyzer.resolve.typetext import _arrow_parameters, arrow_parameters

    first = arrow_parameters("(a, b: T) => a")
    first.append("mutated")
    again = arrow_parameters("(a, b: T) => a")
    assert again == ["a", "b"]
    assert _arrow_parameters.cache_info().hits >= 1


def test_memoised_type_texts_hand_out_fresh_containers() -> None:
    from analyzer.resolve.typetext import _named_types, _object_type_members

    names = named_types("Promise<Call | undefined> & Extra")
    assert names == ["Call", "Extra"]
    names.append("mutated")
    assert named_types("Promise<Call | undefined> & Extra") == ["Call", "Extra"]
    members = object_type_members("{ a: A; b?: B }")
    assert members == {"a": "A", "b": "B"}
    members["c"] = "C"
    assert object_type_members(" { a: A; b?: B } ") == {"a": "A", "b": "B"}
    assert _named_types.cache_info().hits >= 1 and _object_type_members.cache_info().hits >= 1
    assert object_type_members("Promise<{ x: X }>") == {"x": "X"} and object_type_members("Foo") == {}


def test_split_top_level_without_the_separator_is_one_stripped_part() -> None:
    from analyzer.index.types import split_top_level

    assert split_top_level("  Map<string, X>  ", "|") == ["Map<string, X>"]
    assert split_top_level("   ", "|") == []
    assert split_top_level("A | Map<K, B | C>", "|") == ["A", "Map<K, B | C>"]
