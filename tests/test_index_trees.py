"""The shared per-blob syntax-tree service: trees from git objects, parsed once per blob."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from analyzer.index.trees import MissingBlob, SyntaxTrees

AUTHOR = git.Actor("Fixture Author", "fixture@example.invalid")


def commit_files(repo: git.Repo, files: dict[str, str], message: str) -> str:
    root = Path(repo.working_tree_dir or "")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    repo.index.add(list(files))
    return repo.index.commit(message, author=AUTHOR, committer=AUTHOR).hexsha


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    return git.Repo.init(tmp_path / "up", initial_branch="main")


def test_tree_of_a_path_at_a_commit_reads_that_commit(repo: git.Repo) -> None:
    first = commit_files(repo, {"src/a.ts": "export function a() { return 1; }\n"}, "one")
    second = commit_files(repo, {"src/a.ts": "export function a() { return 2; }\n"}, "two")
    with SyntaxTrees() as trees:
        old = trees.at(repo.git_dir, first, "src/a.ts")
        new = trees.at(repo.git_dir, second, "src/a.ts")
    assert old is not None and new is not None
    assert old.source.endswith(b"return 1; }\n") and new.source.endswith(b"return 2; }\n")
    assert old.language == "typescript"
    fn = old.root.children[0].child_by_field_name("declaration")
    assert fn is not None and fn.type == "function_declaration"
    assert old.text(fn.child_by_field_name("name")) == "a"  # type: ignore[arg-type]
    assert old.blob_sha != new.blob_sha
    assert trees.parses == 2


def test_an_unchanged_file_at_another_commit_is_not_parsed_again(repo: git.Repo) -> None:
    first = commit_files(repo, {"src/a.ts": "export const a = 1;\n", "src/b.ts": "export const b = 1;\n"}, "one")
    second = commit_files(repo, {"src/b.ts": "export const b = 2;\n"}, "two")
    with SyntaxTrees() as trees:
        a1 = trees.at(repo.git_dir, first, "src/a.ts")
        a2 = trees.at(repo.git_dir, second, "src/a.ts")
        assert trees.parses == 1
        assert a1 is not None and a2 is not None and a1.tree is a2.tree
        trees.at(repo.git_dir, second, "src/b.ts")
        assert trees.parses == 2


def test_the_same_blob_under_another_grammar_is_parsed_for_that_grammar(repo: git.Repo) -> None:
    text = "const x = <T,>(v: T) => v;\n"
    head = commit_files(repo, {"a.ts": text, "b.tsx": text}, "one")
    with SyntaxTrees() as trees:
        ts = trees.at(repo.git_dir, head, "a.ts")
        tsx = trees.at(repo.git_dir, head, "b.tsx")
    assert ts is not None and tsx is not None
    assert ts.blob_sha == tsx.blob_sha
    assert (ts.language, tsx.language) == ("typescript", "tsx")
    assert trees.parses == 2


def test_a_copied_blob_keeps_the_path_it_was_asked_for(repo: git.Repo) -> None:
    head = commit_files(repo, {"src/a.ts": "export const a = 1;\n", "lib/copy.ts": "export const a = 1;\n"}, "one")
    with SyntaxTrees() as trees:
        trees.at(repo.git_dir, head, "src/a.ts")
        copy = trees.at(repo.git_dir, head, "lib/copy.ts")
    assert copy is not None and copy.path == "lib/copy.ts"
    assert trees.parses == 1


def test_by_blob_sha(repo: git.Repo) -> None:
    head = commit_files(repo, {"src/a.js": "function f() {}\n"}, "one")
    sha = repo.commit(head).tree / "src/a.js"
    with SyntaxTrees() as trees:
        tree = trees.blob(repo.git_dir, sha.hexsha, "src/a.js")
    assert tree.language == "javascript" and tree.root.children[0].type == "function_declaration"


def test_lru_evicts_the_least_recently_used_blob(repo: git.Repo) -> None:
    head = commit_files(repo, {f"f{i}.ts": f"export const v{i} = {i};\n" for i in range(3)}, "one")
    with SyntaxTrees(capacity=2) as trees:
        trees.at(repo.git_dir, head, "f0.ts")
        trees.at(repo.git_dir, head, "f1.ts")
        trees.at(repo.git_dir, head, "f0.ts")  # f0 is now the most recent
        trees.at(repo.git_dir, head, "f2.ts")  # evicts f1
        assert trees.parses == 3
        trees.at(repo.git_dir, head, "f0.ts")
        assert trees.parses == 3
        trees.at(repo.git_dir, head, "f1.ts")
        assert trees.parses == 4


def test_missing_file_and_non_source_path(repo: git.Repo) -> None:
    head = commit_files(repo, {"src/a.ts": "export const a = 1;\n", "README.md": "# r\n",
                                "odd.ts/b.ts": "export const b = 1;\n"}, "one")
    with SyntaxTrees() as trees:
        assert trees.at(repo.git_dir, head, "README.md") is None
        with pytest.raises(MissingBlob):
            trees.at(repo.git_dir, head, "src/gone.ts")
        with pytest.raises(MissingBlob):
            trees.at(repo.git_dir, head, "odd.ts")  # a folder, not a file
        with pytest.raises(ValueError):
            trees.blob(repo.git_dir, "0" * 40, "README.md")
