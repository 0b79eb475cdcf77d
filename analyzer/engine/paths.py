"""Where the local engine lives under the analyzer cache dir, keyed by the vendored llama.cpp's version.

Everything the engine needs (sdist, build tree, finished binary, generated model, run state) sits under
`<cache>/engine/`, so one build per machine is shared by the CLI, the tests and CI.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# The PyPI sdist of llama-cpp-python vendors llama.cpp (tools/server and the ggml-vocab-*.gguf files).
LLAMA_CPP_PYTHON_VERSION = "0.3.36"
# sha256 of llama_cpp_python-0.3.36.tar.gz as published on PyPI; a download that differs is refused.
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
SDIST_ENV = "ANALYZER_ENGINE_SDIST"  # path to an already downloaded sdist (offline machines)
JOBS_ENV = "ANALYZER_ENGINE_JOBS"


@dataclass(frozen=True)
class EnginePaths:
    """All engine locations for one cache dir and one llama-cpp-python version."""

    cache_dir: Path
    version: str = LLAMA_CPP_PYTHON_VERSION

    @property
    def root(self) -> Path:
        return self.cache_dir / "engine"

    @property
    def sdist_dir(self) -> Path:
        return self.root / "sdist"

    @property
    def sdist(self) -> Path:
        return self.sdist_dir / f"llama_cpp_python-{self.version}.tar.gz"

    @property
    def work(self) -> Path:
        """Extracted source and CMake build tree; kept after a failure so a rerun continues, removed after success."""
        return self.root / f"work-{self.version}"

    @property
    def install(self) -> Path:
        """The finished build, installed in one rename: bin/llama-server and build.json."""
        return self.root / f"llama-server-{self.version}"

    @property
    def binary(self) -> Path:
        return self.install / "bin" / "llama-server"

    @property
    def build_info(self) -> Path:
        return self.install / "build.json"

    @property
    def lock(self) -> Path:
        return self.root / f".build-{self.version}.lock"

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def state(self) -> Path:
        return self.root / "state.json"

    @property
    def logs(self) -> Path:
        return self.root / "logs"


def build_jobs() -> int:
    """Parallel compile jobs: `$ANALYZER_ENGINE_JOBS`, else 2 (the machines this runs on are small and shared)."""
    raw = os.environ.get(JOBS_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return 2


ENGINE_CACHE_ENV = "ANALYZER_ENGINE_CACHE"


def engine_cache_dir(default: Path) -> Path:
    """Where the build and model live: `$ANALYZER_ENGINE_CACHE` if set, else `default` (the analyzer cache dir).

    Separate from where a run's state is kept, so a test can use a throw-away state dir and still reuse the
    one machine-wide build.
    """
    env = os.environ.get(ENGINE_CACHE_ENV)
    return Path(env).expanduser() if env else Path(default)
