"""Which two pin sets a re-check compares: the committed lock vs the working one, or what the user names."""

from __future__ import annotations

import subprocess
from pathlib import Path

from analyzer.errors import AnalyzerError
from analyzer.lock import Lock, RepoPin, load_lock, parse_lock


def _git(cwd: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True)


def lock_at_rev(lock_path: Path, rev: str) -> Lock:
    """The lock file as committed at `rev` of the git repo that holds it."""
    where = lock_path.resolve().parent
    shown = _git(where, ["show", f"{rev}:./{lock_path.name}"])
    if shown.returncode != 0:
        reason = (shown.stderr.strip().splitlines() or ["git failed"])[-1]
        raise AnalyzerError(f"cannot read {lock_path.name} at git revision {rev!r} in {where} ({reason}); "
                            "pass --from LOCKFILE or --from-commit NAME=SHA instead")
    return parse_lock(shown.stdout, Path(f"{rev}:{lock_path.name}"))


def apply_commits(pins: list[RepoPin], items: list[str] | None, option: str = "--from-commit") -> list[RepoPin]:
    """`NAME=SHA` overrides (full 40-hex shas), one error line per bad item."""
    by_name = {p.name: p for p in pins}
    for item in items or []:
        name, sep, sha = item.partition("=")
        if not sep or name not in by_name:
            raise AnalyzerError(f"{option} {item!r}: expected NAME=SHA with NAME one of {', '.join(by_name)}")
        sha = sha.lower()
        if len(sha) != 40 or any(c not in "0123456789abcdef" for c in sha):
            raise AnalyzerError(f"{option} {item!r}: the commit must be the full 40-hex sha")
        old = by_name[name]
        by_name[name] = RepoPin(name, old.url, sha, None, old.aliases)
    return list(by_name.values())


def old_pins(current: Lock, from_: str | None = None,
             from_commits: list[str] | None = None) -> tuple[list[RepoPin], str]:
    """The "before" pins and a description of where they came from.

    Default: the lock as committed at git HEAD. `--from` takes a lock file or a git revision;
    `--from-commit NAME=SHA` moves single pins of the base (the working lock when `--from` is absent)."""
    if from_ is not None:
        path = Path(from_)
        if path.is_file():
            base, origin = load_lock(path), f"lock file {path}"
        elif _looks_like_file(from_):
            raise AnalyzerError(f"--from {from_}: the file {path} is missing (pass an existing lock file, or a git "
                                f"revision of {current.path.name} such as HEAD~1)")
        else:
            base, origin = lock_at_rev(current.path, from_), f"{current.path.name} at {from_}"
    elif from_commits:
        base, origin = current, f"working {current.path.name}"
    else:
        base, origin = lock_at_rev(current.path, "HEAD"), f"{current.path.name} at HEAD"
    pins = [base.repos[name] if name in base.repos else pin for name, pin in current.repos.items()]
    if from_commits:
        pins = apply_commits(pins, from_commits)
        origin += " with " + ", ".join(from_commits)
    return pins, origin


def _looks_like_file(text: str) -> bool:
    """A name with a file suffix (`old.lock`) or a directory part that exists names a file, not a revision."""
    path = Path(text)
    has_suffix = bool(path.suffix) and not text.startswith(("HEAD", "@"))
    return has_suffix or (path.parent != Path(".") and path.parent.is_dir())


def pins_label(pins: list[RepoPin]) -> str:
    """Short shas in lock order, for file names: `b150a551-b4f29368`."""
    return "-".join(p.commit[:8] for p in pins)
