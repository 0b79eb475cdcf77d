"""Receiver typing: which class or interface a call's receiver is, and why.

Types come only from static facts — annotations, `new X()`, parameter properties, return types
(annotated, or the class a function `return new`s), module augmentations, `extends` — each carried
with the evidence line that justified it. Nothing is guessed from names here.

`Types` is assembled from five parts, each in its own module with the memo tables it fills, each built on
the one before it (a part asks the parts below it directly; the four questions a lower part needs answered
from above are declared there as hooks and filled by the part that owns them):

1. `declarations.Declarations` — names → declarations: type texts, imports, namespaces, augmentations,
   supertypes and member lookup;
2. `hierarchy.Hierarchy` — the class hierarchy downwards: subtypes and implementations;
3. `expressions.Expressions` — expression typing: receiver chains, bindings, parameters, call results;
4. `literals.Literals` — object literals: their types, and the literals implementing an interface;
5. `contextual.Contextual` — contextual typing of callback and option-property parameters.

One object rather than five that point at each other: expression typing and contextual typing recurse
into each other, and the build runs with the cyclic GC paused, so parts holding references to each
other would keep every memo table alive through graph assembly.
"""

from __future__ import annotations

from analyzer.resolve.contextual import Contextual


class Types(Contextual):
    """Receiver typing over one `Program` (see the module docstring for its parts)."""


__all__ = ["Types"]
