"""What the function-value passes hand each other: a `Value` that may arrive, and the interface through
which the stored-values helper (`analyzer.resolve.stored`) asks the pass that owns it
(`analyzer.resolve.functionvalues.FunctionValues`) to follow a value further.

Kept apart from both so that neither imports the other's module: the pass owns the helper, the helper
only knows this interface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from analyzer.index.model import Arg, Call
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import DefRef, Program
from analyzer.resolve.receivers import Types


@dataclass(frozen=True)
class Value:
    """A function value that may arrive: its definition and the lines that say how."""

    target: DefRef
    evidence: tuple[str, ...]
    passer: str | None = None  # node id of the function whose call passed it (None: assigned)


class ValueFollower(Protocol):
    """The questions the stored-values helper asks of the function-value pass."""

    p: Program
    types: Types

    def closure_calls(self, mod: ModuleRef, scope: str | None) -> list[Call]:
        """The calls in `scope` that pass an inline closure, in file order."""
        ...

    def field_owners(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int,
                     key: str) -> set[DefRef]:
        """The types declaring field `key` of the receiver `chain` (empty when unknown)."""
        ...

    def arg_values(self, mod: ModuleRef, call: Call, arg: Arg, where: tuple[str, ...],
                   depth: int) -> list[Value]:
        """The function values argument `arg` of `call` may be."""
        ...

    def identifier_values(self, mod: ModuleRef, scope: str | None, name: str, where: tuple[str, ...],
                          depth: int) -> list[Value]:
        """The function values the name `name` in `scope` may be."""
        ...


__all__ = ["Value", "ValueFollower"]
