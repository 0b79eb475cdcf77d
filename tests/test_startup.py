"""Start-up stays light: building the parser (what --help, --version and usage errors need) imports no heavy
library. A regression guard on sys.modules in a fresh interpreter, so it needs no timing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "networkx", "git", "matplotlib", "httpx", "tree_sitter", "pygments", "jinja2")

PROBE = """
import json, sys
{body}
heavy = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in {heavy!r}))
print(json.dumps(heavy))
"""


def _heavy_after(body: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    code = PROBE.format(body=body, heavy=heavy)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_cli_and_build_parser_is_light() -> None:
    assert _heavy_after("import analyzer.cli\nanalyzer.cli.build_parser()") == []


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["trace", "--help"], ["attention", "--help"],
                                  ["kv-size", "--help"], ["trace", "--no-such-option"], []])
def test_help_version_and_usage_errors_import_nothing_heavy(argv: list[str]) -> None:
    body = ("import contextlib, io\nimport analyzer.cli\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            f"    try:\n        analyzer.cli.main({argv!r})\n    except SystemExit:\n        pass")
    assert _heavy_after(body) == []


def test_importing_the_library_face_is_light() -> None:
    assert _heavy_after("import analyzer.api\nfrom analyzer.api import *  # noqa: F403") == []


def test_attention_dtype_choices_match_the_model_config() -> None:
    from analyzer.attention.config import DTYPES
    from analyzer.cli.commands.attention import DTYPE_NAMES

    assert tuple(DTYPES) == DTYPE_NAMES


def test_lazy_attention_package_still_exports_its_api() -> None:
    import analyzer.attention as attention

    for name in attention.__all__:
        assert getattr(attention, name) is not None
    with pytest.raises(AttributeError):
        attention.no_such_name  # noqa: B018


def test_store_knows_the_graph_format_without_importing_the_builder() -> None:
    from analyzer.graph import build, store

    assert store.GRAPH_FORMAT == build.GRAPH_FORMAT


def test_a_warm_graph_load_imports_neither_the_indexer_nor_git_nor_networkx(tmp_path) -> None:
    """The warm path of every graph query: key + stored view, no GitPython, tree-sitter, resolver or networkx."""
    import networkx as nx

    import analyzer
    from analyzer.graph.store import graph_key, save_graph
    from analyzer.lock import load_lock

    lock_path = tmp_path / "repos.lock"
    lock_path.write_text('[repos.x]\nurl = "/nowhere"\ncommit = "' + "a" * 40 + '"\n')
    g = nx.MultiDiGraph()
    g.add_edge("x:a.ts:f", "x:b.ts:g", kind="direct", line=3)
    g.graph.update(format=2, analyzer_version=analyzer.__version__)
    save_graph(tmp_path / "cache", graph_key(list(load_lock(lock_path).repos.values())), g)
    body = f"""
from analyzer.api import open_analysis, open_session
a = open_analysis(open_session({str(lock_path)!r}, cache_dir={str(tmp_path / 'cache')!r}))
assert a.from_cache and list(a.view.predecessors("x:b.ts:g")) == ["x:a.ts:f"]
assert [d["line"] for _, _, d in a.view.in_edges("x:b.ts:g", data=True)] == [3]
"""
    heavy = ("git", "tree_sitter", "networkx", "analyzer.resolve", "analyzer.index", "analyzer.parse")
    assert _heavy_after(body, heavy) == []


def test_the_ref_check_of_every_warm_trace_imports_no_gitpython() -> None:
    """`trace` asks `analyzer.sources.refcheck` whether the lock's ref still names its commit; importing that
    one submodule must not load the rest of `analyzer.sources` (GitPython) — its exports load on first use."""
    assert _heavy_after("import analyzer.sources.refcheck") == []
    assert "git" in _heavy_after("from analyzer.sources import open_repo")  # the exports still work
