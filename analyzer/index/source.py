"""Which files of a repository at a commit get indexed, read straight from git (no work tree).

Listing uses one `git ls-tree -r -l -z`; blobs are read through git's persistent `cat-file --batch`
process (one subprocess for the whole run, not one per file).

Skip rules (each skipped file is counted under its reason):
- `not-source`: no TS/JS grammar for the extension (see `analyzer.parse.languages`); symlinks, submodules.
- `dependencies`: anything under `node_modules/`, `bower_components/`, `jspm_packages/`.
- `build-output`: under `dist/`, `build/`, `coverage/`, `.next/`, `.nuxt/`, `.output/`, `.turbo/`,
  `.svelte-kit/`, `storybook-static/`, `.nyc_output/`; and under `lib/` only when `lib` is a build
  output, i.e. the `package.json` beside it points into `lib/` (main/module/types/exports…) *and* a
  sibling `src/` folder holds the sources. A package whose own code lives in `lib/` keeps it.
- `vendored-bundle`: `*.min.js`-style files, `*.bundle.js`, JavaScript under `vendor/`, `vendors/`,
  `third_party/` (vendored TypeScript *sources* such as a vendored framework package are kept: calls
  into them are part of the request path), and minified JS detected by content (`looks_minified`).
- `too-large`: blobs over 1 MB.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

import git

from analyzer.parse.languages import language_for_path

MAX_SOURCE_BYTES = 1_000_000
DEPENDENCY_DIRS = frozenset({"node_modules", "bower_components", "jspm_packages"})
BUILD_DIRS = frozenset({"dist", "build", "coverage", ".next", ".nuxt", ".output", ".turbo", ".svelte-kit",
                        "storybook-static", ".nyc_output"})
VENDOR_DIRS = frozenset({"vendor", "vendors", "third_party", "third-party"})
BUNDLE_NAME = re.compile(r"(\.min\.[cm]?js|[.-]bundle\.[cm]?js|\.umd\.[cm]?js)$", re.IGNORECASE)
JS_EXTENSIONS = (".js", ".mjs", ".cjs", ".jsx")
MANIFEST_FIELDS = ("main", "module", "types", "typings", "exports", "bin", "browser")


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # repo-relative, forward slashes
    blob_sha: str
    size: int


@dataclass(slots=True)
class SourceScan:
    files: list[SourceFile] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # reason → count


class BlobReader:
    """Reads blobs through one persistent `git cat-file --batch` process.

    Commands run with the git dir as working directory, so bare mirrors without a `config` file (which
    GitPython mistakes for work trees) work as well as ordinary clones.
    """

    def __init__(self, repo: git.Repo | str) -> None:
        self.git = git.Git(repo if isinstance(repo, str) else repo.git_dir)

    def read(self, blob_sha: str) -> bytes:
        _sha, _kind, _size, data = self.git.get_object_data(blob_sha)
        return data

    def close(self) -> None:
        self.git.clear_cache()  # ends the cat-file processes

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def list_sources(repo: git.Repo, commit: str) -> list[SourceFile]:
    """The indexable TS/JS files of `repo` at `commit`, sorted by path."""
    return scan_sources(repo, commit).files


def scan_sources(repo: git.Repo, commit: str, reader: BlobReader | None = None) -> SourceScan:
    """Like `list_sources`, plus how many files were skipped and why."""
    own_reader = reader is None
    reader = reader or BlobReader(repo)
    try:
        return _scan(reader, commit)
    finally:
        if own_reader:
            reader.close()


def _scan(reader: BlobReader, commit: str) -> SourceScan:
    entries = _ls_tree(reader, commit)
    manifests = {path: sha for path, (_mode, kind, sha, _size) in entries.items()
                 if kind == "blob" and (path == "package.json" or path.endswith("/package.json"))}
    dirs = {path.rsplit("/", 1)[0] for path in entries if "/" in path}
    lib_verdicts: dict[str, bool] = {}
    scan = SourceScan()
    for path, (mode, kind, sha, size) in sorted(entries.items()):
        if kind != "blob" or mode == "120000" or language_for_path(path) is None:
            scan.skipped["not-source"] += 1
            continue
        reason = skip_reason(path, size)
        if reason is None and "/lib/" in f"/{path}":
            reason = _lib_reason(reader, path, manifests, dirs, lib_verdicts)
        if reason is not None:
            scan.skipped[reason] += 1
            continue
        scan.files.append(SourceFile(path=path, blob_sha=sha, size=size))
    return scan


def skip_reason(path: str, size: int) -> str | None:
    """The path-and-size part of the skip rules (no repository context needed)."""
    parts = path.split("/")
    dirs = parts[:-1]
    if any(d in DEPENDENCY_DIRS for d in dirs):
        return "dependencies"
    if any(d in BUILD_DIRS for d in dirs):
        return "build-output"
    name = parts[-1]
    if BUNDLE_NAME.search(name):
        return "vendored-bundle"
    if name.lower().endswith(JS_EXTENSIONS) and any(d in VENDOR_DIRS for d in dirs):
        return "vendored-bundle"
    if size > MAX_SOURCE_BYTES:
        return "too-large"
    return None


def looks_minified(path: str, data: bytes) -> bool:
    """Generated/minified JavaScript: very long lines near the top (TS sources are never skipped)."""
    if not path.lower().endswith(JS_EXTENSIONS):
        return False
    head = data[:65536]
    lines = head.split(b"\n")
    if not lines:
        return False
    longest = max(len(line) for line in lines)
    return longest > 5000 or (len(head) > 4096 and len(head) / len(lines) > 300)


def _lib_reason(reader: BlobReader, path: str, manifests: dict[str, str], dirs: set[str],
                verdicts: dict[str, bool]) -> str | None:
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part != "lib":
            continue
        base = "/".join(parts[:i])
        if base not in verdicts:
            verdicts[base] = _lib_is_build_output(reader, base, manifests, dirs)
        if verdicts[base]:
            return "build-output"
    return None


def _lib_is_build_output(reader: BlobReader, base: str, manifests: dict[str, str], dirs: set[str]) -> bool:
    prefix = f"{base}/" if base else ""
    manifest_sha = manifests.get(f"{prefix}package.json")
    if manifest_sha is None or f"{prefix}src" not in dirs:
        return False
    try:
        manifest = json.loads(reader.read(manifest_sha))
    except (ValueError, git.GitCommandError):
        return False
    if not isinstance(manifest, dict):
        return False
    pointed = json.dumps([manifest.get(k) for k in MANIFEST_FIELDS])
    return bool(re.search(r'(^|["/.])lib/', pointed))


def _ls_tree(reader: BlobReader, commit: str) -> dict[str, tuple[str, str, str, int]]:
    out = reader.git.ls_tree("-r", "-l", "-z", commit, strip_newline_in_stdout=False)
    entries: dict[str, tuple[str, str, str, int]] = {}
    for record in out.split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        bits = meta.split()
        if len(bits) != 4:
            continue
        mode, kind, sha, size = bits
        entries[path] = (mode, kind, sha, int(size) if size.isdigit() else 0)
    return entries
