"""repos.lock validation: every problem gets one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.errors import LockError
from analyzer.lock import load_lock, parse_lock

ROOT = Path(__file__).resolve().parent.parent
GOOD = """
[repos.a]
url = "https://example.invalid/a"
ref = "v1"
commit = "0123456789abcdef0123456789abcdef01234567"
aliases = ["@old/a"]

[trace]
from = "X"
to = "Y"
"""


def problems(text: str) -> list[str]:
    with pytest.raises(LockError) as info:
        parse_lock(text, Path("repos.lock"))
    return info.value.problems


def test_shipped_lock_is_valid() -> None:
    lock = load_lock(ROOT / "repos.lock")
    assert set(lock.repos) == {"dsh", "pi"}
    assert lock.repos["pi"].aliases == ("@mariozechner/pi-ai",)
    assert (lock.trace_from, lock.trace_to) == ("SystemPromptProjection", "parseChunkUsage")


def test_good_lock_parses() -> None:
    lock = parse_lock(GOOD, Path("repos.lock"))
    assert lock.repos["a"].ref == "v1" and lock.repos["a"].commit.startswith("0123")


def test_missing_unknown_and_bad_commit_each_get_a_line() -> None:
    text = '[repos.a]\nurl = "u"\ncommit = "abc"\ncolour = "red"\n[repos.b]\nurl = "u"\n'
    found = problems(text)
    assert any("repos.a.commit" in p and "40" in p for p in found)
    assert any("repos.a.colour" in p and "unknown key" in p for p in found)
    assert any("repos.b.commit" in p and "missing" in p for p in found)
    assert len(found) == 3


def test_duplicate_table_named_with_both_lines() -> None:
    text = GOOD + '\n[repos.a]\nurl = "x"\ncommit = "' + "1" * 40 + '"\n'
    (line,) = problems(text)
    assert "duplicate" in line and "repos.a" in line and "first at line 2" in line


def test_duplicate_names_ignoring_case() -> None:
    text = GOOD.replace("[trace]", '[repos.A]\nurl = "x"\ncommit = "' + "1" * 40 + '"\n[trace]')
    assert any("duplicate name" in p for p in problems(text))


def test_malformed_toml() -> None:
    (line,) = problems("[repos.a\nurl=")
    assert "malformed TOML" in line


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LockError) as info:
        load_lock(tmp_path / "nope.lock")
    assert "not found" in str(info.value)
