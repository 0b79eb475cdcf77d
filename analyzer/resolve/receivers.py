"""Receiver typing: which class or interface a call's receiver is, and why.

Types come only from static facts — annotations, `new X()`, parameter properties, return types
(annotated, or the class a function `return new`s), module augmentations, `extends` — each carried
with the evidence line that justified it. Nothing is guessed from names here.

`Types` owns five parts, each in its own module with the memo tables it fills, each handed the parts it
asks when it is built:

1. `declarations.Declarations` — names → declarations: type texts, imports, namespaces, augmentations,
   supertypes and member lookup;
2. `hierarchy.Hierarchy` — the class hierarchy downwards: subtypes and implementations;
3. `expressions.Expressions` — expression typing: receiver chains, bindings, parameters, call results;
4. `objectliterals.Literals` — object literals: their types, and the literals implementing an interface;
5. `contextual.Contextual` — contextual typing of callback and option-property parameters.

Two questions run against that order — a `ReturnType<typeof f>` in a type text, and a parameter typed by
where it is passed inside expression typing — so the lower part declares what it needs as a protocol
(`declarations.ReturnTypes`, `expressions.ParameterContext`) and `Types` hands the part above in once it
exists. That makes the parts a cycle; the build runs with the cyclic GC paused and frozen afterwards, so
`release()` takes those two references back when resolution ends, and reference counting frees every part
and memo table before graph assembly.
"""

from __future__ import annotations

from analyzer.resolve.contextual import Contextual
from analyzer.resolve.declarations import Declarations, _NoExpressions
from analyzer.resolve.expressions import Expressions, _NoContext
from analyzer.resolve.hierarchy import Hierarchy
from analyzer.resolve.objectliterals import Literals
from analyzer.resolve.program import Program
from analyzer.resolve.symbols import SymbolResolver


class Types:
    """Receiver typing over one `Program`: its parts, built bottom-up and handed their collaborators."""

    def __init__(self, program: Program, symbols: SymbolResolver, identity_wrappers: set[str] | None = None) -> None:
        self.decls = Declarations(program, symbols)
        self.hierarchy = Hierarchy(program, self.decls)
        self.exprs = Expressions(program, symbols, self.decls)
        self.literals = Literals(program, self.decls, self.hierarchy, self.exprs, identity_wrappers)
        self.contextual = Contextual(program, self.decls, self.exprs, self.literals)
        self.decls.exprs = self.exprs
        self.exprs.contextual = self.contextual

    def release(self) -> None:
        """Take back the two upward references, so the parts form no cycle and are freed when dropped."""
        self.decls.exprs = _NoExpressions()
        self.exprs.contextual = _NoContext()


__all__ = ["Types"]
