"""JavaScript values in Python, with JavaScript's conversions (not Python's).

Mapping: `undefined` → `UNDEFINED` (a sentinel distinct from `None`, which is `null`); booleans → `bool`;
every number → `float` (there are no ints in JS, and `bool` is never treated as a number); strings → `str`;
objects → `JSObject` (ordered properties, plus which upstream line set each one and which keys were read);
arrays → `JSArray`; functions → `JSFunction`/`NativeFunction`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class _Undefined:
    __slots__ = ()
    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:  # guard: JS truthiness must go through `truthy`
        raise TypeError("use values.truthy() for JS truthiness")


UNDEFINED = _Undefined()


@dataclass(frozen=True)
class Site:
    """Where an upstream value was produced: repo name, path and 1-based line."""

    repo: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.repo}:{self.path}:{self.line}" if self.repo else f"{self.path}:{self.line}"


class JSObject:
    """A plain object: insertion-ordered properties, the site that last set each, and the keys read."""

    __slots__ = ("props", "origins", "reads")

    def __init__(self, props: dict[str, Any] | None = None) -> None:
        self.props: dict[str, Any] = dict(props or {})
        self.origins: dict[str, Site] = {}
        self.reads: set[str] = set()

    def get(self, key: str) -> Any:
        self.reads.add(key)
        return self.props.get(key, UNDEFINED)

    def set(self, key: str, value: Any, site: Site | None = None) -> None:
        self.props[key] = value
        if site is not None:
            self.origins[key] = site
        else:
            self.origins.pop(key, None)

    def __repr__(self) -> str:
        return f"JSObject({self.props!r})"


class JSArray:
    """An array (dense; holes are not modelled)."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any] | None = None) -> None:
        self.items: list[Any] = list(items or [])

    def __repr__(self) -> str:
        return f"JSArray({self.items!r})"


@dataclass(eq=False)
class JSFunction:
    """A closure over an upstream function node (evaluated by the interpreter that created it)."""

    node: Any
    env: Any
    module: Any
    name: str = ""
    is_arrow: bool = False


@dataclass(eq=False)
class NativeFunction:
    """A built-in implemented in Python; `fn(this, args, where)`."""

    name: str
    fn: Callable[[Any, list[Any], str], Any]
    props: dict[str, Any] = field(default_factory=dict)


def is_nullish(v: Any) -> bool:
    return v is None or v is UNDEFINED


def truthy(v: Any) -> bool:
    """JS ToBoolean: false for undefined, null, false, 0, -0, NaN and the empty string."""
    if v is UNDEFINED or v is None:
        return False
    if type(v) is bool:
        return v
    if type(v) is float:
        return not (v == 0.0 or math.isnan(v))
    if type(v) is str:
        return v != ""
    return True


def typeof(v: Any) -> str:
    if v is UNDEFINED:
        return "undefined"
    if v is None:
        return "object"
    if type(v) is bool:
        return "boolean"
    if type(v) is float:
        return "number"
    if type(v) is str:
        return "string"
    if isinstance(v, JSFunction | NativeFunction):
        return "function"
    return "object"


def number_to_string(x: float) -> str:
    """ECMAScript Number::toString(10): shortest round-trip digits, exponent only outside 1e-7…1e21."""
    if math.isnan(x):
        return "NaN"
    if x == 0:
        return "0"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x < 0:
        return "-" + number_to_string(-x)
    mantissa, _, exp_text = repr(x).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    # position of the decimal point relative to the start of `digits` (the spec's n)
    n = len(int_part.lstrip("0")) if int_part.strip("0") else -(len(frac_part) - len(frac_part.lstrip("0")))
    n += int(exp_text or 0)
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    if k == 1:
        return f"{digits}e{sign}{abs(e)}"
    return f"{digits[0]}.{digits[1:]}e{sign}{abs(e)}"


_NUMERIC_RE = re.compile(r"^[+-]?(Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)$")
_JS_WHITESPACE = " \t\n\r\v\f\u00a0\ufeff\u2028\u2029"


def to_number(v: Any) -> float:
    """JS ToNumber for primitives (objects are rejected by the caller)."""
    if type(v) is float:
        return v
    if v is UNDEFINED:
        return math.nan
    if v is None:
        return 0.0
    if type(v) is bool:
        return 1.0 if v else 0.0
    if type(v) is str:
        s = v.strip(_JS_WHITESPACE)
        if s == "":
            return 0.0
        low = s.lower()
        for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
            if low.startswith(prefix):
                try:
                    return float(int(s[2:], base))
                except ValueError:
                    return math.nan
        if not _NUMERIC_RE.match(s):
            return math.nan
        return float(s.replace("Infinity", "inf"))
    if isinstance(v, JSArray):
        return to_number(to_string(v))
    return math.nan


def to_string(v: Any) -> str:
    """JS ToString (arrays join with ',', plain objects are '[object Object]')."""
    if type(v) is str:
        return v
    if type(v) is float:
        return number_to_string(v)
    if v is UNDEFINED:
        return "undefined"
    if v is None:
        return "null"
    if type(v) is bool:
        return "true" if v else "false"
    if isinstance(v, JSArray):
        return ",".join("" if is_nullish(i) else to_string(i) for i in v.items)
    if isinstance(v, JSFunction | NativeFunction):
        return f"function {getattr(v, 'name', '')}() {{ [code] }}"
    return "[object Object]"


def to_int32(v: Any) -> int:
    x = to_number(v)
    if math.isnan(x) or math.isinf(x):
        return 0
    n = int(x) & 0xFFFFFFFF
    return n - (1 << 32) if n >= (1 << 31) else n


def to_uint32(v: Any) -> int:
    return to_int32(v) & 0xFFFFFFFF


def strict_equals(a: Any, b: Any) -> bool:
    """`===`: no coercion; NaN is unequal to itself; objects by identity."""
    if type(a) is float and type(b) is float:
        return a == b
    if type(a) is not type(b):
        return False
    if type(a) in (str, bool) or a is UNDEFINED or a is None:
        return bool(a == b)
    return a is b


def js_len(s: str) -> int:
    """String length in UTF-16 code units, as JS counts it."""
    return len(s.encode("utf-16-le")) // 2


def from_python(v: Any) -> Any:
    """Turn plain Python data (scenario inputs, JSON) into JS values: ints become floats, dicts objects."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return JSObject({str(k): from_python(x) for k, x in v.items()})
    if isinstance(v, list | tuple):
        return JSArray([from_python(x) for x in v])
    if v is UNDEFINED or isinstance(v, JSObject | JSArray):
        return v
    raise TypeError(f"cannot turn {type(v).__name__} into a JS value")


def to_python(v: Any) -> Any:
    """JS value → JSON-like Python (as `JSON.parse(JSON.stringify(v))` would give; integral floats → int)."""
    if type(v) is float:
        if math.isnan(v) or math.isinf(v):
            return None
        return int(v) if v.is_integer() and abs(v) < 2**63 else v
    if isinstance(v, JSObject):
        return {k: to_python(x) for k, x in v.props.items()
                if x is not UNDEFINED and not isinstance(x, JSFunction | NativeFunction)}
    if isinstance(v, JSArray):
        return [None if (x is UNDEFINED or isinstance(x, JSFunction | NativeFunction)) else to_python(x)
                for x in v.items]
    if v is UNDEFINED:
        return None
    return v


def json_stringify(v: Any) -> str | None:
    """Exactly what `JSON.stringify(v)` prints (no indentation); None where JS returns undefined."""
    if v is UNDEFINED or isinstance(v, JSFunction | NativeFunction):
        return None
    if v is None:
        return "null"
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is float:
        return "null" if (math.isnan(v) or math.isinf(v)) else number_to_string(v)
    if type(v) is str:
        return _json_quote(v)
    if isinstance(v, JSArray):
        return "[" + ",".join(json_stringify(x) or "null" for x in v.items) + "]"
    if isinstance(v, JSObject):
        parts = []
        for k, x in v.props.items():
            s = json_stringify(x)
            if s is not None:
                parts.append(_json_quote(k) + ":" + s)
        return "{" + ",".join(parts) + "}"
    raise TypeError(f"not a JS value: {v!r}")


def _json_quote(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ord(ch) < 0x20 or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
