"""Which analyzer produced a record: the version and the git commit of the checkout it runs from."""

from __future__ import annotations

from pathlib import Path

from analyzer.records.i18n import sentences


def analyzer_git(lang: str = "en") -> str:
    """Short sha (+ a note when the checkout has changes), or a note that this is not a git checkout."""
    s = sentences("record", lang)
    try:
        import git

        repo = git.Repo(Path(__file__).resolve().parent, search_parent_directories=True)
        return repo.head.commit.hexsha[:12] + (s["git.dirty"] if repo.is_dirty() else "")
    except Exception:  # not a checkout, or git missing: the record says so instead of failing
        return s["git.none"]
