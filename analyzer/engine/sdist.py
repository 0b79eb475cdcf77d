"""Get the llama-cpp-python sdist (pip, the ordinary PyPI client) and read files out of it."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from analyzer.engine.paths import LLAMA_CPP_PYTHON_VERSION, SDIST_ENV, SDIST_SHA256, EnginePaths
from analyzer.errors import AnalyzerError


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_sdist(paths: EnginePaths, say=print) -> Path:
    """The cached sdist, downloaded once with `pip download --no-binary :all:` and checked against its sha256."""
    if paths.sdist.is_file():
        return paths.sdist
    paths.sdist_dir.mkdir(parents=True, exist_ok=True)
    given = os.environ.get(SDIST_ENV)
    with tempfile.TemporaryDirectory(dir=paths.sdist_dir, prefix=".dl-") as tmp:
        if given:
            source = Path(given).expanduser()
            if not source.is_file():
                raise AnalyzerError(f"{SDIST_ENV}={given} is not a file; point it at llama_cpp_python-"
                                    f"{paths.version}.tar.gz or unset it to download from PyPI")
            candidate = Path(tmp) / paths.sdist.name
            shutil.copyfile(source, candidate)
        else:
            say(f"engine: downloading the llama-cpp-python {paths.version} sdist from PyPI (about 75 MB)")
            cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                   f"llama-cpp-python=={paths.version}", "-d", tmp]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            candidate = Path(tmp) / paths.sdist.name
            if proc.returncode != 0 or not candidate.is_file():
                last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                raise AnalyzerError(f"could not download llama-cpp-python=={paths.version} from PyPI ({last}); "
                                    f"check the network or set {SDIST_ENV} to a downloaded sdist")
        if paths.version == LLAMA_CPP_PYTHON_VERSION and _sha256(candidate) != SDIST_SHA256:
            raise AnalyzerError(f"{candidate.name} does not match the pinned sha256 {SDIST_SHA256[:16]}…; "
                                "delete it and download the sdist again")
        os.replace(candidate, paths.sdist)
    return paths.sdist


def llama_cpp_prefix(paths: EnginePaths) -> str:
    """The vendored llama.cpp's directory inside the sdist."""
    return f"llama_cpp_python-{paths.version}/vendor/llama.cpp"


def extract_source(paths: EnginePaths, dest: Path) -> Path:
    """Unpack only vendor/llama.cpp into `dest` (safe members only) and return its root."""
    prefix = llama_cpp_prefix(paths) + "/"
    root = dest / "llama.cpp"
    if (root / "CMakeLists.txt").is_file():
        return root
    tmp = Path(tempfile.mkdtemp(dir=dest, prefix=".src-"))
    with tarfile.open(paths.sdist, "r:gz") as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
        for m in members:
            m.name = m.name[len(prefix):]
        members = [m for m in members if m.name]
        tar.extractall(tmp, members=members, filter="data")
    os.replace(tmp, root)
    return root


def read_member(paths: EnginePaths, relative: str) -> bytes:
    """One file of the vendored llama.cpp (e.g. `models/ggml-vocab-deepseek-llm.gguf`) read from the sdist."""
    name = f"{llama_cpp_prefix(paths)}/{relative}"
    with tarfile.open(paths.sdist, "r:gz") as tar:
        try:
            handle = tar.extractfile(name)
        except KeyError:
            handle = None
        if handle is None:
            raise AnalyzerError(f"{relative} is not in {paths.sdist.name}; delete {paths.sdist} and run "
                                "`analyze engine build` again")
        return handle.read()


def vendored_llama_cpp_commit(paths: EnginePaths) -> str:
    """The llama.cpp commit the sdist's CHANGELOG names for this version ('' when it names none).

    The vendored tree has no git metadata, so llama-server itself reports `commit unknown`; the changelog
    line (`update llama.cpp to ggml-org/llama.cpp@<hash>`) is the traceable source.
    """
    name = f"llama_cpp_python-{paths.version}/CHANGELOG.md"
    try:
        with tarfile.open(paths.sdist, "r:gz") as tar:
            handle = tar.extractfile(name)
            text = handle.read().decode("utf-8", "replace") if handle else ""
    except (KeyError, OSError, tarfile.TarError):
        return ""
    section = re.split(rf"^## \[{re.escape(paths.version)}\]\s*$", text, maxsplit=1, flags=re.M)
    if len(section) < 2:
        return ""
    body = re.split(r"^## ", section[1], maxsplit=1, flags=re.M)[0]
    found = re.search(r"ggml-org/llama\.cpp@([0-9a-f]{7,40})", body)
    return found.group(1) if found else ""
