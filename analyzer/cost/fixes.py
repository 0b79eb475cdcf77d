"""A fix, applied to recorded request bodies: the request as the fixed application would have written it.

Why rewrite the recorded bodies rather than re-run the app: the what-if must price *this* session — the same
turns, the same times — with only the fix changed. Fixes (`--fix SPEC`, repeatable, applied in order):

- `sort-tools`: the tool definitions sorted by name (a tool set whose order varies from request to request);
- `replace:REGEX=TEXT`: every match of REGEX in the system prompt, the tool definitions and the messages
  replaced by TEXT (a volatile value — a timestamp, a request id — replaced by a stable one);
- `move-last:REGEX`: the system prompt's lines matching REGEX moved out of it into the end of the last
  message (a dynamic segment moved after everything stable);
- `move-end:REGEX`: those lines moved to the end of the system prompt (after its stable lines).

Chat completions bodies (`messages`, the leading system/developer messages) and Anthropic Messages bodies
(a top-level `system` string or text blocks) are rewritten; anything else is left as recorded and said.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from analyzer.errors import AnalyzerError

SYSTEM_ROLES = ("system", "developer")
KINDS = ("sort-tools", "replace", "move-last", "move-end")


@dataclass(frozen=True)
class Fix:
    kind: str
    pattern: re.Pattern[str] | None = None
    text: str = ""
    spec: str = ""

    def describe(self) -> str:
        if self.kind == "sort-tools":
            return "tools sorted by name"
        assert self.pattern is not None
        if self.kind == "replace":
            return f"/{self.pattern.pattern}/ replaced by {self.text!r}"
        where = "into the last message" if self.kind == "move-last" else "to the end of the system prompt"
        return f"system lines matching /{self.pattern.pattern}/ moved {where}"


def parse_fix(spec: str) -> Fix:
    """`sort-tools`, `replace:REGEX=TEXT`, `move-last:REGEX`, `move-end:REGEX`; anything else is one error line."""
    kind, _, arg = spec.partition(":")
    if kind == "sort-tools" and not arg:
        return Fix("sort-tools", spec=spec)
    if kind not in KINDS or not arg:
        raise AnalyzerError(f"--fix {spec!r}: expected sort-tools, replace:REGEX=TEXT, move-last:REGEX or "
                            "move-end:REGEX", exit_code=2)
    text = ""
    if kind == "replace":
        arg, sep, text = arg.partition("=")
        if not sep:
            raise AnalyzerError(f"--fix {spec!r}: replace needs REGEX=TEXT (the stable value after '=')", exit_code=2)
    try:
        pattern = re.compile(arg, re.MULTILINE)
    except re.error as exc:
        raise AnalyzerError(f"--fix {spec!r}: {arg!r} is not a regular expression ({exc})", exit_code=2) from None
    return Fix(kind, pattern, text, spec)


def _replace(value: Any, fix: Fix) -> Any:
    assert fix.pattern is not None
    if isinstance(value, str):
        return fix.pattern.sub(fix.text, value)
    if isinstance(value, list):
        return [_replace(v, fix) for v in value]
    if isinstance(value, dict):
        return {k: (_replace(v, fix) if k in ("content", "text", "description", "system", "input", "arguments")
                    or isinstance(v, dict | list) else v) for k, v in value.items()}
    return value


def _tool_name(tool: Any) -> str:
    if not isinstance(tool, dict):
        return ""
    fn = tool.get("function")
    return str((fn or {}).get("name") if isinstance(fn, dict) else tool.get("name") or "")


def _split_lines(text: str, fix: Fix) -> tuple[str, str]:
    """(kept, moved): the lines of `text` matching the fix's pattern, moved out."""
    assert fix.pattern is not None
    kept: list[str] = []
    moved: list[str] = []
    for line in text.split("\n"):
        (moved if fix.pattern.search(line) else kept).append(line)
    return "\n".join(kept), "\n".join(moved)


def _append(message: dict[str, Any], text: str) -> None:
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = f"{content}\n\n{text}"
    elif isinstance(content, list):
        content.append({"type": "text", "text": text})
    else:
        message["content"] = text


def _move(body: dict[str, Any], fix: Fix) -> bool:
    moved_parts: list[str] = []
    raw = body.get("messages")
    messages: list[Any] = raw if isinstance(raw, list) else []
    if isinstance(body.get("system"), str):                                      # Anthropic, a string
        body["system"], moved = _split_lines(body["system"], fix)
        moved_parts.append(moved)
    elif isinstance(body.get("system"), list):                                   # Anthropic, text blocks
        for block in body["system"]:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                block["text"], moved = _split_lines(block["text"], fix)
                moved_parts.append(moved)
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in SYSTEM_ROLES:
            break
        if isinstance(m.get("content"), str):
            m["content"], moved = _split_lines(m["content"], fix)
            moved_parts.append(moved)
    text = "\n".join(p for p in moved_parts if p)
    if not text:
        return False
    if fix.kind == "move-end":
        if isinstance(body.get("system"), str):
            body["system"] = f"{body['system']}\n{text}"
        elif messages and isinstance(messages[0], dict) and isinstance(messages[0].get("content"), str):
            lead = [m for m in messages if isinstance(m, dict) and m.get("role") in SYSTEM_ROLES]
            lead[-1]["content"] = f"{lead[-1]['content']}\n{text}"
        return True
    if not messages:
        return False
    _append(messages[-1], text)
    return True


def apply_fixes(body: dict[str, Any], fixes: list[Fix]) -> tuple[dict[str, Any], list[str]]:
    """(the fixed body, what changed): the body is copied, never edited in place."""
    out = copy.deepcopy(body)
    said = []
    for fix in fixes:
        if fix.kind == "sort-tools":
            tools = out.get("tools")
            if isinstance(tools, list) and tools:
                ordered = sorted(tools, key=_tool_name)
                if ordered != tools:
                    said.append(fix.describe())
                out["tools"] = ordered
        elif fix.kind == "replace":
            before = repr(out)
            for key in ("system", "messages", "tools", "instructions", "input"):
                if key in out:
                    out[key] = _replace(out[key], fix)
            if repr(out) != before:
                said.append(fix.describe())
        elif _move(out, fix):
            said.append(fix.describe())
    return out, said
