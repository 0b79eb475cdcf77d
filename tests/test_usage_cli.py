"""Reconciliation on real git repos built in tmp dirs from the fixture files: the replay through
`analyzer.api.reconcile`; `analyze reconcile` for its listing, its text, `--json` and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from test_usage_fixtures import DSH_FILES, PI_FILES, PI_OLD_FILES

from analyzer.api import ReconcileOptions, open_session, reconcile
from analyzer.cli import main
from analyzer.errors import AnalyzerError
from analyzer.usage.indexed import IndexedFunctionLocator
from analyzer.usage.scenarios import shipped_names


def make_repo(path: Path, *trees: dict[str, str]) -> tuple[str, list[str]]:
    """A git repo with one commit per file tree (each replaces the previous); returns (dir, shas)."""
    repo = git.Repo.init(path)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "t")
        cw.set_value("user", "email", "t@example.com")
    shas = []
    for files in trees:
        for old in list(repo.git.ls_files().splitlines()):
            repo.index.remove([old], working_tree=True)
        for rel, text in files.items():
            p = path / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        repo.index.add(list(files))
        shas.append(repo.index.commit(f"tree {len(shas)}").hexsha)
    return str(path), shas


@pytest.fixture
def repos(tmp_path: Path) -> dict[str, tuple[str, list[str]]]:
    return {"pi": make_repo(tmp_path / "pi", PI_OLD_FILES, PI_FILES), "dsh": make_repo(tmp_path / "dsh", DSH_FILES)}


def write_lock(tmp_path: Path, repos: dict[str, tuple[str, list[str]]]) -> Path:
    lock = tmp_path / "repos.lock"
    lock.write_text("".join(f'[repos.{n}]\nurl = "https://example.com/{n}"\ncommit = "{shas[-1]}"\n\n'
                            for n, (_, shas) in repos.items()), encoding="utf-8")
    return lock


def args(tmp_path: Path, repos: dict, *extra: str) -> list[str]:
    out = ["--lock", str(write_lock(tmp_path, repos)), "reconcile"]
    for name, (d, _) in repos.items():
        out += ["--repo-dir", f"{name}={d}"]
    return out + list(extra)


def test_list_shows_shipped_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reconcile", "--list"]) == 0
    assert capsys.readouterr().out.split() == shipped_names()
    assert {"deepseek-10k", "openai-cached-10k", "both-fields-10k", "cold-10k", "multi-turn-10k"} <= set(
        shipped_names())


def replay(tmp_path: Path, repos: dict, keep_lock: bool = False, **options: object):
    """`api.reconcile` over the fixture repos (read from their dirs), at the lock's pins unless `at` moves them;
    the lock is written afresh unless `keep_lock`."""
    lock = tmp_path / "repos.lock" if keep_lock else write_lock(tmp_path, repos)
    session = open_session(lock, cache_dir=tmp_path / "cache", environ={})
    return reconcile(session, ReconcileOptions(repo_dirs={name: d for name, (d, _) in repos.items()},
                                               **options))  # type: ignore[arg-type]


def test_the_ledger_at_the_lock_pins_cites_each_value_and_every_invariant_holds(tmp_path: Path, repos: dict) -> None:
    result = replay(tmp_path, repos)
    assert result.ok and sorted(result.document["routes"]) == ["deepseek-native", "pi-ai"]
    ledger = result.document["routes"]["pi-ai"]
    pi = {f["name"]: f for f in ledger["requests"][0]["pi_usage"]}
    assert pi["cacheRead"]["value"] == 8960 and pi["cacheRead"]["site"] == "pi:packages/ai/src/api/completions.ts:14"
    assert ledger["cache_hit_percent"] == {"value": "90", "site": "dsh:packages/client/ui/src/stats.ts:11"}
    assert ledger["checks"] and all(check["holds"] for check in ledger["checks"])


def test_ledger_text_at_the_lock_pins(tmp_path: Path, repos: dict, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args(tmp_path, repos)) == 0
    out = capsys.readouterr().out
    assert "cacheRead" in out and "8960" in out
    assert "← pi:packages/ai/src/api/completions.ts:14" in out  # cacheRead: cached
    assert "5. dsh cache-hit % (cacheHitPercent): '90'" in out
    assert "✗" not in out and "all invariants hold" in out


def test_at_replays_another_commit_without_editing_the_lock(tmp_path: Path, repos: dict) -> None:
    old = repos["pi"][1][0]
    lock_before = write_lock(tmp_path, repos).read_text()
    result = replay(tmp_path, repos, at={"pi": old})
    assert result.document["upstreams"]["pi"]["commit"] == old
    ledger = result.document["routes"]["pi-ai"]
    assert ledger["upstreams"]["pi"]["commit"] == old
    pi = {f["name"]: f["value"] for f in ledger["requests"][0]["pi_usage"]}
    assert (pi["input"], pi["cacheRead"], pi["output"]) == (10000, 0, 700)
    assert ledger["ok"] is False and not result.ok
    assert (tmp_path / "repos.lock").read_text() == lock_before


def test_json_and_exit_code_of_a_failing_replay(tmp_path: Path, repos: dict,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    old = repos["pi"][1][0]
    assert main(args(tmp_path, repos, "--json", "--at", f"pi={old}")) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc == replay(tmp_path, repos, at={"pi": old}).document


@pytest.mark.parametrize("extra, message", [
    (["no-such-scenario"], "no scenario named 'no-such-scenario'"),
    (["--at", "pi"], "--at 'pi': expected NAME=VALUE"),
    (["--at", "nope=abc"], "unknown upstream 'nope'"),
    (["--at", "pi=0123456789abcdef0123456789abcdef01234567"], "is not a commit in"),
])
def test_bad_input_is_one_error_line(tmp_path: Path, repos: dict, capsys: pytest.CaptureFixture[str],
                                     extra: list[str], message: str) -> None:
    assert main(args(tmp_path, repos, *extra)) == 3
    err = capsys.readouterr().err
    assert message in err and err.startswith("error: ") and "Traceback" not in err


def test_unsupported_upstream_syntax_fails_loudly(tmp_path: Path) -> None:
    broken = dict(PI_FILES)
    broken["packages/ai/src/pricing.ts"] = PI_FILES["packages/ai/src/pricing.ts"].replace(
        "\treturn usage.cost;", "\tlabel: for (;;) { break label; }\n\treturn usage.cost;")
    repos = {"pi": make_repo(tmp_path / "pi", broken), "dsh": make_repo(tmp_path / "dsh", DSH_FILES)}
    with pytest.raises(AnalyzerError, match="unsupported syntax labeled_statement at pi:packages/ai/src/pricing.ts:13"):
        replay(tmp_path, repos)


def test_locator_reports_ambiguity_and_resolves_esm_imports(tmp_path: Path) -> None:
    files = dict(PI_FILES)
    files["packages/ai/src/other.ts"] = "export function parseChunkUsage() { return 1 }\n"
    d, (sha,) = make_repo(tmp_path / "amb", files)
    loc = IndexedFunctionLocator(git.Repo(d), sha, "pi", tmp_path / "cache")
    with pytest.raises(Exception, match="declared in 2 places"):
        loc.find("parseChunkUsage", search_under=["packages/ai/src"])
    assert loc.find("parseChunkUsage", path_hint="packages/ai/src/other.ts").site.line == 1
    assert loc.resolve_import("packages/ai/src/api/completions.ts", "../pricing.js") == "packages/ai/src/pricing.ts"
    assert loc.resolve_import("packages/ai/src/api/completions.ts", "zod") is None
    with pytest.raises(Exception, match="no top-level declaration of nothingHere"):
        loc.find("nothingHere", search_under=["packages"])


def test_default_reads_the_synced_cache(tmp_path: Path, repos: dict) -> None:
    """Without repo dirs the repos come from the cache, synced from the session's sources (local paths: no
    network)."""
    old = repos["pi"][1][0]
    session = open_session(write_lock(tmp_path, repos), cache_dir=tmp_path / "cache", environ={},
                           sources={"pi": repos["pi"][0], "dsh": repos["dsh"][0]})
    result = reconcile(session, ReconcileOptions(at={"pi": old}))
    assert not result.ok
    assert result.document["upstreams"] == {"dsh": {"commit": repos["dsh"][1][-1]}, "pi": {"commit": old}}
    assert (tmp_path / "cache").is_dir()


def test_sources_on_the_command_line_reach_the_sync(tmp_path: Path, repos: dict,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    old = repos["pi"][1][0]
    argv = ["--lock", str(write_lock(tmp_path, repos)), "--cache-dir", str(tmp_path / "cache"),
            "--source", f"pi={repos['pi'][0]}", "--source", f"dsh={repos['dsh'][0]}",
            "reconcile", "--json", "--at", f"pi={old}"]
    assert main(argv) == 1
    assert json.loads(capsys.readouterr().out)["upstreams"]["pi"] == {"commit": old}
    assert (tmp_path / "cache").is_dir()
