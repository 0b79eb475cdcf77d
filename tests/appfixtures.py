"""Fixtures for tests that drive the real apps (Pi from npm, dsh built from its pinned commit).

The installs are shared, never per test: they live in the analyzer cache `.ci/run` fills (`analyze app install`).
When npm or an install is missing the fixtures skip with the command to run — unless `ANALYZER_REQUIRE_APPS=1`
(CI), where that is a failure. dsh needs its source snapshot, so its fixture follows the `upstream` rule.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

from analyzer.errors import AnalyzerError
from analyzer.paths import default_cache_dir

REQUIRE_ENV = "ANALYZER_REQUIRE_APPS"
PI_VERSION = "0.82.1"  # the release of the Pi commit the upstream tests read (conftest.PI_V0_82_1)


def _missing(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
    pytest.skip(reason)


def require_npm() -> None:
    if shutil.which("npm") is None:
        _missing("npm is not installed (apt-get install npm)")


@pytest.fixture(scope="session")
def pi_app() -> Any:
    """Pi at the tests' version from the shared cache (installed with npm when missing)."""
    from analyzer.apps.install import ensure_npm_app
    from analyzer.apps.profile import load_profile

    require_npm()
    try:
        return ensure_npm_app(default_cache_dir(), load_profile("pi"), PI_VERSION, say=lambda _line: None)
    except AnalyzerError as exc:
        _missing(f"Pi {PI_VERSION} could not be installed ({exc}); run `analyze app install pi --version "
                 f"{PI_VERSION}`")


@pytest.fixture(scope="session")
def dsh_app() -> Any:
    """dsh built from the rc.2 snapshot (cached by commit; the first build takes minutes)."""
    from conftest import DSH_RC2, snapshot

    from analyzer.apps.install import ensure_app
    from analyzer.apps.profile import load_profile

    require_npm()
    git_dir = snapshot("deepseek-ai+deepseek-harness", DSH_RC2)
    try:
        return ensure_app(default_cache_dir(), load_profile("dsh"), str(git_dir), DSH_RC2, say=lambda _line: None)
    except AnalyzerError as exc:
        _missing(f"dsh could not be built ({exc})")
