"""Operators of the usage evaluator with JavaScript semantics: coercion, binary and unary operators,
updates and assignments (IEEE arithmetic as JS has it: `%` truncates, `x / 0` is ±∞ or NaN).

A part of `analyzer.usage.evaluator.Interpreter`, which owns it: handed the interpreter (operands, member
keys) it asks; the statement part (binding patterns, names) is handed in once it exists, since each asks the
other.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from analyzer.usage import builtins
from analyzer.usage.errors import JSThrow, UnresolvedName, UnsupportedSyntax
from analyzer.usage.locate import SourceModule, unwrap
from analyzer.usage.scope import Scope, is_optional
from analyzer.usage.values import (
    UNDEFINED,
    JSArray,
    JSFunction,
    JSObject,
    NativeFunction,
    is_nullish,
    strict_equals,
    to_int32,
    to_number,
    to_string,
    to_uint32,
    truthy,
    typeof,
)


class Operands(Protocol):
    """What operators ask the interpreter: operands, member keys, values as property keys."""

    def eval(self, node: Any, scope: Scope, mod: SourceModule) -> Any: ...

    def member_key(self, node: Any, scope: Scope, mod: SourceModule) -> str: ...

    def key_of(self, value: Any, mod: SourceModule, node: Any) -> str: ...


class Binds(Protocol):
    """What operators ask the statement part: destructuring assignments and assignments to names."""

    def bind_pattern(self, pattern: Any, value: Any, scope: Scope, mod: SourceModule, declare: bool,
                     const: bool = False) -> None: ...

    def assign_name(self, name: str, value: Any, scope: Scope, mod: SourceModule, node: Any) -> None: ...


class Operators:
    """Operator evaluation; operands are evaluated by the interpreter (`eval`)."""

    statements: Binds  # handed in by the interpreter right after both parts are built (each asks the other)

    def __init__(self, interp: Operands) -> None:
        self.interp = interp


    def to_primitive(self, v: Any, mod: SourceModule, node: Any) -> Any:
        if isinstance(v, JSArray):
            return to_string(v)
        if isinstance(v, JSObject):
            if "toString" in v.props or "valueOf" in v.props:
                raise UnsupportedSyntax("object with its own toString/valueOf in an operator", mod.where(node))
            return "[object Object]"
        if isinstance(v, JSFunction | NativeFunction):
            raise UnsupportedSyntax("function used as a primitive", mod.where(node))
        return v

    def _num(self, v: Any, mod: SourceModule, node: Any) -> float:
        return to_number(self.to_primitive(v, mod, node))

    def binary(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        op = mod.text(node.child_by_field_name("operator"))
        left = self.interp.eval(node.child_by_field_name("left"), scope, mod)
        if op == "&&":
            return self.interp.eval(node.child_by_field_name("right"), scope, mod) if truthy(left) else left
        if op == "||":
            return left if truthy(left) else self.interp.eval(node.child_by_field_name("right"), scope, mod)
        if op == "??":
            return self.interp.eval(node.child_by_field_name("right"), scope, mod) if is_nullish(left) else left
        right = self.interp.eval(node.child_by_field_name("right"), scope, mod)
        return self.binary_op(op, left, right, mod, node)

    def binary_op(self, op: str, left: Any, right: Any, mod: SourceModule, node: Any) -> Any:
        if op == "===":
            return strict_equals(left, right)
        if op == "!==":
            return not strict_equals(left, right)
        if op == "==":
            return self._loose_equals(left, right, mod, node)
        if op == "!=":
            return not self._loose_equals(left, right, mod, node)
        if op == "+":
            lp, rp = self.to_primitive(left, mod, node), self.to_primitive(right, mod, node)
            if type(lp) is str or type(rp) is str:
                return to_string(lp) + to_string(rp)
            return to_number(lp) + to_number(rp)
        if op in ("<", ">", "<=", ">="):
            lp, rp = self.to_primitive(left, mod, node), self.to_primitive(right, mod, node)
            a: Any
            b: Any  # UTF-16 code units for two strings, numbers otherwise
            if type(lp) is str and type(rp) is str:
                a, b = lp.encode("utf-16-be"), rp.encode("utf-16-be")
            else:
                a, b = to_number(lp), to_number(rp)
                if math.isnan(a) or math.isnan(b):
                    return False
            return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
        if op == "in":
            if not isinstance(right, JSObject):
                raise UnsupportedSyntax("'in' on a non-plain object", mod.where(node))
            return self.interp.key_of(left, mod, node) in right.props
        if op == "instanceof":
            raise UnsupportedSyntax("instanceof", mod.where(node))
        a, b = self._num(left, mod, node), self._num(right, mod, node)
        if op == "-":
            return a - b
        if op == "*":
            return _mul(a, b)
        if op == "/":
            return _div(a, b)
        if op == "%":
            return _rem(a, b)
        if op == "**":
            return builtins.js_pow(a, b)
        if op in ("&", "|", "^", "<<", ">>"):
            x, y = to_int32(a), to_int32(b)
            r = {"&": x & y, "|": x | y, "^": x ^ y, "<<": x << (y & 31), ">>": x >> (y & 31)}[op]
            return float(to_int32(float(r)))
        if op == ">>>":
            return float(to_uint32(a) >> (to_uint32(b) & 31))
        raise UnsupportedSyntax(f"binary operator {op}", mod.where(node))

    def _loose_equals(self, a: Any, b: Any, mod: SourceModule, node: Any) -> bool:
        if is_nullish(a) or is_nullish(b):
            return is_nullish(a) and is_nullish(b)
        if type(a) is type(b):
            return strict_equals(a, b)
        prims = (float, str, bool)
        if type(a) in prims and type(b) in prims:
            return to_number(a) == to_number(b)
        raise UnsupportedSyntax("loose equality (==) between an object and another type", mod.where(node))

    def unary(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        op = mod.text(node.child_by_field_name("operator"))
        arg = node.child_by_field_name("argument")
        if op == "typeof":
            if arg.type == "identifier" and scope.find(mod.text(arg)) is None and scope.module_scope is not None:
                try:
                    return typeof(self.interp.eval(arg, scope, mod))
                except UnresolvedName:
                    raise UnsupportedSyntax("typeof of an unresolvable name", mod.where(node)) from None
            return typeof(self.interp.eval(arg, scope, mod))
        if op == "delete":
            target = unwrap(arg)
            if target.type not in ("member_expression", "subscript_expression"):
                raise UnsupportedSyntax("delete of a non-property", mod.where(node))
            obj = self.interp.eval(target.child_by_field_name("object"), scope, mod)
            if not isinstance(obj, JSObject):
                raise UnsupportedSyntax("delete on a non-plain object", mod.where(node))
            key = self.interp.member_key(target, scope, mod)
            obj.props.pop(key, None)
            obj.origins.pop(key, None)
            return True
        v = self.interp.eval(arg, scope, mod)
        if op == "!":
            return not truthy(v)
        if op == "-":
            return -self._num(v, mod, node)
        if op == "+":
            return self._num(v, mod, node)
        if op == "~":
            return float(~to_int32(self._num(v, mod, node)))
        if op == "void":
            return UNDEFINED
        raise UnsupportedSyntax(f"unary operator {op}", mod.where(node))

    def update(self, node: Any, scope: Scope, mod: SourceModule) -> float:
        arg = node.child_by_field_name("argument")
        op = "++" if "++" in mod.text(node) else "--"
        prefix = node.children[0].type in ("++", "--")
        old = self._num(self.interp.eval(arg, scope, mod), mod, node)
        new = old + 1 if op == "++" else old - 1
        self.assign_target(arg, new, scope, mod, node)
        return new if prefix else old

    def assignment(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        left = node.child_by_field_name("left")
        value = self.interp.eval(node.child_by_field_name("right"), scope, mod)
        if left.type in ("object_pattern", "array_pattern"):
            self.statements.bind_pattern(left, value, scope, mod, declare=False)
        else:
            self.assign_target(left, value, scope, mod, node)
        return value

    def augmented(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        left = node.child_by_field_name("left")
        op = mod.text(node.child_by_field_name("operator"))[:-1]
        current = self.interp.eval(left, scope, mod)
        right_node = node.child_by_field_name("right")
        if op in ("&&", "||", "??"):
            keep = {"&&": not truthy(current), "||": truthy(current), "??": not is_nullish(current)}[op]
            if keep:
                return current
            value = self.interp.eval(right_node, scope, mod)
        else:
            value = self.binary_op(op, current, self.interp.eval(right_node, scope, mod), mod, node)
        self.assign_target(left, value, scope, mod, node)
        return value

    def assign_target(self, target: Any, value: Any, scope: Scope, mod: SourceModule, node: Any) -> None:
        target = unwrap(target)
        if target.type == "identifier":
            self.statements.assign_name(mod.text(target), value, scope, mod, node)
            return
        if target.type not in ("member_expression", "subscript_expression"):
            raise UnsupportedSyntax(f"assignment to {target.type}", mod.where(target))
        if is_optional(target):
            raise UnsupportedSyntax("assignment through optional chaining", mod.where(target))
        obj = self.interp.eval(target.child_by_field_name("object"), scope, mod)
        key = self.interp.member_key(target, scope, mod)
        if isinstance(obj, JSObject):
            obj.set(key, value, mod.site(node))
        elif isinstance(obj, JSArray) and key.isdigit():
            i = int(key)
            if i > len(obj.items):
                raise UnsupportedSyntax("array hole created by assignment", mod.where(node))
            if i == len(obj.items):
                obj.items.append(value)
            else:
                obj.items[i] = value
        elif is_nullish(obj):
            raise JSThrow("TypeError", f"Cannot set properties of {to_string(obj)} (setting '{key}')", mod.where(node))
        else:
            raise UnsupportedSyntax(f"property assignment on a {typeof(obj)}", mod.where(node))



def _mul(a: float, b: float) -> float:
    try:
        return a * b
    except OverflowError:  # pragma: no cover - float mul returns inf rather than raising
        return math.inf


def _div(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        negative = (a < 0) != (math.copysign(1.0, b) < 0)
        return -math.inf if negative else math.inf
    return a / b


def _rem(a: float, b: float) -> float:
    """JS `%`: truncated remainder with the dividend's sign (math.fmod), NaN for x % 0 and ∞ % y."""
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
        return math.nan
    if math.isinf(b):
        return a
    return math.fmod(a, b)


