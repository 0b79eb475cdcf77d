"""What counts as test code: one definition for the graph, the hazards scan and the usage replay.

Test code is indexed (its calls are real callers) but marked, so request paths and scans avoid it by
default. A path is test code when a directory on it is a test folder (`test/`, `tests/`, `__tests__/`,
`__mocks__/`, `fixture(s)/`, `e2e/`) or its file name is `*.test.*`, `*.spec.*` or `*.bench.*` (any
JavaScript or TypeScript extension).
"""

from __future__ import annotations

import re

TEST_PATH_RE = re.compile(r"(^|/)(tests?|__tests__|__mocks__|fixtures?|e2e)/|\.(test|spec|bench)\.[cm]?[jt]sx?$")


def is_test_path(path: str) -> bool:
    """Whether the repo-relative `path` is test code (see the module docstring for the rules)."""
    return bool(TEST_PATH_RE.search(path))


__all__ = ["TEST_PATH_RE", "is_test_path"]
