"""Syncing pins into the cache, with real git repos built in tmp dirs (no network)."""

from __future__ import annotations

import io
from pathlib import Path

import git
import pytest
from rich.console import Console
from srcfixtures import Upstream, make_upstream, move_tag

from analyzer.lock import RepoPin
from analyzer.paths import checkout_dir
from analyzer.sources import (
    DirtyWorkTree,
    MissingCommit,
    MovedTag,
    RefNotFound,
    SourceError,
    UnreachableSource,
    ensure_commit,
    open_repo,
    resolve_ref,
    sync_pin,
)
from analyzer.sources.gitrun import git_reason, is_shallow
from analyzer.sources.progress import RichGitProgress, git_progress, parse_progress_line


@pytest.fixture
def up(tmp_path: Path) -> Upstream:
    return make_upstream(tmp_path / "upstream")


def pin(up: Upstream, commit: str, ref: str | None = None, url: str | None = None) -> RepoPin:
    return RepoPin("up", url or str(up.path), commit, ref)


def git_config_env(monkeypatch: pytest.MonkeyPatch, **settings: str) -> None:
    """Per-process git config (GIT_CONFIG_COUNT), as a user's ~/.gitconfig would set it."""
    monkeypatch.setenv("GIT_CONFIG_COUNT", str(len(settings)))
    for i, (key, value) in enumerate(settings.items()):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{i}", key)
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{i}", value)


def head_of(path: Path) -> tuple[str, bool]:
    repo = git.Repo(path)
    return repo.head.commit.hexsha, repo.head.is_detached


def test_fresh_sync_fetches_only_the_commit_and_detaches(up: Upstream, cache_dir: Path) -> None:
    result = sync_pin(pin(up, up.c1, "v1"), cache_dir)
    dest = checkout_dir(cache_dir, "up")
    assert result.path == dest and result.network and result.action == "fetched (shallow)"
    assert head_of(dest) == (up.c1, True)
    assert (dest / "src/greet.ts").exists() and not (dest / "src/bye.ts").exists()
    repo = git.Repo(dest)
    assert is_shallow(repo)
    assert up.c0 not in {c.hexsha for c in repo.iter_commits(all=True)}  # no history beyond the pin
    assert not [p for p in dest.parent.iterdir() if p.name.startswith(".")]  # no partial dirs left


def test_resync_with_commit_present_needs_no_network(up: Upstream, cache_dir: Path, tmp_path: Path) -> None:
    sync_pin(pin(up, up.c1, "v1"), cache_dir)
    up.path.rename(tmp_path / "gone")  # the source no longer exists: any fetch would fail
    again = sync_pin(pin(up, up.c1, "v1"), cache_dir)
    assert (again.network, again.action) == (False, "unchanged")
    assert head_of(checkout_dir(cache_dir, "up")) == (up.c1, True)


def test_resync_restores_detached_head_offline(up: Upstream, cache_dir: Path, tmp_path: Path) -> None:
    sync_pin(pin(up, up.c2, "main"), cache_dir)
    dest = checkout_dir(cache_dir, "up")
    git.Repo(dest).git.checkout("-q", "-b", "local")  # someone attached a branch in the cache
    up.path.rename(tmp_path / "gone")
    again = sync_pin(pin(up, up.c2, "main"), cache_dir)
    assert (again.network, again.action) == (False, "checked out")
    assert head_of(dest) == (up.c2, True)


def test_sync_from_file_url(up: Upstream, cache_dir: Path) -> None:
    result = sync_pin(pin(up, up.c2, "v2-light", url=up.path.as_uri()), cache_dir)
    assert result.url.startswith("file://")
    assert head_of(checkout_dir(cache_dir, "up")) == (up.c2, True)


def test_resolve_ref_peels_annotated_tags(up: Upstream, cache_dir: Path) -> None:
    repo = git.Repo.init(cache_dir / "probe")
    repo.create_remote("origin", str(up.path))
    annotated = resolve_ref(repo, "v1")
    assert annotated is not None and annotated.kind == "tag" and annotated.annotated
    assert annotated.commit == up.c1 != up.repo.tags["v1"].tag.hexsha  # the commit, not the tag object
    light = resolve_ref(repo, "v2-light")
    assert light is not None and (light.commit, light.annotated) == (up.c2, False)
    branch = resolve_ref(repo, "dev")
    assert branch is not None and (branch.kind, branch.commit) == ("branch", up.c3)
    sha = resolve_ref(repo, up.c0[:10])
    assert sha is not None and (sha.kind, sha.commit) == ("commit", up.c0[:10])
    assert resolve_ref(repo, "no-such-ref") is None


def test_moved_tag_is_refused_naming_both_commits(up: Upstream, cache_dir: Path) -> None:
    move_tag(up, "v1", up.c3)
    with pytest.raises(MovedTag) as info:
        sync_pin(pin(up, up.c1, "v1"), cache_dir)
    message = str(info.value)
    assert up.c1 in message and up.c3 in message and "analyze pin up v1" in message
    assert not checkout_dir(cache_dir, "up").exists()


def test_moved_tag_is_refused_when_the_cache_saw_the_old_tag(up: Upstream, cache_dir: Path) -> None:
    sync_pin(pin(up, up.c2, "main"), cache_dir)
    move_tag(up, "v1", up.c3)
    with pytest.raises(MovedTag):
        sync_pin(pin(up, up.c1, "v1"), cache_dir)  # c1 is not cached, so the source is asked
    assert head_of(checkout_dir(cache_dir, "up")) == (up.c2, True)  # the cache was left as it was


def test_moved_branch_is_only_a_note(up: Upstream, cache_dir: Path) -> None:
    result = sync_pin(pin(up, up.c2, "dev"), cache_dir)
    assert head_of(checkout_dir(cache_dir, "up")) == (up.c2, True)
    (note,) = result.notes
    assert "dev" in note and up.c3[:12] in note


def test_commit_the_source_lacks(up: Upstream, cache_dir: Path) -> None:
    missing = "f" * 40
    with pytest.raises(MissingCommit) as info:
        sync_pin(pin(up, missing), cache_dir)
    assert missing in str(info.value) and "--source up=" in str(info.value)
    assert not checkout_dir(cache_dir, "up").exists()


def test_null_commit_is_not_in_the_source_without_a_fetch(up: Upstream, cache_dir: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import analyzer.sources.sync as sync_module

    fetches: list[list[str]] = []
    real = sync_module.run_git

    def counting(repo: git.Repo, args: list[str], **kw: object) -> str:
        if args and args[0] == "fetch":
            fetches.append(list(args))
        return real(repo, args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sync_module, "run_git", counting)
    null = "0" * 40
    with pytest.raises(MissingCommit) as info:
        sync_pin(pin(up, null), cache_dir)
    assert f"up: commit {null} is not in {up.path}" in str(info.value)
    assert fetches == []


def test_ref_the_source_lacks(up: Upstream, cache_dir: Path) -> None:
    with pytest.raises(RefNotFound) as info:
        sync_pin(pin(up, up.c1, "v9"), cache_dir)
    assert "'v9'" in str(info.value)


def test_sha_ref_must_match_commit(up: Upstream, cache_dir: Path) -> None:
    assert sync_pin(pin(up, up.c1, up.c1[:8]), cache_dir).commit == up.c1
    with pytest.raises(SourceError, match="make ref and commit agree"):
        sync_pin(pin(up, up.c2, up.c1[:8]), cache_dir / "other")


def test_full_fetch_when_server_refuses_unadvertised_sha(up: Upstream, cache_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    git_config_env(monkeypatch, **{"protocol.version": "0"})  # v0 servers only give advertised tips
    result = sync_pin(pin(up, up.c0), cache_dir)  # c0 is no ref's tip
    assert result.action == "fetched (full)"
    assert head_of(checkout_dir(cache_dir, "up")) == (up.c0, True)


@pytest.mark.parametrize("change", ["modify", "untracked", "staged"])
def test_dirty_cached_tree_is_refused(up: Upstream, cache_dir: Path, change: str) -> None:
    sync_pin(pin(up, up.c1, "v1"), cache_dir)
    dest = checkout_dir(cache_dir, "up")
    if change == "modify":
        (dest / "src/greet.ts").write_text("changed\n")
    else:
        (dest / "notes.txt").write_text("mine\n")
        if change == "staged":
            git.Repo(dest).index.add(["notes.txt"])
    with pytest.raises(DirtyWorkTree) as info:
        sync_pin(pin(up, up.c2, "v2-light"), cache_dir)
    message = str(info.value)
    assert str(dest) in message and "reset --hard" in message and "analyze sync up" in message
    assert head_of(dest) == (up.c1, True)  # untouched


def test_unreachable_source_is_one_line_with_reason_and_way_out(cache_dir: Path, tmp_path: Path) -> None:
    url = str(tmp_path / "no-such-repo")
    with pytest.raises(UnreachableSource) as info:
        sync_pin(RepoPin("up", url, "a" * 40, "v1"), cache_dir)
    message = str(info.value)
    assert "\n" not in message
    assert url in message and "does not appear to be a git repository" in message
    assert "--source up=" in message and "ANALYZER_SOURCE_UP" in message
    assert not checkout_dir(cache_dir, "up").exists()


def test_insteadof_rewrites_still_apply(up: Upstream, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git_config_env(monkeypatch, **{f"url.{up.path.as_uri()}/.insteadOf": "https://git.example.invalid/"})
    result = sync_pin(pin(up, up.c1, "v1", url="https://git.example.invalid/"), cache_dir)
    assert result.url == "https://git.example.invalid/"  # passed to git unchanged
    assert head_of(checkout_dir(cache_dir, "up")) == (up.c1, True)


def test_stale_non_repo_cache_dir_is_refused(up: Upstream, cache_dir: Path) -> None:
    dest = checkout_dir(cache_dir, "up")
    dest.mkdir(parents=True)
    (dest / "junk").write_text("x")
    with pytest.raises(SourceError, match="not a git repository"):
        sync_pin(pin(up, up.c1, "v1"), cache_dir)


def test_open_repo_reads_objects_without_checkout(up: Upstream, cache_dir: Path, tmp_path: Path) -> None:
    repo = open_repo(cache_dir, pin(up, up.c1, "v1"))  # syncs when absent
    assert repo.commit(up.c1).tree["src/greet.ts"].data_stream.read().startswith(b"export const greet")
    # another commit: fetched into the same cache, work tree left at the pin
    c3 = ensure_commit(repo, up.c3)
    assert c3.hexsha == up.c3 and c3.tree["src/dev.ts"].data_stream.read() == b"export const dev = true;\n"
    assert head_of(checkout_dir(cache_dir, "up")) == (up.c1, True)
    up.path.rename(tmp_path / "gone")
    assert open_repo(cache_dir, pin(up, up.c3), fetch=False).commit(up.c3).hexsha == up.c3  # offline


def test_open_repo_without_fetch_says_to_sync(up: Upstream, cache_dir: Path) -> None:
    with pytest.raises(SourceError, match="run 'analyze sync up'"):
        open_repo(cache_dir, pin(up, up.c1), fetch=False)
    sync_pin(pin(up, up.c1), cache_dir)
    repo = git.Repo(checkout_dir(cache_dir, "up"))
    repo.delete_remote(repo.remotes.origin)
    with pytest.raises(SourceError, match="no origin"):
        ensure_commit(repo, up.c3)


def test_open_repo_uses_context_source_override(up: Upstream, cache_dir: Path) -> None:
    class Ctx:
        """The two things open_repo uses from a CliContext."""

        def __init__(self, cache: Path) -> None:
            self.cache_dir = cache

        def source_for(self, name: str, default_url: str) -> str:
            return str(up.path) if name == "up" else default_url

    repo = open_repo(Ctx(cache_dir), RepoPin("up", "https://git.example.invalid/nowhere", up.c2))
    assert repo.commit(up.c2).hexsha == up.c2


class Recorder:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, text: str) -> None:
        self.lines.append(text)


def test_progress_lines_reach_the_sink(up: Upstream, cache_dir: Path) -> None:
    sink = Recorder()
    sync_pin(pin(up, up.c1, "v1"), cache_dir, progress=sink)
    parsed = [p for p in map(parse_progress_line, sink.lines) if p]
    assert parsed, sink.lines
    assert all(0 <= cur <= total for _, cur, total in parsed)


def test_progress_line_parsing_and_quiet_pipes() -> None:
    assert parse_progress_line("Receiving objects:  45% (9/20), 1.2 MiB | 2 MiB/s") == ("Receiving objects", 9, 20)
    assert parse_progress_line("remote: Counting objects: 100% (3/3), done.") == ("Counting objects", 3, 3)
    assert parse_progress_line("From /tmp/x") is None
    with git_progress(Console(), "up", enabled=False) as sink:
        assert sink is None


def test_progress_bar_on_a_terminal() -> None:
    out = io.StringIO()
    with git_progress(Console(file=out, force_terminal=True, width=100), "up", enabled=True) as sink:
        assert isinstance(sink, RichGitProgress)
        sink.line("Receiving objects:  50% (5/10)")
        sink.line("Receiving objects: 100% (10/10), done.")
        sink.line("Resolving deltas:  50% (1/2)")
        tasks = {t.description: (t.completed, t.total) for t in sink.progress.tasks}
    assert tasks == {"up: receiving objects": (10, 10), "up: resolving deltas": (1, 2)}


def test_git_reason_prefers_fatal_line() -> None:
    err = "warning: x\nerror: something\nfatal: the real reason\n"
    assert git_reason(err) == "the real reason"
    assert git_reason("only this\n") == "only this"
