"""Literal text of the usage evaluator: numbers (all JS radix forms) and string escapes, as JS reads them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from analyzer.usage.errors import UnsupportedSyntax
from analyzer.usage.locate import SourceModule


def parse_number(text: str, where: str) -> float:
    t = text.replace("_", "")
    if t.endswith("n"):
        raise UnsupportedSyntax("BigInt literal", where)
    low = t.lower()
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if low.startswith(prefix):
            return float(int(t[2:], base))
    if len(t) > 1 and t[0] == "0" and t[1].isdigit():
        raise UnsupportedSyntax("legacy octal literal", where)
    return float(t)


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0",
                   "'": "'", '"': '"', "\\": "\\", "`": "`", "$": "$", "\n": "", "\r\n": ""}


def _unescape(esc: str, where: str) -> str:
    body = esc[1:]
    if body in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[body]
    if body.startswith("u{"):
        return chr(int(body[2:-1], 16))
    if body.startswith("u") and len(body) == 5:
        return chr(int(body[1:], 16))
    if body.startswith("x") and len(body) == 3:
        return chr(int(body[1:], 16))
    if len(body) == 1 and not body.isdigit():
        return body
    raise UnsupportedSyntax(f"escape sequence {esc}", where)


def decode_string(node: Any, mod: SourceModule, substitute: Callable[[Any], str] | None = None,
                   what: str = "a string literal") -> str:
    """The value of a string or template literal: fragments and escapes, plus `${…}` via `substitute`."""
    out: list[str] = []
    pos = node.start_byte + 1
    for c in node.named_children:
        if c.start_byte > pos:
            out.append(mod.source[pos:c.start_byte].decode("utf-8"))
        if c.type == "template_substitution" and substitute is not None:
            out.append(substitute(c))
        elif c.type == "escape_sequence":
            out.append(_unescape(mod.text(c), mod.where(c)))
        elif c.type == "string_fragment":
            out.append(mod.text(c))
        else:
            raise UnsupportedSyntax(f"{c.type} in {what}", mod.where(c))
        pos = c.end_byte
    if node.end_byte - 1 > pos:
        out.append(mod.source[pos:node.end_byte - 1].decode("utf-8"))
    return "".join(out)


