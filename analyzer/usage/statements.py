"""Statements of the usage evaluator: blocks and hoisting, control flow, loops, switch, destructuring.

A part of `analyzer.usage.evaluator.Interpreter`, which owns it: handed the interpreter (expression
evaluation, member access, the step budget) and the operator part (assignment targets) it asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from analyzer.usage.errors import EvaluationError, JSThrow, UnsupportedSyntax
from analyzer.usage.locate import SourceModule, unwrap
from analyzer.usage.scope import (
    MAX_STEPS,
    SKIPPED_STATEMENTS,
    TDZ,
    Break,
    Continue,
    Return,
    Scope,
    pattern_names,
    statements,
)
from analyzer.usage.values import (
    UNDEFINED,
    JSArray,
    JSFunction,
    JSObject,
    is_nullish,
    strict_equals,
    to_string,
    truthy,
    typeof,
)


class Expressions(Protocol):
    """What statements ask the interpreter: expressions, member reads, property keys, the step budget."""

    steps: int

    def eval(self, node: Any, scope: Scope, mod: SourceModule) -> Any: ...

    def get_member(self, obj: Any, key: str, mod: SourceModule, node: Any) -> Any: ...

    def property_key(self, key: Any, scope: Scope, mod: SourceModule) -> str: ...


class AssignsTargets(Protocol):
    """What statements ask the operator part: an assignment to a member or a pattern target."""

    def assign_target(self, target: Any, value: Any, scope: Scope, mod: SourceModule, node: Any) -> None: ...


class Statements:
    """Executes statements; expressions are the interpreter's (`eval`)."""

    def __init__(self, interp: Expressions, operators: AssignsTargets) -> None:
        self.interp = interp
        self.operators = operators


    def _tick(self, node: Any, mod: SourceModule) -> None:
        self.interp.steps += 1
        if self.interp.steps > MAX_STEPS:
            raise EvaluationError(f"step budget of {MAX_STEPS} exceeded at {mod.where(node)}; a loop may not end")

    def exec_block(self, stmts: Sequence[Any], scope: Scope, mod: SourceModule) -> None:
        self._hoist(stmts, scope, mod)
        for stmt in stmts:
            self.exec(stmt, scope, mod)

    def _hoist(self, stmts: Sequence[Any], scope: Scope, mod: SourceModule) -> None:
        for stmt in stmts:
            if stmt.type == "lexical_declaration":
                for d in stmt.named_children:
                    if d.type == "variable_declarator":
                        for name in pattern_names(d.child_by_field_name("name"), mod):
                            scope.vars.setdefault(name, TDZ)
            elif stmt.type == "function_declaration":
                name = mod.text(stmt.child_by_field_name("name"))
                scope.declare(name, JSFunction(stmt, scope, mod, name, False))

    def exec(self, node: Any, scope: Scope, mod: SourceModule) -> None:
        self._tick(node, mod)
        t = node.type
        if t == "expression_statement":
            self.interp.eval(node.named_children[0], scope, mod)
        elif t == "lexical_declaration":
            const = node.child(0).type == "const"
            for d in node.named_children:
                if d.type != "variable_declarator":
                    continue
                value_node = d.child_by_field_name("value")
                value = self.interp.eval(value_node, scope, mod) if value_node is not None else UNDEFINED
                if value_node is not None and isinstance(value, JSFunction) and not value.name:
                    value.name = mod.text(d.child_by_field_name("name"))
                self.bind_pattern(d.child_by_field_name("name"), value, scope, mod, declare=True, const=const)
        elif t == "return_statement":
            arg = node.named_children[0] if node.named_children else None
            raise Return(self.interp.eval(arg, scope, mod) if arg is not None else UNDEFINED, mod.site(node))
        elif t == "if_statement":
            cond = node.child_by_field_name("condition")
            if truthy(self.interp.eval(cond, scope, mod)):
                self._exec_body(node.child_by_field_name("consequence"), scope, mod)
            else:
                alt = node.child_by_field_name("alternative")
                if alt is not None:  # else_clause
                    self._exec_body(alt.named_children[0], scope, mod)
        elif t == "statement_block":
            self.exec_block(statements(node), Scope(scope), mod)
        elif t == "while_statement":
            cond = node.child_by_field_name("condition")
            while truthy(self.interp.eval(cond, scope, mod)):
                self._tick(node, mod)
                try:
                    self._exec_body(node.child_by_field_name("body"), scope, mod)
                except Break:
                    break
                except Continue:
                    continue
        elif t == "do_statement":
            while True:
                self._tick(node, mod)
                try:
                    self._exec_body(node.child_by_field_name("body"), scope, mod)
                except Break:
                    break
                except Continue:
                    pass
                if not truthy(self.interp.eval(node.child_by_field_name("condition"), scope, mod)):
                    break
        elif t == "for_statement":
            self._exec_for(node, scope, mod)
        elif t == "for_in_statement":
            self._exec_for_of(node, scope, mod)
        elif t == "break_statement":
            if node.named_children:
                raise UnsupportedSyntax("labelled break", mod.where(node))
            raise Break()
        elif t == "continue_statement":
            if node.named_children:
                raise UnsupportedSyntax("labelled continue", mod.where(node))
            raise Continue()
        elif t == "switch_statement":
            self._exec_switch(node, scope, mod)
        elif t == "throw_statement":
            value = self.interp.eval(node.named_children[0], scope, mod)
            message = to_string(value.props.get("message", "")) if isinstance(value, JSObject) else to_string(value)
            kind = to_string(value.props.get("name", "Error")) if isinstance(value, JSObject) else "Error"
            raise JSThrow(kind, message, mod.where(node))
        elif t == "function_declaration":
            pass  # hoisted by exec_block
        elif t in SKIPPED_STATEMENTS:
            pass
        else:
            raise UnsupportedSyntax(t, mod.where(node))

    def _exec_body(self, node: Any, scope: Scope, mod: SourceModule) -> None:
        """A loop/if body: a block gets its own scope; a single statement runs in a fresh one too."""
        if node.type == "statement_block":
            self.exec_block(statements(node), Scope(scope), mod)
        else:
            if node.type == "lexical_declaration":
                raise UnsupportedSyntax("lexical declaration as a single-statement body", mod.where(node))
            self.exec(node, Scope(scope), mod)

    def _exec_for(self, node: Any, scope: Scope, mod: SourceModule) -> None:
        loop_scope = Scope(scope)
        init = node.child_by_field_name("initializer")
        per_iteration: list[str] = []
        if init is not None:
            if init.type == "lexical_declaration":
                self._hoist([init], loop_scope, mod)
                self.exec(init, loop_scope, mod)
                if init.child(0).type == "let":
                    per_iteration = [n for d in init.named_children if d.type == "variable_declarator"
                                     for n in pattern_names(d.child_by_field_name("name"), mod)]
            elif init.type == "variable_declaration":
                raise UnsupportedSyntax("var declaration (function-scoped hoisting)", mod.where(init))
            elif init.type not in ("empty_statement", ";"):
                self.interp.eval(init.named_children[0] if init.type == "expression_statement" else init, loop_scope,
                                 mod)
        cond = node.child_by_field_name("condition")
        incr = node.child_by_field_name("increment")
        while True:
            self._tick(node, mod)
            if cond is not None and cond.type != ";":
                c = cond.named_children[0] if cond.type == "expression_statement" else cond
                if c.type != "empty_statement" and not truthy(self.interp.eval(c, loop_scope, mod)):
                    break
            # each iteration gets its own copy of `let` bindings (closures capture per-iteration values)
            iter_scope = Scope(loop_scope)
            for name in per_iteration:
                iter_scope.declare(name, loop_scope.vars[name])
            try:
                self._exec_body(node.child_by_field_name("body"), iter_scope, mod)
            except Break:
                break
            except Continue:
                pass
            finally:
                for name in per_iteration:
                    loop_scope.vars[name] = iter_scope.vars[name]
            if incr is not None:
                self.interp.eval(incr, loop_scope, mod)

    def _exec_for_of(self, node: Any, scope: Scope, mod: SourceModule) -> None:
        op = node.child_by_field_name("operator")
        kind = node.child_by_field_name("kind")
        if op is None or mod.text(op) != "of" or any(c.type == "await" for c in node.children):
            raise UnsupportedSyntax("for…in / for await (only for…of is supported)", mod.where(node))
        iterable = self.interp.eval(node.child_by_field_name("right"), scope, mod)
        if isinstance(iterable, JSArray):
            items = iterable.items
        elif type(iterable) is str:
            items = list(iterable)
        else:
            raise UnsupportedSyntax(f"for…of over a {typeof(iterable)} (only arrays and strings)", mod.where(node))
        left = node.child_by_field_name("left")
        const = kind is not None and mod.text(kind) == "const"
        i = 0
        while i < len(items):  # arrays are live: pushes during the loop are visited, as in JS
            self._tick(node, mod)
            iter_scope = Scope(scope)
            if kind is not None:
                self.bind_pattern(left, items[i], iter_scope, mod, declare=True, const=const)
            else:
                self.bind_pattern(left, items[i], iter_scope, mod, declare=False)
            i += 1
            try:
                self._exec_body(node.child_by_field_name("body"), iter_scope, mod)
            except Break:
                break
            except Continue:
                continue

    def _exec_switch(self, node: Any, scope: Scope, mod: SourceModule) -> None:
        value = self.interp.eval(node.child_by_field_name("value"), scope, mod)
        body = node.child_by_field_name("body")
        cases = [c for c in body.named_children if c.type in ("switch_case", "switch_default")]
        block_scope = Scope(scope)
        start = None
        for i, case in enumerate(cases):
            if case.type == "switch_case" and strict_equals(
                    value, self.interp.eval(case.child_by_field_name("value"), block_scope, mod)):
                start = i
                break
        if start is None:
            start = next((i for i, c in enumerate(cases) if c.type == "switch_default"), None)
        if start is None:
            return
        try:
            for case in cases[start:]:
                stmts = [c for c in case.named_children if c != case.child_by_field_name("value")]
                self.exec_block(stmts, block_scope, mod)
        except Break:
            pass

    # ---- patterns -------------------------------------------------------------------------------------

    def bind_pattern(self, pattern: Any, value: Any, scope: Scope, mod: SourceModule, declare: bool,
                     const: bool = False) -> None:
        """Bind (declare) or assign a pattern: identifiers, object and array destructuring, defaults, rest."""
        t = pattern.type
        if t in ("identifier", "shorthand_property_identifier_pattern"):
            name = mod.text(pattern)
            if declare:
                scope.declare(name, value, const)
            else:
                self.assign_name(name, value, scope, mod, pattern)
        elif t == "object_pattern":
            if is_nullish(value):
                raise JSThrow("TypeError", f"Cannot destructure '{to_string(value)}' as it is {to_string(value)}.",
                              mod.where(pattern))
            used: list[str] = []
            for p in pattern.named_children:
                if p.type == "shorthand_property_identifier_pattern":
                    key = mod.text(p)
                    used.append(key)
                    self.bind_pattern(p, self.interp.get_member(value, key, mod, p), scope, mod, declare, const)
                elif p.type == "pair_pattern":
                    key = self.interp.property_key(p.child_by_field_name("key"), scope, mod)
                    used.append(key)
                    self.bind_pattern(p.child_by_field_name("value"), self.interp.get_member(value, key, mod, p),
                                      scope, mod, declare, const)
                elif p.type == "object_assignment_pattern":
                    left = p.child_by_field_name("left")
                    key = mod.text(left)
                    used.append(key)
                    v = self.interp.get_member(value, key, mod, p)
                    if v is UNDEFINED:
                        v = self.interp.eval(p.child_by_field_name("right"), scope, mod)
                    self.bind_pattern(left, v, scope, mod, declare, const)
                elif p.type == "rest_pattern":
                    if not isinstance(value, JSObject):
                        raise UnsupportedSyntax("object rest pattern on a non-plain object", mod.where(p))
                    rest = JSObject()
                    for k, v in value.props.items():
                        if k not in used:
                            rest.set(k, v, value.origins.get(k))
                    self.bind_pattern(p.named_children[0], rest, scope, mod, declare, const)
                elif p.type != "comment":
                    raise UnsupportedSyntax(p.type, mod.where(p))
        elif t == "array_pattern":
            if not isinstance(value, JSArray):
                raise UnsupportedSyntax("array destructuring of a non-array", mod.where(pattern))
            i = 0
            for p in pattern.named_children:
                if p.type == "rest_pattern":
                    self.bind_pattern(p.named_children[0], JSArray(value.items[i:]), scope, mod, declare, const)
                    break
                v = value.items[i] if i < len(value.items) else UNDEFINED
                self.bind_pattern(p, v, scope, mod, declare, const)
                i += 1
        elif t == "assignment_pattern":
            if value is UNDEFINED:
                value = self.interp.eval(pattern.child_by_field_name("right"), scope, mod)
            self.bind_pattern(pattern.child_by_field_name("left"), value, scope, mod, declare, const)
        elif t in ("member_expression", "subscript_expression") and not declare:
            self.operators.assign_target(pattern, value, scope, mod, pattern)
        elif t in ("parenthesized_expression", "non_null_expression", "as_expression", "satisfies_expression"):
            self.bind_pattern(unwrap(pattern), value, scope, mod, declare, const)
        else:
            raise UnsupportedSyntax(f"{t} as a binding pattern", mod.where(pattern))

    def assign_name(self, name: str, value: Any, scope: Scope, mod: SourceModule, node: Any) -> None:
        s = scope.find(name)
        if s is None or s is s.module_scope:
            raise UnsupportedSyntax(f"assignment to module-level or undeclared name {name}", mod.where(node))
        if s.vars[name] is TDZ:
            raise JSThrow("ReferenceError", f"Cannot access '{name}' before initialization", mod.where(node))
        if name in s.consts:
            raise JSThrow("TypeError", "Assignment to constant variable.", mod.where(node))
        s.vars[name] = value

