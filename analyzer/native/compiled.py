"""Which analyzer modules are compiled, and where a compiled build for the current sources lives.

A build is keyed by the sources it was made from (and the interpreter's ABI), so the loader can tell in a
millisecond whether the binaries on disk belong to the .py files on disk. Kept free of heavy imports:
`analyzer/__init__.py` installs the loader on every start-up.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Index and graph hot paths: the fact records, the extractor's walk, type texts, and every resolver pass
# (not the cache codec, graph assembly or the view: measured no faster compiled). Not `resolve.edges`
# either: a compiled `Edge` hands graph assembly a fresh int per number and a dict presized for more keys
# (632 against 464 bytes), 194,000 times, which kept about 65 MB more alive for the stored graph. Each must pass
# `mypy` as it is (mypyc compiles what the annotations say and checks them at run time).
COMPILED: tuple[str, ...] = (
    "analyzer.index.model",
    "analyzer.index.types",
    "analyzer.parse.extract",
    "analyzer.parse.reader",
    "analyzer.parse.sites",
    "analyzer.parse.surface",
    "analyzer.resolve.calls",
    "analyzer.resolve.construct",
    "analyzer.resolve.contextual",
    "analyzer.resolve.declarations",
    "analyzer.resolve.expressions",
    "analyzer.resolve.functypes",
    "analyzer.resolve.hierarchy",
    "analyzer.resolve.objectliterals",
    "analyzer.resolve.modules",
    "analyzer.resolve.program",
    "analyzer.resolve.receivers",
    "analyzer.resolve.registries",
    "analyzer.resolve.rules",
    "analyzer.resolve.stored",
    "analyzer.resolve.symbols",
    "analyzer.resolve.typed",
    "analyzer.resolve.typetext",
    "analyzer.resolve.valueflow",
    "analyzer.resolve.functionvalues",
    "analyzer.resolve.valuesites",
)
NATIVE_ENV = "ANALYZER_NATIVE"  # "0": never load compiled modules (pure Python)
NATIVE_DIR_ENV = "ANALYZER_NATIVE_DIR"  # where builds live (default: the user cache, not a run's cache dir)
MANIFEST = "build.json"


def native_root() -> Path:
    """`$ANALYZER_NATIVE_DIR`, else `$XDG_CACHE_HOME/analyzer/native`, else `~/.cache/analyzer/native`.

    Machine-wide rather than under `$ANALYZER_CACHE_DIR`: a build belongs to the installed sources, not to
    one analysis cache, so runs (and tests) with a throw-away cache dir still use it."""
    from analyzer.paths import user_cache_dir

    env = os.environ.get(NATIVE_DIR_ENV)
    return Path(env).expanduser() if env else user_cache_dir() / "native"


def package_parent() -> Path:
    """The directory that holds the `analyzer` package (a checkout's root, or site-packages)."""
    return Path(__file__).resolve().parent.parent.parent


def source_file(module: str, parent: Path | None = None) -> Path:
    return (parent or package_parent()) / (module.replace(".", "/") + ".py")


def source_key(parent: Path | None = None, modules: tuple[str, ...] = COMPILED) -> str:
    """Hash of the compiled modules' sources and the interpreter ABI (what a binary is valid for)."""
    import hashlib
    import importlib.machinery

    h = hashlib.sha256()
    h.update(f"{sys.implementation.cache_tag} {importlib.machinery.EXTENSION_SUFFIXES[0]}\n".encode())
    for module in modules:
        h.update(module.encode() + b"\n")
        h.update(source_file(module, parent).read_bytes())
    return h.hexdigest()[:20]


def build_dir(key: str, root: Path | None = None) -> Path:
    return (root or native_root()) / key
