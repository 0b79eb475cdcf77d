"""One exception type for problems the user can fix.

The CLI turns an `AnalyzerError` into a single `error: …` line and a non-zero exit, never a
traceback, so library code raises it with a message that already says what to do.
"""

from __future__ import annotations

EXIT_USAGE = 2  # what argparse exits with for a malformed option: the same for options checked later


class AnalyzerError(Exception):
    """A problem with the user's input or environment, explained in one line."""

    exit_code = 3

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class LockError(AnalyzerError):
    """`repos.lock` is missing, malformed or inconsistent (may carry several problems)."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))
