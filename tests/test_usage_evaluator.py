"""The usage evaluator follows JavaScript semantics, not Python's (each case differs between the two)."""

from __future__ import annotations

import math

import pytest

from analyzer.usage.errors import JSThrow, UnresolvedName, UnsupportedSyntax
from analyzer.usage.evaluator import Interpreter
from analyzer.usage.locate import MemoryLocator
from analyzer.usage.values import UNDEFINED, from_python, json_stringify, number_to_string, to_python


def run(body: str, *args: object, params: str = "") -> object:
    """Evaluate `function f(params) { body }` in a one-file fixture module and return the JS value."""
    loc = MemoryLocator({"src/f.ts": f"export function f({params}): unknown {{\n{body}\n}}\n"})
    interp = Interpreter(loc)
    return interp.call(interp.function_value(loc.find("f")), [from_python(a) for a in args])


def expr(text: str, *args: object, params: str = "") -> object:
    return run(f"return {text}", *args, params=params)


def test_remainder_is_truncated_not_floored() -> None:
    assert expr("-7 % 3") == -1.0  # Python: -7 % 3 == 2
    assert expr("7 % -3") == 1.0
    assert math.isnan(expr("5 % 0"))  # Python raises ZeroDivisionError


def test_division_is_float_and_by_zero_is_infinite() -> None:
    assert expr("7 / 2") == 3.5
    assert expr("1 / 0") == math.inf
    assert expr("-1 / 0") == -math.inf


def test_or_uses_js_falsiness() -> None:
    assert expr("0 || 5") == 5.0
    assert expr('"" || "x"') == "x"
    assert expr("NaN || 3") == 3.0
    assert expr("[] || 3") != 3.0  # an empty array is truthy in JS, falsy in Python
    assert expr("!''") is True


def test_nullish_coalescing_keeps_zero_and_empty_string() -> None:
    assert expr("0 ?? 5") == 0.0
    assert expr('"" ?? "x"') == ""
    assert expr("null ?? 5") == 5.0
    assert expr("undefined ?? 5") == 5.0


def test_plus_concatenates_with_js_number_formatting() -> None:
    assert expr('"a" + 1') == "a1"
    assert expr('1 + ""') == "1"  # Python str(1.0) would give "1.0"
    assert expr('"" + 1e21') == "1e+21"
    assert expr('"" + 0.000001') == "0.000001"
    assert expr('"" + 1e-7') == "1e-7"
    assert expr("0.1 + 0.2") == pytest.approx(0.30000000000000004)
    assert expr('"" + (0.1 + 0.2)') == "0.30000000000000004"
    assert expr('1 + 2 + "3"') == "33"


def test_number_to_string_matches_ecmascript() -> None:
    cases = {1.0: "1", -0.0: "0", 100.0: "100", 1e20: "100000000000000000000", 1.5e-7: "1.5e-7",
             123.456: "123.456", 2.0**53: "9007199254740992", math.nan: "NaN", -math.inf: "-Infinity"}
    for value, text in cases.items():
        assert number_to_string(value) == text


def test_strict_equality_has_no_coercion_and_nan_is_unequal() -> None:
    assert expr("NaN !== NaN") is True
    assert expr('1 === "1"') is False
    assert expr("null === undefined") is False
    assert expr("null == undefined") is True
    assert expr("0 === -0") is True
    assert expr("true === 1") is False  # Python: True == 1


def test_optional_chaining_short_circuits_whole_chain() -> None:
    assert expr("o?.a.b.c", None, params="o: any") is UNDEFINED
    assert expr("o.a?.b", {"a": None}, params="o: any") is UNDEFINED
    assert expr("o.f?.(1)", {}, params="o: any") is UNDEFINED
    with pytest.raises(JSThrow, match="Cannot read properties of undefined"):
        expr("(o?.a).b", None, params="o: any")


def test_undefined_is_not_null() -> None:
    assert expr("typeof x", params="x?: number") == "undefined"
    assert expr("typeof null") == "object"
    assert json_stringify(expr("({ a: undefined, b: null })")) == '{"b":null}'


def test_conditional_spread_and_origin_lines() -> None:
    body = "const u = { a: 1, ...(n > 0 ? { hit: n } : {}), ...(n > 5 ? { big: true } : {}) }\nreturn u"
    out = run(body, 3, params="n: number")
    assert to_python(out) == {"a": 1, "hit": 3}
    assert out.origins["hit"].line == 2  # the pair inside the spread, line 2 of the fixture file


def test_for_of_with_break_and_continue() -> None:
    body = ("let s = 0\nfor (const x of xs) {\n  if (x === 2) continue\n  if (x > 4) break\n  s += x\n}\n"
            "return s")
    assert run(body, [1, 2, 3, 5, 100], params="xs: number[]") == 4.0


def test_classic_for_while_and_compound_assignment() -> None:
    body = ("let lo = 0\nlet hi = 100\nwhile (lo < hi) {\n  const mid = Math.floor((lo + hi + 1) / 2)\n"
            "  if (mid * mid <= n) { lo = mid } else { hi = mid - 1 }\n}\n"
            "let acc = ''\nfor (let i = 0; i < 3; i += 1) acc += i\nlet z: number | undefined\nz ??= 7\n"
            "let w = 0\nw ||= 9\nreturn [lo, acc, z, w]")
    assert to_python(run(body, 50, params="n: number")) == [7, "012", 7, 9]


def test_repeat_and_template_literal() -> None:
    assert expr("`99.${'9'.repeat(n - 1)}${10 - 3}`", 3, params="n: number") == "99.997"
    assert expr("`a${1.5}b${null}c${[1, 2]}`") == "a1.5bnullc1,2"
    with pytest.raises(JSThrow, match="RangeError"):
        expr("'x'.repeat(-1)")


def test_math_round_ties_toward_positive_infinity() -> None:
    assert expr("Math.round(-2.5)") == -2.0  # Python round(-2.5) == -2 but round(2.5) == 2
    assert expr("Math.round(2.5)") == 3.0
    assert expr("Math.max()") == -math.inf
    assert math.isnan(expr("Math.max(1, NaN)"))


def test_type_syntax_is_ignored() -> None:
    assert expr("(x as number) + (y! satisfies number)", 1, 2, params="x: unknown, y?: number") == 3.0


def test_destructuring_assignment_and_defaults() -> None:
    body = "let a: number\nlet b: number\n;({ a, b } = o)\nconst { c = 5, ...rest } = o\nreturn [a, b, c, rest]"
    assert to_python(run(body, {"a": 1, "b": 2, "d": 4}, params="o: any")) == [1, 2, 5, {"a": 1, "b": 2, "d": 4}]


def test_array_methods_and_closures() -> None:
    body = "const k = 10\nreturn xs.map(x => x + k).filter(x => x % 2 === 0).reduce((s, x) => s + x, 0)"
    assert run(body, [1, 2, 3, 4], params="xs: number[]") == 26.0


def test_const_reassignment_throws() -> None:
    with pytest.raises(JSThrow, match="constant"):
        run("const a = 1\na = 2\nreturn a")


def test_unsupported_syntax_names_node_type_and_line() -> None:
    with pytest.raises(UnsupportedSyntax) as info:
        run("const a = 1\nclass K {}\nreturn a")
    assert "class_declaration" in str(info.value)
    assert "fixture:src/f.ts:3" in str(info.value)
    with pytest.raises(UnsupportedSyntax, match=r"regex.*src/f.ts:2"):
        run("return /a/.test('a')")


def test_non_relative_imports_are_not_guessed() -> None:
    loc = MemoryLocator({"m.ts": "import { z } from 'zod'\nexport function f() { return z }\n"})
    interp = Interpreter(loc)
    with pytest.raises(UnresolvedName, match="'zod'"):
        interp.call(interp.function_value(loc.find("f")), [])


def test_calls_follow_same_module_and_relative_imports() -> None:
    loc = MemoryLocator({
        "src/a.ts": "import { twice } from './b.js'\nconst BASE = 3\nexport function f(x: number) "
                    "{ return helper(x) + BASE }\nfunction helper(x: number) { return twice(x) }\n",
        "src/b.ts": "export const twice = (x: number): number => x * 2\n",
    })
    interp = Interpreter(loc)
    assert interp.call(interp.function_value(loc.find("f")), [5.0]) == 13.0
    assert set(interp.touched["src/a.ts"]) == {"helper", "BASE"}
    assert set(interp.touched["src/b.ts"]) == {"twice"}


def test_let_loop_bindings_are_per_iteration_and_switch_falls_through() -> None:
    body = ("const fs: any[] = []\nfor (let i = 0; i < 3; i++) fs.push(() => i)\n"
            "let n = 0\nfor (;;) { n++; if (n > 4) break }\n"
            "let s = ''\nswitch (k) {\n  case 1: s += 'a'\n  case 2: s += 'b'; break\n  default: s += 'c'\n}\n"
            "return [fs.map(f => f()), n, s]")
    assert to_python(run(body, 1, params="k: number")) == [[0, 1, 2], 5, "ab"]
    assert to_python(run(body, 9, params="k: number"))[2] == "c"


def test_to_fixed_rounds_the_binary_value() -> None:
    assert expr("(1.005).toFixed(2)") == "1.00"  # 1.005 is stored as 1.00499999999999989…
    assert expr("(2.5).toFixed(0)") == "3"
    assert expr("(99.99).toFixed(1)") == "100.0"


def test_callee_with_a_parse_error_is_refused() -> None:
    loc = MemoryLocator({"m.ts": "export function f() { return g() }\nfunction g() { return 1 +* 2 }\n"})
    interp = Interpreter(loc)
    with pytest.raises(UnsupportedSyntax, match=r"ERROR.*m.ts:2"):
        interp.call(interp.function_value(loc.find("f")), [])
