"""Source listing, per-blob cache and index_repo against real git repos built in tmp dirs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import git
import pytest
from conftest import DSH_RC2, PI_V0_82_1, snapshot

from analyzer.index import build
from analyzer.index.build import index_repo
from analyzer.index.cache import DB_NAME, FactsCache
from analyzer.index.source import list_sources, scan_sources

AUTHOR = git.Actor("Test", "test@example.com")

FILES = {
    "package.json": '{"name": "root", "private": true}',
    "src/a.ts": "import { b } from './b.js';\nexport function a() { return b(); }\n",
    "src/b.ts": "export function b() { return 1; }\n",
    "src/view.tsx": "export const View = () => <div onClick={() => go()} />;\n",
    "src/types.d.ts": "export interface T { x: number }\n",
    "node_modules/dep/index.js": "module.exports = 1;\n",
    "dist/a.js": "export function a() {}\n",
    "coverage/lcov.js": "x();\n",
    "vendor/bundle.min.js": "var a=1;\n",
    "vendor/fw/src/service.ts": "export class Service { constructor(ctx: unknown, name: string) {} }\n",
    "packages/built/package.json": '{"name": "built", "main": "./lib/index.js", "types": "./lib/index.d.ts"}',
    "packages/built/src/index.ts": "export const x = 1;\n",
    "packages/built/lib/index.js": "exports.x = 1;\n",
    "packages/plain/package.json": '{"name": "plain", "main": "./lib/index.js"}',
    "packages/plain/lib/index.js": "exports.y = 2;\n",
    "README.md": "# hi\n",
}


def make_repo(root: Path, files: dict[str, str]) -> git.Repo:
    repo = git.Repo.init(root)
    commit_files(repo, files, "initial")
    return repo


def commit_files(repo: git.Repo, files: dict[str, str], message: str) -> str:
    root = Path(repo.working_tree_dir)
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    repo.index.add(list(files))
    return repo.index.commit(message, author=AUTHOR, committer=AUTHOR).hexsha


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    return make_repo(tmp_path / "repo", FILES)


def test_list_sources_skips_dependencies_builds_and_bundles(repo: git.Repo) -> None:
    scan = scan_sources(repo, "HEAD")
    assert [f.path for f in scan.files] == [
        "packages/built/src/index.ts",
        "packages/plain/lib/index.js",  # lib/ is this package's code: no src/ beside it
        "src/a.ts",
        "src/b.ts",
        "src/types.d.ts",
        "src/view.tsx",
        "vendor/fw/src/service.ts",  # vendored sources stay; vendored bundles go
    ]
    assert scan.skipped == {"dependencies": 1, "build-output": 3, "vendored-bundle": 1, "not-source": 4}
    a = next(f for f in scan.files if f.path == "src/a.ts")
    assert a.size == len(FILES["src/a.ts"]) and len(a.blob_sha) == 40
    assert list_sources(repo, "HEAD") == scan.files


def test_unchanged_blobs_are_parsed_once(repo: git.Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = build.extract_facts

    def counting(data: bytes, path: str):
        seen.append(path)
        return real(data, path)

    monkeypatch.setattr(build, "extract_facts", counting)
    cache = tmp_path / "cache"
    first = index_repo(repo, "HEAD", repo_name="r", cache=cache)
    assert len(seen) == 7 and (first.stats.parsed, first.stats.cached, first.stats.files) == (7, 0, 7)
    assert first.stats.skipped["build-output"] == 3

    seen.clear()
    second = index_repo(repo, "HEAD", repo_name="r", cache=cache)
    assert seen == [] and (second.stats.parsed, second.stats.cached) == (0, 7)
    assert [f.to_dict() for f in second.files] == [f.to_dict() for f in first.files]

    commit_files(repo, {"src/b.ts": "export function b() { return 2; }\n"}, "bump")
    third = index_repo(repo, "HEAD", repo_name="r", cache=cache)
    assert seen == ["src/b.ts"] and (third.stats.parsed, third.stats.cached) == (1, 6)
    assert third.blobs["src/b.ts"] != first.blobs["src/b.ts"]  # each index is of its own commit
    assert third.facts("src/a.ts").imports[0].specifier == "./b.js"


def test_same_blob_under_another_extension_is_not_confused(tmp_path: Path) -> None:
    text = "export const f = (x) => <T,>(y: T) => y;\n"
    repo = make_repo(tmp_path / "repo", {"a.ts": text, "b.tsx": text, "c.d.ts": text})
    idx = index_repo(repo, "HEAD", repo_name="r", cache=tmp_path / "cache")
    again = index_repo(repo, "HEAD", repo_name="r", cache=tmp_path / "cache")
    langs = {f.path: (f.language, f.declaration_only) for f in again.files}
    assert langs == {"a.ts": ("typescript", False), "b.tsx": ("tsx", False), "c.d.ts": ("typescript", True)}
    assert again.stats.cached == 3 and idx.stats.parsed == 3


def test_corrupt_cache_is_set_aside_with_one_warning(repo: git.Repo, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / DB_NAME).write_bytes(b"this is not a database" * 100)
    warnings: list[str] = []
    with FactsCache(cache_dir, warn=warnings.append) as cache:
        idx = index_repo(repo, "HEAD", repo_name="r", cache=cache)
    assert idx.stats.files == 7 and idx.stats.parsed == 7
    assert len(warnings) == 1 and "moved it to" in warnings[0]
    assert any(p.name.startswith(f"{DB_NAME}.bad-") for p in cache_dir.iterdir())
    with FactsCache(cache_dir, warn=warnings.append) as cache:  # the rebuilt cache works
        assert index_repo(repo, "HEAD", repo_name="r", cache=cache).stats.cached == 7
    assert len(warnings) == 1


def test_foreign_sqlite_file_is_set_aside(repo: git.Repo, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    conn = sqlite3.connect(cache_dir / DB_NAME)
    conn.execute("CREATE TABLE other (x)")
    conn.commit()
    conn.close()
    warnings: list[str] = []
    with FactsCache(cache_dir, warn=warnings.append) as cache:
        assert index_repo(repo, "HEAD", repo_name="r", cache=cache).stats.parsed == 7
    assert len(warnings) == 1


def test_cache_rows_from_another_version_are_not_used(repo: git.Repo, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    with FactsCache(cache_dir) as cache:
        index_repo(repo, "HEAD", repo_name="r", cache=cache)
    with FactsCache(cache_dir) as cache:
        cache.version = "analyzer=other"
        assert index_repo(repo, "HEAD", repo_name="r", cache=cache).stats.parsed == 7


def test_process_pool_gives_the_same_facts(repo: git.Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "POOL_MIN_FILES", 1)
    pooled = index_repo(repo, "HEAD", repo_name="r", cache=tmp_path / "c1", workers=2)
    single = index_repo(repo, "HEAD", repo_name="r", cache=tmp_path / "c2", workers=1)
    assert [f.to_dict() for f in pooled.files] == [f.to_dict() for f in single.files]
    assert pooled.stats.parsed == single.stats.parsed == 7
    again = index_repo(repo, "HEAD", repo_name="r", cache=tmp_path / "c1", workers=2)
    assert again.stats.cached == 7 and [f.path for f in again.files] == [f.path for f in single.files]


@pytest.mark.upstream
def test_real_snapshots_index_without_failures(tmp_path: Path) -> None:
    for owner_name, commit, at_least in (("deepseek-ai+deepseek-harness", DSH_RC2, 2000),
                                         ("at-inc+pi", PI_V0_82_1, 500)):
        git_dir = snapshot(owner_name, commit)
        idx = index_repo(git.Repo(git_dir), commit, repo_name=owner_name, cache=tmp_path / "cache")
        assert idx.stats.files >= at_least
        assert idx.stats.extract_error_files == 0, owner_name
        assert all(f.path and f.language for f in idx.files)


# -- the cache codec (marshal rows) ---------------------------------------------------------------

CODEC_SOURCE = b"""
import { a, type B } from './a.js';
export interface Port { send(x: string): Promise<void>; }
export class Agent extends Base implements Port {
  private readonly io = new Io();
  constructor(private ctx: Ctx, name?: string) { super(ctx, 'llm'); }
  async send(x: string): Promise<void> { await this.io.write?.(x, { kind: 'k', run: () => f(1) }); }
}
const table = { openai: async (o: Opts) => import('./openai.js'), ...rest };
export default function make(): Port { return new Agent(ctx); }
"""


def test_codec_round_trip_keeps_every_field_and_list_type() -> None:
    from analyzer.index.cache import decode_facts, encode_facts
    from analyzer.parse.extract import extract_facts

    facts = extract_facts(CODEC_SOURCE, "src/agent.ts")
    assert facts.calls and facts.objects and facts.definitions and facts.fields and facts.imports
    back = decode_facts(encode_facts(facts))
    assert back.path == ""  # the path belongs to the caller
    back.path = facts.path
    assert back == facts  # dataclass equality: every field of every nested record
    call = next(c for c in back.calls if c.callee[-1] == "write")
    assert isinstance(call.callee, list) and isinstance(call.args, list)
    assert type(call.args[1]).__name__ == "Arg" and call.args[1].object_id is not None
    prop = next(o for o in back.objects if o.holder.startswith("variable:")).properties[0]
    assert type(prop).__name__ == "ObjectProperty" and isinstance(prop.dynamic_imports, list)


def test_record_lists_table_matches_the_model_annotations() -> None:
    """The codec's table of nested record lists is every `list[<record>]` field the model declares, read
    from model.py's source (a compiled model keeps no annotation text to compare against)."""
    import ast

    import analyzer.index
    from analyzer.index import model

    tree = ast.parse((Path(analyzer.index.__file__).parent / "model.py").read_text())
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    declared: dict[str, dict[str, str]] = {}
    for name, node in classes.items():
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                text = ast.unparse(stmt.annotation).replace(" ", "")
                if text.startswith("list[") and text[5:-1] in classes:
                    declared.setdefault(name, {})[stmt.target.id] = text[5:-1]
    assert declared["Definition"] == {"params": "Param", "overload_params": "Param"}  # the reader works
    table = {cls.__name__: {f: sub.__name__ for f, sub in lists.items()} for cls, lists in model.RECORD_LISTS.items()}
    assert table == declared


def test_written_initialisers_behave_like_generated_ones() -> None:
    """Records with a hand-written `__init__` (see analyzer/index/model.py) take the fields in field order,
    by position or by name, default exactly as the field declarations say and never share a default list."""
    import ast
    from dataclasses import MISSING, fields

    import analyzer.index
    from analyzer.index import model

    tree = ast.parse((Path(analyzer.index.__file__).parent / "model.py").read_text())
    annotations = {(node.name, stmt.target.id): ast.unparse(stmt.annotation).replace(" ", "")
                   for node in tree.body if isinstance(node, ast.ClassDef)
                   for stmt in node.body if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)}
    samples = {"str": "s", "int": 7, "bool": True, "str|None": "o", "list[str]": ["x"], "list[str]|None": ["y"],
               "list[Arg]": [model.Arg("string", "a")], "list[int]": [3]}
    written = [cls for cls in (model.Binding, model.Call, model.Arg, model.ObjectProperty)
               if not cls.__dataclass_params__.init]  # type: ignore[attr-defined]
    assert len(written) == 4
    for cls in written:
        fs = fields(cls)
        values = [samples[annotations[(cls.__name__, f.name)]] for f in fs]
        for built in (cls(*values), cls(**{f.name: v for f, v in zip(fs, values, strict=True)})):
            assert [getattr(built, f.name) for f in fs] == values, cls.__name__
        required = [v for f, v in zip(fs, values, strict=True) if f.default is MISSING and f.default_factory is MISSING]
        a, b = cls(*required), cls(*required)
        for f in fs[len(required):]:
            want = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
            assert getattr(a, f.name) == want, (cls.__name__, f.name)
            if isinstance(want, list):
                assert getattr(a, f.name) is not getattr(b, f.name)  # a fresh list per record


def test_codec_rejects_damaged_and_foreign_bytes() -> None:
    import json
    import marshal
    import zlib

    from analyzer.index.cache import decode_facts, encode_facts
    from analyzer.parse.extract import extract_facts

    good = encode_facts(extract_facts(CODEC_SOURCE, "src/agent.ts"))
    old_json = zlib.compress(json.dumps(["", "typescript", False, 0, 0, 1] + [[]] * 9).encode())
    for bad in (good[: len(good) // 2], b"not zlib", zlib.compress(b"\x00garbage"), old_json,
                zlib.compress(marshal.dumps([1, 2]))):
        with pytest.raises((ValueError, EOFError, TypeError, zlib.error)):
            decode_facts(bad)


def test_cache_key_names_the_codec() -> None:
    from analyzer.index.cache import CODEC, cache_version

    assert f"codec={CODEC}" in cache_version()  # rows of another codec are never looked up


def test_a_row_that_does_not_decode_is_re_extracted(repo: git.Repo, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    first = index_repo(repo, "HEAD", repo_name="r", cache=cache_dir)
    conn = sqlite3.connect(cache_dir / DB_NAME)
    with conn:  # an old-codec (JSON) value and a truncated one under the current key
        rows = conn.execute("SELECT blob, data FROM facts ORDER BY blob").fetchall()
        conn.execute("UPDATE facts SET data = ? WHERE blob = ?", (b'["", "typescript"]', rows[0][0]))
        conn.execute("UPDATE facts SET data = ? WHERE blob = ?", (rows[1][1][:10], rows[1][0]))
    conn.close()
    warnings: list[str] = []
    with FactsCache(cache_dir, warn=warnings.append) as cache:
        again = index_repo(repo, "HEAD", repo_name="r", cache=cache)
    assert again.stats.parsed == 7 and len(warnings) == 1 and "moved it to" in warnings[0]
    assert [f.to_dict() for f in again.files] == [f.to_dict() for f in first.files]
    with FactsCache(cache_dir) as cache:  # and the new cache serves them
        assert index_repo(repo, "HEAD", repo_name="r", cache=cache).stats.cached == 7


def test_worker_hands_over_rows_and_the_stored_bytes_of_the_same_facts() -> None:
    from analyzer.index.cache import decode_facts, decode_rows

    raw, stored = build._extract_encoded(("src/agent.ts", CODEC_SOURCE))
    assert decode_rows(raw) == decode_facts(stored)
    assert decode_rows(raw).calls  # not an empty shell
    assert build._extract_encoded(("vendor/x.min.js", b"var a=1;" * 5000)) is None  # bundles are skipped


def test_indexed_facts_are_frozen_out_of_the_collector(repo: git.Repo, tmp_path: Path) -> None:
    import gc

    before = gc.get_freeze_count()
    try:
        idx = index_repo(repo, "HEAD", repo_name="r", cache=tmp_path / "cache")
        # every record of every file is out of the generations a collection scans
        assert gc.get_freeze_count() - before >= sum(1 + len(f.calls) + len(f.definitions) for f in idx.files)
    finally:
        gc.unfreeze()
