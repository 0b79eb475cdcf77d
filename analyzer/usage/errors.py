"""Why a replay stopped: unsupported syntax, an unresolvable name, or a JavaScript exception.

All of them name the upstream file and line, so a failed replay points at the code that needs a look
instead of producing a number that was guessed.
"""

from __future__ import annotations

from analyzer.errors import AnalyzerError


class EvaluationError(AnalyzerError):
    """The evaluator could not run the pinned code faithfully."""


class UnsupportedSyntax(EvaluationError):
    """A syntax node (or built-in) outside the supported TypeScript subset; the message names type and file:line."""

    def __init__(self, what: str, where: str) -> None:
        self.what = what
        self.where = where
        super().__init__(f"unsupported syntax {what} at {where}; the usage evaluator runs only a TypeScript "
                         "subset and refuses to guess (extend analyzer/usage/evaluator.py or pick another commit)")


class UnresolvedName(EvaluationError):
    """A name (import, global, declaration) the evaluator cannot bind at the pinned commit."""


class JSThrow(EvaluationError):
    """A JavaScript exception (TypeError, RangeError, `throw`) raised by the evaluated code."""

    def __init__(self, kind: str, message: str, where: str) -> None:
        self.kind = kind
        self.js_message = message
        self.where = where
        super().__init__(f"{kind}: {message} (thrown at {where})")


class LocateError(AnalyzerError):
    """A function could not be found, or was found in more than one place, at a commit."""
