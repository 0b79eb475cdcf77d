"""Numbers as a person writes them in text output; JSON keeps the raw values.

Counts get thousands separators (`2,775`), wall times one decimal (`12.3 s`), values of a changed field
say what they are: a missing side is `absent`, a flag is `yes`/`no`, a float keeps the digits it was
given (at most `digits` of them) — never `None → 200` or `False → True`.
"""

from __future__ import annotations

from typing import Any


def count(n: int | None) -> str:
    """`2,775`; `—` when there is no count."""
    return "—" if n is None else f"{n:,}"


def seconds(s: float | None) -> str:
    """Wall or CPU time to a tenth of a second: `12.3 s`."""
    return "—" if s is None else f"{s:.1f} s"


def value(v: Any, digits: int = 6) -> str:
    """One side of a changed value, for people (see the module docstring)."""
    if v is None:
        return "absent"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        text = f"{v:,.{digits}f}".rstrip("0").rstrip(".")
        return text or "0"
    return str(v)
