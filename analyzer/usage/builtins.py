"""The few JavaScript built-ins the pinned usage code calls: `Math.*`, `Number.*`, string/array/number methods.

Each one follows the ECMAScript definition (e.g. `Math.round` ties toward +∞, `Math.max()` is -Infinity,
`toFixed` rounds the exact binary value). A built-in that is not here raises `UnsupportedSyntax` rather than
falling back to a Python look-alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from analyzer.usage.errors import JSThrow, UnsupportedSyntax
from analyzer.usage.values import (
    UNDEFINED,
    JSArray,
    JSObject,
    NativeFunction,
    is_nullish,
    js_len,
    number_to_string,
    strict_equals,
    to_number,
    to_string,
    truthy,
    typeof,
)

Caller = Callable[[Any, Any, list[Any]], Any]  # (fn, this, args) → value, provided by the interpreter


def _arg(args: list[Any], i: int) -> Any:
    return args[i] if i < len(args) else UNDEFINED


def _num(args: list[Any], i: int) -> float:
    return to_number(_arg(args, i))


def _math_round(x: float) -> float:
    if math.isnan(x) or math.isinf(x):
        return x
    r = math.floor(x)
    out = float(r + 1) if x - r >= 0.5 else float(r)
    return -0.0 if out == 0 and (x < 0 or math.copysign(1.0, x) < 0) else out


def _math_max(args: list[Any]) -> float:
    result = -math.inf
    for v in (to_number(a) for a in args):
        if math.isnan(v):
            return math.nan
        if v > result or (v == 0 and result == 0 and math.copysign(1.0, result) < 0):
            result = v
    return result


def _math_min(args: list[Any]) -> float:
    result = math.inf
    for v in (to_number(a) for a in args):
        if math.isnan(v):
            return math.nan
        if v < result or (v == 0 and result == 0 and math.copysign(1.0, v) < 0):
            result = v
    return result


def js_pow(base: float, exp: float) -> float:
    """`**` / Math.pow with JS edge cases (NaN exponent, ±1 ** ±Infinity are NaN)."""
    if math.isnan(exp):
        return math.nan
    if exp == 0:
        return 1.0
    if abs(base) == 1 and math.isinf(exp):
        return math.nan
    try:
        return math.pow(base, exp)
    except ZeroDivisionError:
        return math.inf if not (base == 0 and math.copysign(1.0, base) < 0 and exp % 2 == 1) else -math.inf
    except OverflowError:
        return math.inf if base > 0 or exp % 2 == 0 else -math.inf
    except ValueError:
        return math.nan


def _unary(fn: Callable[[float], float]) -> Callable[[Any, list[Any], str], float]:
    def call(this: Any, args: list[Any], where: str) -> float:
        x = _num(args, 0)
        if math.isnan(x):
            return math.nan
        try:
            return float(fn(x))
        except (ValueError, OverflowError):
            return math.nan
    return call


def _trunc(x: float) -> float:
    return x if math.isinf(x) else float(math.trunc(x))


def _floor(x: float) -> float:
    return x if math.isinf(x) else float(math.floor(x))


def _ceil(x: float) -> float:
    if math.isinf(x):
        return x
    r = float(math.ceil(x))
    return -0.0 if r == 0 and x < 0 else r


def _sign(x: float) -> float:
    return x if x == 0 else math.copysign(1.0, x)


def _log(x: float) -> float:
    if x == 0:
        return -math.inf
    if x < 0:
        return math.nan
    return math.log(x) if not math.isinf(x) else math.inf


def make_math() -> JSObject:
    fns: dict[str, Callable[[Any, list[Any], str], Any]] = {
        "floor": _unary(_floor), "ceil": _unary(_ceil), "trunc": _unary(_trunc), "abs": _unary(abs),
        "sign": _unary(_sign), "sqrt": _unary(lambda x: math.sqrt(x) if x >= 0 else math.nan),
        "log": _unary(_log), "log2": _unary(lambda x: _log(x) / math.log(2) if x > 0 else _log(x)),
        "log10": _unary(lambda x: math.log10(x) if x > 0 and not math.isinf(x) else _log(x)),
        "exp": _unary(lambda x: math.exp(x) if x < 710 else math.inf),
        "round": lambda this, a, w: _math_round(_num(a, 0)),
        "max": lambda this, a, w: _math_max(a), "min": lambda this, a, w: _math_min(a),
        "pow": lambda this, a, w: js_pow(_num(a, 0), _num(a, 1)),
    }
    obj = JSObject({name: NativeFunction(f"Math.{name}", fn) for name, fn in fns.items()})
    for name, value in (("PI", math.pi), ("E", math.e), ("LN2", math.log(2)), ("LN10", math.log(10))):
        obj.props[name] = value
    return obj


def _is_integer(v: Any) -> bool:
    return type(v) is float and not math.isinf(v) and not math.isnan(v) and v == math.trunc(v)


def _parse_float(this: Any, args: list[Any], where: str) -> float:
    import re

    s = to_string(_arg(args, 0)).lstrip(" \t\n\r\v\f\u00a0\ufeff")
    m = re.match(r"[+-]?(Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)", s)
    if not m:
        return math.nan
    return float(m.group(0).replace("Infinity", "inf"))


def _parse_int(this: Any, args: list[Any], where: str) -> float:
    s = to_string(_arg(args, 0)).strip(" \t\n\r\v\f\u00a0\ufeff")
    radix = _arg(args, 1)
    if radix is not UNDEFINED and to_number(radix) not in (0.0, 10.0):
        raise UnsupportedSyntax(f"parseInt radix {to_string(radix)}", where)
    sign = -1.0 if s.startswith("-") else 1.0
    s = s[1:] if s[:1] in "+-" and s else s
    digits = ""
    for ch in s:
        if not ch.isdigit() or not ch.isascii():
            break
        digits += ch
    return sign * float(int(digits)) if digits else math.nan


def make_number() -> NativeFunction:
    props: dict[str, Any] = {
        "isFinite": NativeFunction("Number.isFinite", lambda t, a, w: type(_arg(a, 0)) is float
                                   and not math.isinf(_arg(a, 0)) and not math.isnan(_arg(a, 0))),
        "isInteger": NativeFunction("Number.isInteger", lambda t, a, w: _is_integer(_arg(a, 0))),
        "isSafeInteger": NativeFunction("Number.isSafeInteger", lambda t, a, w: _is_integer(_arg(a, 0))
                                        and abs(_arg(a, 0)) <= 2**53 - 1),
        "isNaN": NativeFunction("Number.isNaN", lambda t, a, w: type(_arg(a, 0)) is float and math.isnan(_arg(a, 0))),
        "parseFloat": NativeFunction("Number.parseFloat", _parse_float),
        "parseInt": NativeFunction("Number.parseInt", _parse_int),
        "MAX_SAFE_INTEGER": float(2**53 - 1), "MIN_SAFE_INTEGER": -float(2**53 - 1),
        "EPSILON": 2.0**-52, "MAX_VALUE": 1.7976931348623157e308, "MIN_VALUE": 5e-324,
        "POSITIVE_INFINITY": math.inf, "NEGATIVE_INFINITY": -math.inf, "NaN": math.nan,
    }
    return NativeFunction("Number", lambda t, a, w: to_number(_arg(a, 0)) if a else 0.0, props)


def to_fixed(x: float, digits: float, where: str) -> str:
    """Number.prototype.toFixed: round the exact binary value half-up on the magnitude."""
    f = int(digits) if not math.isnan(digits) else 0
    if f < 0 or f > 100:
        raise JSThrow("RangeError", "toFixed() digits argument must be between 0 and 100", where)
    if math.isnan(x):
        return "NaN"
    if abs(x) >= 1e21 or math.isinf(x):
        return number_to_string(x)
    sign = "-" if x < 0 else ""
    q = Decimal(abs(x)).quantize(Decimal(1).scaleb(-f), rounding=ROUND_HALF_UP)
    text = f"{q:f}"
    if sign and q == 0:
        sign = "-" if x < 0 else ""
    return sign + text


def string_method(s: str, name: str, where: str) -> NativeFunction:
    """A bound String.prototype method."""
    def repeat(t: Any, a: list[Any], w: str) -> str:
        n = _num(a, 0)
        n = 0.0 if math.isnan(n) else n
        if n < 0 or math.isinf(n):
            raise JSThrow("RangeError", f"Invalid count value: {number_to_string(n)}", w)
        return s * int(n)

    def pad(start: bool) -> Callable[[Any, list[Any], str], str]:
        def run(t: Any, a: list[Any], w: str) -> str:
            target = int(_num(a, 0)) if not math.isnan(_num(a, 0)) else 0
            filler = " " if _arg(a, 1) is UNDEFINED else to_string(_arg(a, 1))
            missing = target - js_len(s)
            if missing <= 0 or not filler:
                return s
            fill = (filler * (missing // len(filler) + 1))[:missing]
            return fill + s if start else s + fill
        return run

    def slice_(t: Any, a: list[Any], w: str) -> str:
        return s[_slice_index(a, 0, len(s), 0):_slice_index(a, 1, len(s), len(s))]

    methods: dict[str, Callable[[Any, list[Any], str], Any]] = {
        "repeat": repeat,
        "padStart": pad(True), "padEnd": pad(False),
        "includes": lambda t, a, w: to_string(_arg(a, 0)) in s,
        "startsWith": lambda t, a, w: s.startswith(to_string(_arg(a, 0))),
        "endsWith": lambda t, a, w: s.endswith(to_string(_arg(a, 0))),
        "indexOf": lambda t, a, w: float(s.find(to_string(_arg(a, 0)))),
        "slice": slice_,
        "trim": lambda t, a, w: s.strip(" \t\n\r\v\f\u00a0\ufeff\u2028\u2029"),
        "toLowerCase": lambda t, a, w: s.lower(), "toUpperCase": lambda t, a, w: s.upper(),
        "toString": lambda t, a, w: s,
        "split": lambda t, a, w: _split(s, a, w),
    }
    if name not in methods:
        raise UnsupportedSyntax(f"String.prototype.{name}", where)
    if any(ord(c) > 0xFFFF for c in s) and name in ("slice", "indexOf", "padStart", "padEnd"):
        raise UnsupportedSyntax(f"String.prototype.{name} on a string with astral characters", where)
    return NativeFunction(f"String.prototype.{name}", methods[name])


def _split(s: str, a: list[Any], where: str) -> JSArray:
    sep = _arg(a, 0)
    if type(sep) is not str or _arg(a, 1) is not UNDEFINED:
        raise UnsupportedSyntax("String.prototype.split without a plain string separator", where)
    return JSArray(list(s) if sep == "" else s.split(sep))


def number_method(x: float, name: str, where: str) -> NativeFunction:
    if name == "toFixed":
        return NativeFunction("Number.prototype.toFixed", lambda t, a, w: to_fixed(x, _num(a, 0), w))
    if name == "toString":
        def run(t: Any, a: list[Any], w: str) -> str:
            if _arg(a, 0) is not UNDEFINED and to_number(_arg(a, 0)) != 10:
                raise UnsupportedSyntax("Number.prototype.toString with a radix", w)
            return number_to_string(x)
        return NativeFunction("Number.prototype.toString", run)
    raise UnsupportedSyntax(f"Number.prototype.{name}", where)


def _slice_index(a: list[Any], i: int, length: int, default: int) -> int:
    v = _arg(a, i)
    if v is UNDEFINED:
        return default
    n = to_number(v)
    if math.isnan(n):
        return 0
    n_int = int(max(min(n, 2**53), -(2**53)))
    return max(length + n_int, 0) if n_int < 0 else min(n_int, length)


def array_method(arr: JSArray, name: str, where: str, call: Caller) -> NativeFunction:
    """A bound Array.prototype method; callbacks run through the interpreter (`call`)."""
    items = arr.items

    def cb(a: list[Any]) -> Any:
        fn = _arg(a, 0)
        if typeof(fn) != "function":
            raise JSThrow("TypeError", f"{to_string(fn)} is not a function", where)
        return fn

    def each(a: list[Any]) -> Any:
        fn = cb(a)
        for i, item in enumerate(list(items)):
            yield item, call(fn, UNDEFINED, [item, float(i), arr])

    def reduce(t: Any, a: list[Any], w: str) -> Any:
        fn = cb(a)
        if len(a) >= 2:
            acc, start = a[1], 0
        elif items:
            acc, start = items[0], 1
        else:
            raise JSThrow("TypeError", "Reduce of empty array with no initial value", w)
        for i in range(start, len(items)):
            acc = call(fn, UNDEFINED, [acc, items[i], float(i), arr])
        return acc

    def find(index: bool) -> Callable[[Any, list[Any], str], Any]:
        def run(t: Any, a: list[Any], w: str) -> Any:
            for i, (item, r) in enumerate(each(a)):
                if truthy(r):
                    return float(i) if index else item
            return -1.0 if index else UNDEFINED
        return run

    def push(t: Any, a: list[Any], w: str) -> float:
        items.extend(a)
        return float(len(items))

    def index_of(t: Any, a: list[Any], w: str) -> float:
        for i, item in enumerate(items):
            if strict_equals(item, _arg(a, 0)):
                return float(i)
        return -1.0

    def includes(t: Any, a: list[Any], w: str) -> bool:
        x = _arg(a, 0)
        nan = type(x) is float and math.isnan(x)
        return any(strict_equals(i, x) or (nan and type(i) is float and math.isnan(i)) for i in items)

    def join(t: Any, a: list[Any], w: str) -> str:
        sep = "," if _arg(a, 0) is UNDEFINED else to_string(_arg(a, 0))
        return sep.join("" if is_nullish(i) else to_string(i) for i in items)

    def for_each(t: Any, a: list[Any], w: str) -> Any:
        for _ in each(a):
            pass
        return UNDEFINED

    methods: dict[str, Callable[[Any, list[Any], str], Any]] = {
        "map": lambda t, a, w: JSArray([r for _, r in each(a)]),
        "filter": lambda t, a, w: JSArray([item for item, r in each(a) if truthy(r)]),
        "some": lambda t, a, w: any(truthy(r) for _, r in each(a)),
        "every": lambda t, a, w: all(truthy(r) for _, r in each(a)),
        "reduce": reduce, "find": find(False), "findIndex": find(True), "forEach": for_each,
        "push": push, "indexOf": index_of, "includes": includes, "join": join,
        "slice": lambda t, a, w: JSArray(items[_slice_index(a, 0, len(items), 0):
                                               _slice_index(a, 1, len(items), len(items))]),
        "concat": lambda t, a, w: JSArray(items + [x for v in a for x in (v.items if isinstance(v, JSArray)
                                                                           else [v])]),
    }
    if name not in methods:
        raise UnsupportedSyntax(f"Array.prototype.{name}", where)
    return NativeFunction(f"Array.prototype.{name}", methods[name])


def _object_keys(a: list[Any], where: str) -> JSObject:
    o = _arg(a, 0)
    if not isinstance(o, JSObject):
        raise UnsupportedSyntax("Object.keys/values/entries on a non-plain object", where)
    return o


def _object_assign(this: Any, a: list[Any], where: str) -> Any:
    target = _arg(a, 0)
    if not isinstance(target, JSObject):
        raise UnsupportedSyntax("Object.assign onto a non-plain object", where)
    for src in a[1:]:
        if is_nullish(src):
            continue
        if not isinstance(src, JSObject):
            raise UnsupportedSyntax("Object.assign from a non-plain object", where)
        for k, v in src.props.items():
            target.set(k, v, src.origins.get(k))
    return target


def make_globals() -> dict[str, Any]:
    """The global names the evaluator provides; anything else is unresolved."""
    obj = JSObject({
        "keys": NativeFunction("Object.keys", lambda t, a, w: JSArray(list(_object_keys(a, w).props))),
        "values": NativeFunction("Object.values", lambda t, a, w: JSArray(list(_object_keys(a, w).props.values()))),
        "entries": NativeFunction("Object.entries", lambda t, a, w: JSArray(
            [JSArray([k, v]) for k, v in _object_keys(a, w).props.items()])),
        "freeze": NativeFunction("Object.freeze", lambda t, a, w: _arg(a, 0)),
        "assign": NativeFunction("Object.assign", _object_assign),
    })
    array = JSObject({"isArray": NativeFunction("Array.isArray", lambda t, a, w: isinstance(_arg(a, 0), JSArray))})
    number = make_number()
    return {
        "Math": make_math(), "Number": number, "Object": obj, "Array": array,
        "String": NativeFunction("String", lambda t, a, w: to_string(_arg(a, 0)) if a else ""),
        "Boolean": NativeFunction("Boolean", lambda t, a, w: truthy(_arg(a, 0))),
        "isFinite": NativeFunction("isFinite", lambda t, a, w: not math.isinf(_num(a, 0))
                                   and not math.isnan(_num(a, 0))),
        "isNaN": NativeFunction("isNaN", lambda t, a, w: math.isnan(_num(a, 0))),
        "parseInt": number.props["parseInt"], "parseFloat": number.props["parseFloat"],
        "Infinity": math.inf, "NaN": math.nan, "undefined": UNDEFINED,
    }
