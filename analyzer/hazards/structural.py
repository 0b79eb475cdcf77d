"""Structural hazards: history shapes that invalidate the cached prefix whatever the values are.

Candidates are read from the index's facts (calls of the rules' methods, writes to an element; see
`analyzer.hazards.candidates`); each candidate line is confirmed on the tree-sitter tree of its function
and kept only when that function stands on the request side (the engine's region: it reaches a request
part through the call graph).
"""

from __future__ import annotations

import re
from typing import Any

from tree_sitter import Node

from analyzer.hazards.driver import Engine, EngineResult
from analyzer.hazards.model import finding_id
from analyzer.hazards.rules import HazardRules, Structural, glob_match
from analyzer.hazards.taints import norm


def structural_hazards(engine: Engine, rules: HazardRules, res: EngineResult, repos: list[str]) -> list[dict[str, Any]]:
    if not rules.structural:
        return []
    out: dict[str, dict[str, Any]] = {}
    for repo in repos:
        for path, line in engine.candidates.structural(repo):
            node = engine.innermost(repo, path, line)
            if node is None or not any(_request_side(engine, node, siblings=r.kind == "runtime_tools")
                                       for r in rules.structural):
                continue
            pf = engine.files.get(repo, path)
            if pf is None:
                continue
            a = engine.g.nodes[node]
            for rule in rules.structural:
                if not _request_side(engine, node, siblings=rule.kind == "runtime_tools"):
                    continue
                for hit in _matches(pf, rule, line, a):
                    entry = _entry(engine, rule, node, a, repo, path, line, hit)
                    out.setdefault(entry["id"], entry)
    return list(out.values())


def _request_side(engine: Engine, node: str, siblings: bool) -> bool:
    """Reaches a request part (or is called by a function that does), or is a method of a class whose other
    methods are (a registry written here, read there)."""
    if node in engine.request_side:
        return True
    parent = engine.g.nodes[node].get("parent")
    return siblings and bool(parent) and any(m in engine.request_side for m in engine._members(parent))


def _line_nodes(pf: Any, line: int) -> list[Node]:
    found = []
    stack = [pf.root]
    while stack:
        n = stack.pop()
        if n.start_point[0] > line - 1 or n.end_point[0] < line - 1:
            continue
        if n.start_point[0] == line - 1 and n.type in ("call_expression", "assignment_expression"):
            found.append(n)
        stack.extend(n.children)
    return found


def _local(pf: Any, fn_node: Node | None, receiver: Node) -> bool:
    """The receiver's base is a `const`/`let` of this function: a list being built, not the history."""
    base = receiver
    while base.type in ("member_expression", "subscript_expression"):
        nxt = base.child_by_field_name("object")
        if nxt is None:
            break
        base = nxt
    if base.type != "identifier" or fn_node is None:
        return False
    name = pf.text(base)
    stack = [fn_node]
    while stack:
        n = stack.pop()
        if n.type == "variable_declarator":
            target = n.child_by_field_name("name")
            if target is not None and target.type == "identifier" and pf.text(target) == name:
                return True
        stack.extend(n.children)
    return False


def _matches(pf: Any, rule: Structural, line: int, attrs: dict[str, Any]) -> list[str]:
    fn_node = pf.function_at(attrs["line"], attrs["end_line"])
    if rule.in_functions and not (glob_match(attrs.get("name", ""), rule.in_functions)
                                  or glob_match(attrs.get("qualname", ""), rule.in_functions)):
        return []
    hits = []
    for n in _line_nodes(pf, line):
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is None or fn.type != "member_expression":
                continue
            obj, prop = fn.child_by_field_name("object"), fn.child_by_field_name("property")
            if obj is None or prop is None or pf.text(prop) not in rule.methods:
                continue
            receiver = norm(pf.text(obj))
            if not glob_match(receiver, rule.receivers) or _local(pf, fn_node, obj):
                continue
            args = n.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if pf.text(prop) == "splice" and first is not None and norm(pf.text(first)).endswith(".length"):
                continue  # splice at the end is an append
            hits.append(_text(pf, n))
        elif rule.index_assignment:
            left = n.child_by_field_name("left")
            target = left
            if target is not None and target.type == "member_expression":
                target = target.child_by_field_name("object")
            if target is None or target.type != "subscript_expression":
                continue
            obj, index = target.child_by_field_name("object"), target.child_by_field_name("index")
            if obj is None or not glob_match(norm(pf.text(obj)), rule.receivers) or _local(pf, fn_node, obj):
                continue
            if index is not None and re.search(r"\.length(-1)?$", norm(pf.text(index))):
                continue  # list[list.length] = x appends; list[list.length - 1] = partial updates the stream
            hits.append(_text(pf, n))
    return hits


def _text(pf: Any, n: Node) -> str:
    t = " ".join(pf.text(n).split())
    return t if len(t) <= 100 else t[:99] + "…"


def _entry(engine: Engine, rule: Structural, node: str, a: dict[str, Any], repo: str, path: str, line: int,
           text: str) -> dict[str, Any]:
    part = "tool definitions" if rule.kind == "runtime_tools" else "message history"
    return {
        "id": finding_id(rule.name, repo, a.get("qualname", ""), text),
        "category": "structural", "rule": rule.name, "description": rule.description, "possible": False,
        "granularity": rule.granularity, "granularity_rule": rule.name, "effect": rule.effect,
        "effect_rule": rule.name, "effect_reason": rule.description,
        "sink": {"repo": repo, "path": path, "line": line, "text": text, "function": node, "part": part,
                 "rule": rule.name},
        "evidence": [f"{path}:{line}: {text} (in {a.get('qualname', '')}, which reaches a request part "
                     "through the call graph)"],
    }
