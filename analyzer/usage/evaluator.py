"""A TypeScript-subset interpreter over tree-sitter nodes, with JavaScript semantics.

Why an interpreter and not a re-implementation: the usage mappings change between upstream versions, so the
ledger must come from executing the pinned functions themselves. Why not Node: the analyzer never runs
upstream code with a real JavaScript engine (safety property); this evaluator only knows pure data and
arithmetic. Type annotations, `as`, `satisfies` and `!` are skipped; any node type outside the subset raises
`UnsupportedSyntax` naming the node type and file:line, so nothing is ever guessed.

Calls to other functions resolve lexically, then through the module's top-level declarations and its
relative imports (via a `FunctionLocator`), and run in this evaluator too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from analyzer.usage import builtins
from analyzer.usage.errors import EvaluationError, JSThrow, UnresolvedName, UnsupportedSyntax
from analyzer.usage.locate import FunctionLocator, LocatedFunction, SourceModule, unwrap
from analyzer.usage.values import (
    UNDEFINED,
    JSArray,
    JSFunction,
    JSObject,
    NativeFunction,
    from_python,
    is_nullish,
    js_len,
    strict_equals,
    to_int32,
    to_number,
    to_string,
    to_uint32,
    truthy,
    typeof,
)

MAX_STEPS = 5_000_000
MAX_DEPTH = 200
_TDZ = object()
_SHORT = object()  # an optional chain that short-circuited
OBJECT_PROTOTYPE_NAMES = {"toString", "valueOf", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
                          "toLocaleString", "constructor", "__proto__"}
SKIPPED_STATEMENTS = {"comment", "empty_statement", "interface_declaration", "type_alias_declaration",
                      "ambient_declaration", "import_statement"}
TYPE_CHILDREN = {"type_annotation", "type_arguments", "type_parameters", "comment"}


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, value: Any, site: Any) -> None:
        self.value = value
        self.site = site


class Scope:
    """A lexical scope; `const` names are remembered so reassignment throws as in JS."""

    __slots__ = ("vars", "consts", "parent", "module_scope")

    def __init__(self, parent: Scope | None, module_scope: ModuleScope | None = None) -> None:
        self.vars: dict[str, Any] = {}
        self.consts: set[str] = set()
        self.parent = parent
        if module_scope is None and parent is not None:
            module_scope = parent.module_scope
        self.module_scope: ModuleScope | None = module_scope

    def declare(self, name: str, value: Any, const: bool = False) -> None:
        self.vars[name] = value
        if const:
            self.consts.add(name)

    def find(self, name: str) -> Scope | None:
        s: Scope | None = self
        while s is not None:
            if name in s.vars:
                return s
            s = s.parent
        return None


class ModuleScope(Scope):
    """The root scope of one module: resolves top-level declarations and imports lazily, on first use."""

    __slots__ = ("interp", "module", "_resolving")

    def __init__(self, interp: Interpreter, module: SourceModule) -> None:
        super().__init__(None)
        self.module_scope = self
        self.interp = interp
        self.module = module
        self._resolving: set[str] = set()

    def resolve(self, name: str, where: str) -> Any:
        if name in self.vars:
            return self.vars[name]
        mod = self.module
        if name in self._resolving:
            raise JSThrow("ReferenceError", f"Cannot access '{name}' before initialization", where)
        self._resolving.add(name)
        try:
            if name in mod.declarations:
                value = self.interp._declare_top_level(self, name, mod.declarations[name])
            elif name in mod.imports:
                value = self.interp._import_value(mod, mod.imports[name], where)
            elif name in self.interp.globals:
                return self.interp.globals[name]
            else:
                raise UnresolvedName(f"{name} is not declared in {mod.repo_name}:{mod.path}, not imported and not a "
                                     f"supported built-in (used at {where})")
        finally:
            self._resolving.discard(name)
        self.vars[name] = value
        return value


class Interpreter:
    """Runs located upstream functions on JS values; one instance per (repo, commit)."""

    def __init__(self, locator: FunctionLocator) -> None:
        self.locator = locator
        self.globals = builtins.make_globals()
        self._module_scopes: dict[str, ModuleScope] = {}
        self.steps = 0
        self.depth = 0
        self.last_return_site: Any = None
        self._checked: set[int] = set()  # function nodes already checked for parse errors
        # (path, top-level name) pairs whose declarations were executed, for the Node differential check
        self.touched: dict[str, dict[str, Any]] = {}
        # (path, local name) of each import that was followed → (target path, target local name; "" for JSON)
        self.import_links: dict[tuple[str, str], tuple[str, str]] = {}

    # ---- entry points -------------------------------------------------------------------------------

    def module_scope(self, module: SourceModule) -> ModuleScope:
        if module.path not in self._module_scopes:
            self._module_scopes[module.path] = ModuleScope(self, module)
        return self._module_scopes[module.path]

    def function_value(self, located: LocatedFunction) -> JSFunction:
        """A callable closure for a located function (its free names resolve in its module)."""
        scope = self.module_scope(located.module)
        self.touched.setdefault(located.module.path, {})
        return JSFunction(located.node, scope, located.module, located.qualname,
                          located.node.type == "arrow_function")

    def call(self, fn: Any, args: Sequence[Any], this: Any = UNDEFINED) -> Any:
        """Call a JS function value with JS arguments; returns a JS value."""
        return self._call(fn, this, list(args), "<caller>")

    # ---- module-level bindings ----------------------------------------------------------------------

    def _declare_top_level(self, scope: ModuleScope, name: str, decl: Any) -> Any:
        mod = scope.module
        self.touched.setdefault(mod.path, {})[name] = decl
        check_parse_errors(mod, decl)
        if decl.type == "function_declaration":
            return JSFunction(decl, scope, mod, name, False)
        if decl.type == "variable_declarator":
            kind = decl.parent.child(0).type if decl.parent is not None else "const"
            if kind != "const":
                raise UnsupportedSyntax(f"module-level '{kind}' binding {name} (mutable module state)", mod.where(decl))
            value = decl.child_by_field_name("value")
            if value is None:
                return UNDEFINED
            return self.eval(value, scope, mod)
        raise UnsupportedSyntax(decl.type, mod.where(decl))

    def _import_value(self, mod: SourceModule, binding: Any, where: str) -> Any:
        if binding.type_only:
            raise UnresolvedName(f"{binding.local} is a type-only import in {mod.path}; it has no runtime value "
                                 f"(used at {where})")
        target = self.locator.resolve_import(mod.path, binding.source)
        if target is None and binding.source.startswith("."):
            raise UnresolvedName(f"{binding.local} comes from {binding.source!r} ({mod.repo_name}:{mod.path}:"
                                 f"{binding.line}), a file that is not in the tree at this commit (used at {where})")
        if target is None:
            raise UnresolvedName(f"{binding.local} comes from {binding.source!r} ({mod.repo_name}:{mod.path}:"
                                 f"{binding.line}), which is not a relative import of this repo; the evaluator "
                                 f"follows only those (used at {where})")
        if target.endswith(".json") and binding.imported == "default":
            self.import_links[(mod.path, binding.local)] = (target, "")
            return from_python(self.locator.json_data(target))
        if binding.imported == "*":
            raise UnsupportedSyntax("namespace import (import * as …)", f"{mod.repo_name}:{mod.path}:{binding.line}")
        origin, local = self._export_target(self.locator.module(target), binding.imported, where, set())
        self.import_links[(mod.path, binding.local)] = (origin.path, local)
        return self.module_scope(origin).resolve(local, where)

    def _export_target(self, mod: SourceModule, name: str, where: str,
                       seen: set[tuple[str, str]]) -> tuple[SourceModule, str]:
        """The module and local name behind an export, following re-exports."""
        if (mod.path, name) in seen:
            raise UnresolvedName(f"circular re-export of {name} through {mod.path}")
        seen.add((mod.path, name))
        if name in mod.exports:
            return mod, mod.exports[name]
        if name in mod.reexports:
            imported, source = mod.reexports[name]
            target = self.locator.resolve_import(mod.path, source)
            if target is None:
                raise UnresolvedName(f"{name} is re-exported by {mod.path} from {source!r}, outside this repo")
            return self._export_target(self.locator.module(target), imported, where, seen)
        for source in mod.star_reexports:
            target = self.locator.resolve_import(mod.path, source)
            if target is not None:
                m = self.locator.module(target)
                if name in m.exports or name in m.reexports:
                    return self._export_target(m, name, where, seen)
        raise UnresolvedName(f"{mod.repo_name}:{mod.path} does not export {name} (imported at {where})")

    # ---- statements ---------------------------------------------------------------------------------

    def _tick(self, node: Any, mod: SourceModule) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
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
                        for name in _pattern_names(d.child_by_field_name("name"), mod):
                            scope.vars.setdefault(name, _TDZ)
            elif stmt.type == "function_declaration":
                name = mod.text(stmt.child_by_field_name("name"))
                scope.declare(name, JSFunction(stmt, scope, mod, name, False))

    def exec(self, node: Any, scope: Scope, mod: SourceModule) -> None:
        self._tick(node, mod)
        t = node.type
        if t == "expression_statement":
            self.eval(node.named_children[0], scope, mod)
        elif t == "lexical_declaration":
            const = node.child(0).type == "const"
            for d in node.named_children:
                if d.type != "variable_declarator":
                    continue
                value_node = d.child_by_field_name("value")
                value = self.eval(value_node, scope, mod) if value_node is not None else UNDEFINED
                if value_node is not None and isinstance(value, JSFunction) and not value.name:
                    value.name = mod.text(d.child_by_field_name("name"))
                self.bind_pattern(d.child_by_field_name("name"), value, scope, mod, declare=True, const=const)
        elif t == "return_statement":
            arg = node.named_children[0] if node.named_children else None
            raise _Return(self.eval(arg, scope, mod) if arg is not None else UNDEFINED, mod.site(node))
        elif t == "if_statement":
            cond = node.child_by_field_name("condition")
            if truthy(self.eval(cond, scope, mod)):
                self._exec_body(node.child_by_field_name("consequence"), scope, mod)
            else:
                alt = node.child_by_field_name("alternative")
                if alt is not None:  # else_clause
                    self._exec_body(alt.named_children[0], scope, mod)
        elif t == "statement_block":
            self.exec_block(_statements(node), Scope(scope), mod)
        elif t == "while_statement":
            cond = node.child_by_field_name("condition")
            while truthy(self.eval(cond, scope, mod)):
                self._tick(node, mod)
                try:
                    self._exec_body(node.child_by_field_name("body"), scope, mod)
                except _Break:
                    break
                except _Continue:
                    continue
        elif t == "do_statement":
            while True:
                self._tick(node, mod)
                try:
                    self._exec_body(node.child_by_field_name("body"), scope, mod)
                except _Break:
                    break
                except _Continue:
                    pass
                if not truthy(self.eval(node.child_by_field_name("condition"), scope, mod)):
                    break
        elif t == "for_statement":
            self._exec_for(node, scope, mod)
        elif t == "for_in_statement":
            self._exec_for_of(node, scope, mod)
        elif t == "break_statement":
            if node.named_children:
                raise UnsupportedSyntax("labelled break", mod.where(node))
            raise _Break()
        elif t == "continue_statement":
            if node.named_children:
                raise UnsupportedSyntax("labelled continue", mod.where(node))
            raise _Continue()
        elif t == "switch_statement":
            self._exec_switch(node, scope, mod)
        elif t == "throw_statement":
            value = self.eval(node.named_children[0], scope, mod)
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
            self.exec_block(_statements(node), Scope(scope), mod)
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
                                     for n in _pattern_names(d.child_by_field_name("name"), mod)]
            elif init.type == "variable_declaration":
                raise UnsupportedSyntax("var declaration (function-scoped hoisting)", mod.where(init))
            elif init.type not in ("empty_statement", ";"):
                self.eval(init.named_children[0] if init.type == "expression_statement" else init, loop_scope, mod)
        cond = node.child_by_field_name("condition")
        incr = node.child_by_field_name("increment")
        while True:
            self._tick(node, mod)
            if cond is not None and cond.type != ";":
                c = cond.named_children[0] if cond.type == "expression_statement" else cond
                if c.type != "empty_statement" and not truthy(self.eval(c, loop_scope, mod)):
                    break
            # each iteration gets its own copy of `let` bindings (closures capture per-iteration values)
            iter_scope = Scope(loop_scope)
            for name in per_iteration:
                iter_scope.declare(name, loop_scope.vars[name])
            try:
                self._exec_body(node.child_by_field_name("body"), iter_scope, mod)
            except _Break:
                break
            except _Continue:
                pass
            finally:
                for name in per_iteration:
                    loop_scope.vars[name] = iter_scope.vars[name]
            if incr is not None:
                self.eval(incr, loop_scope, mod)

    def _exec_for_of(self, node: Any, scope: Scope, mod: SourceModule) -> None:
        op = node.child_by_field_name("operator")
        kind = node.child_by_field_name("kind")
        if op is None or mod.text(op) != "of" or any(c.type == "await" for c in node.children):
            raise UnsupportedSyntax("for…in / for await (only for…of is supported)", mod.where(node))
        iterable = self.eval(node.child_by_field_name("right"), scope, mod)
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
            except _Break:
                break
            except _Continue:
                continue

    def _exec_switch(self, node: Any, scope: Scope, mod: SourceModule) -> None:
        value = self.eval(node.child_by_field_name("value"), scope, mod)
        body = node.child_by_field_name("body")
        cases = [c for c in body.named_children if c.type in ("switch_case", "switch_default")]
        block_scope = Scope(scope)
        start = None
        for i, case in enumerate(cases):
            if case.type == "switch_case" and strict_equals(
                    value, self.eval(case.child_by_field_name("value"), block_scope, mod)):
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
        except _Break:
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
                self._assign_name(name, value, scope, mod, pattern)
        elif t == "object_pattern":
            if is_nullish(value):
                raise JSThrow("TypeError", f"Cannot destructure '{to_string(value)}' as it is {to_string(value)}.",
                              mod.where(pattern))
            used: list[str] = []
            for p in pattern.named_children:
                if p.type == "shorthand_property_identifier_pattern":
                    key = mod.text(p)
                    used.append(key)
                    self.bind_pattern(p, self.get_member(value, key, mod, p), scope, mod, declare, const)
                elif p.type == "pair_pattern":
                    key = self._property_key(p.child_by_field_name("key"), scope, mod)
                    used.append(key)
                    self.bind_pattern(p.child_by_field_name("value"), self.get_member(value, key, mod, p),
                                      scope, mod, declare, const)
                elif p.type == "object_assignment_pattern":
                    left = p.child_by_field_name("left")
                    key = mod.text(left)
                    used.append(key)
                    v = self.get_member(value, key, mod, p)
                    if v is UNDEFINED:
                        v = self.eval(p.child_by_field_name("right"), scope, mod)
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
                value = self.eval(pattern.child_by_field_name("right"), scope, mod)
            self.bind_pattern(pattern.child_by_field_name("left"), value, scope, mod, declare, const)
        elif t in ("member_expression", "subscript_expression") and not declare:
            self._assign_target(pattern, value, scope, mod, pattern)
        elif t in ("parenthesized_expression", "non_null_expression", "as_expression", "satisfies_expression"):
            self.bind_pattern(unwrap(pattern), value, scope, mod, declare, const)
        else:
            raise UnsupportedSyntax(f"{t} as a binding pattern", mod.where(pattern))

    def _assign_name(self, name: str, value: Any, scope: Scope, mod: SourceModule, node: Any) -> None:
        s = scope.find(name)
        if s is None or isinstance(s, ModuleScope):
            raise UnsupportedSyntax(f"assignment to module-level or undeclared name {name}", mod.where(node))
        if s.vars[name] is _TDZ:
            raise JSThrow("ReferenceError", f"Cannot access '{name}' before initialization", mod.where(node))
        if name in s.consts:
            raise JSThrow("TypeError", "Assignment to constant variable.", mod.where(node))
        s.vars[name] = value

    # ---- expressions --------------------------------------------------------------------------------

    def eval(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        v = self._eval(node, scope, mod)
        return UNDEFINED if v is _SHORT else v

    def _eval(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        t = node.type
        if t == "number":
            return _parse_number(mod.text(node), mod.where(node))
        if t == "string":
            return _decode_string(node, mod)
        if t == "template_string":
            return self._template(node, scope, mod)
        if t == "identifier":
            return self.lookup(mod.text(node), scope, mod, node)
        if t == "undefined":
            return UNDEFINED
        if t == "null":
            return None
        if t == "true":
            return True
        if t == "false":
            return False
        if t in ("parenthesized_expression",):
            inner = [c for c in node.named_children if c.type not in TYPE_CHILDREN]
            return self.eval(inner[0], scope, mod)
        if t in ("as_expression", "satisfies_expression", "non_null_expression", "type_assertion"):
            inner = [c for c in node.named_children if c.type not in TYPE_CHILDREN]
            return self._eval(inner[-1] if t == "type_assertion" else inner[0], scope, mod)
        if t in ("member_expression", "subscript_expression"):
            return self._member(node, scope, mod)
        if t == "call_expression":
            return self._call_expr(node, scope, mod)
        if t == "binary_expression":
            return self._binary(node, scope, mod)
        if t == "unary_expression":
            return self._unary(node, scope, mod)
        if t == "update_expression":
            return self._update(node, scope, mod)
        if t == "ternary_expression":
            branch = "consequence" if truthy(self.eval(node.child_by_field_name("condition"), scope, mod)) \
                else "alternative"
            return self.eval(node.child_by_field_name(branch), scope, mod)
        if t == "assignment_expression":
            return self._assignment(node, scope, mod)
        if t == "augmented_assignment_expression":
            return self._augmented(node, scope, mod)
        if t == "object":
            return self._object(node, scope, mod)
        if t == "array":
            return self._array(node, scope, mod)
        if t in ("arrow_function", "function_expression", "function"):
            name_node = node.child_by_field_name("name")
            return JSFunction(node, scope, mod, mod.text(name_node) if name_node is not None else "",
                              t == "arrow_function")
        if t == "sequence_expression":
            result: Any = UNDEFINED
            for c in node.named_children:
                result = self.eval(c, scope, mod)
            return result
        if t == "this":
            s = scope.find("this")
            return s.vars["this"] if s is not None else UNDEFINED
        if t == "new_expression":
            return self._new(node, scope, mod)
        raise UnsupportedSyntax(t, mod.where(node))

    def lookup(self, name: str, scope: Scope, mod: SourceModule, node: Any) -> Any:
        s = scope.find(name)
        if s is not None and not isinstance(s, ModuleScope):
            v = s.vars[name]
            if v is _TDZ:
                raise JSThrow("ReferenceError", f"Cannot access '{name}' before initialization", mod.where(node))
            return v
        ms = scope.module_scope
        if ms is None:
            if name in self.globals:
                return self.globals[name]
            raise UnresolvedName(f"{name} is not defined (at {mod.where(node)})")
        return ms.resolve(name, mod.where(node))

    def _template(self, node: Any, scope: Scope, mod: SourceModule) -> str:
        def substitute(c: Any) -> str:
            return to_string(self._to_primitive(self.eval(c.named_children[0], scope, mod), mod, c))

        return _decode_string(node, mod, substitute, "a template literal")

    def _property_key(self, key: Any, scope: Scope, mod: SourceModule) -> str:
        if key.type in ("property_identifier", "identifier", "shorthand_property_identifier",
                        "shorthand_property_identifier_pattern"):
            return mod.text(key)
        if key.type == "string":
            return _decode_string(key, mod)
        if key.type == "number":
            return to_string(_parse_number(mod.text(key), mod.where(key)))
        if key.type == "computed_property_name":
            return self._key_of(self.eval(key.named_children[0], scope, mod), mod, key)
        raise UnsupportedSyntax(f"{key.type} as a property key", mod.where(key))

    def _key_of(self, value: Any, mod: SourceModule, node: Any) -> str:
        if isinstance(value, JSObject | JSArray | JSFunction | NativeFunction):
            raise UnsupportedSyntax("object used as a property key", mod.where(node))
        return to_string(value)

    def _object(self, node: Any, scope: Scope, mod: SourceModule) -> JSObject:
        obj = JSObject()
        for p in node.named_children:
            site = mod.site(p)
            if p.type == "pair":
                key = self._property_key(p.child_by_field_name("key"), scope, mod)
                value = self.eval(p.child_by_field_name("value"), scope, mod)
                if isinstance(value, JSFunction) and not value.name:
                    value.name = key
                obj.set(key, value, site)
            elif p.type == "shorthand_property_identifier":
                obj.set(mod.text(p), self.lookup(mod.text(p), scope, mod, p), site)
            elif p.type == "spread_element":
                src = self.eval(p.named_children[0], scope, mod)
                if isinstance(src, JSObject):
                    for k, v in src.props.items():
                        src.reads.add(k)
                        obj.set(k, v, src.origins.get(k, site))
                elif isinstance(src, JSArray):
                    for i, v in enumerate(src.items):
                        obj.set(str(i), v, site)
                elif type(src) is str:
                    for i, ch in enumerate(src):
                        obj.set(str(i), ch, site)
                elif not (is_nullish(src) or type(src) in (bool, float)):
                    raise UnsupportedSyntax(f"spread of a {typeof(src)} into an object", mod.where(p))
            elif p.type == "method_definition":
                name = mod.text(p.child_by_field_name("name"))
                if any(c.type in ("get", "set", "async", "*") for c in p.children):
                    raise UnsupportedSyntax("getter/setter/async/generator method in an object literal", mod.where(p))
                obj.set(name, JSFunction(p, scope, mod, name, False), site)
            elif p.type != "comment":
                raise UnsupportedSyntax(f"{p.type} in an object literal", mod.where(p))
        return obj

    def _array(self, node: Any, scope: Scope, mod: SourceModule) -> JSArray:
        items: list[Any] = []
        for c in node.named_children:
            if c.type == "spread_element":
                src = self.eval(c.named_children[0], scope, mod)
                if isinstance(src, JSArray):
                    items.extend(src.items)
                elif type(src) is str:
                    items.extend(src)
                else:
                    raise JSThrow("TypeError", f"{to_string(src)} is not iterable", mod.where(c))
            elif c.type != "comment":
                items.append(self.eval(c, scope, mod))
        if any(ch.type == "," and ch.prev_sibling is not None and ch.prev_sibling.type in (",", "[")
               for ch in node.children):
            raise UnsupportedSyntax("array hole", mod.where(node))
        return JSArray(items)

    # member access and calls

    def _member(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        obj = self._chain_object(node, scope, mod)
        if obj is _SHORT:
            return _SHORT
        if _is_optional(node) and is_nullish(obj):
            return _SHORT
        key = self._member_key(node, scope, mod)
        return self.get_member(obj, key, mod, node)

    def _chain_object(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        obj_node = node.child_by_field_name("object") if node.type != "call_expression" \
            else node.child_by_field_name("function")
        if obj_node.type in ("member_expression", "subscript_expression", "call_expression", "non_null_expression"):
            return self._eval(obj_node, scope, mod)  # keep _SHORT so the whole chain short-circuits
        return self.eval(obj_node, scope, mod)

    def _member_key(self, node: Any, scope: Scope, mod: SourceModule) -> str:
        if node.type == "member_expression":
            prop = node.child_by_field_name("property")
            if prop.type == "private_property_identifier":
                raise UnsupportedSyntax("private field", mod.where(prop))
            return mod.text(prop)
        return self._key_of(self.eval(node.child_by_field_name("index"), scope, mod), mod, node)

    def get_member(self, obj: Any, key: str, mod: SourceModule, node: Any) -> Any:
        where = mod.where(node)
        if isinstance(obj, JSObject):
            if key not in obj.props and key in OBJECT_PROTOTYPE_NAMES:
                raise UnsupportedSyntax(f"Object.prototype.{key}", where)
            return obj.get(key)
        if is_nullish(obj):
            raise JSThrow("TypeError", f"Cannot read properties of {to_string(obj)} (reading '{key}')", where)
        if isinstance(obj, JSArray):
            if key == "length":
                return float(len(obj.items))
            if key.isdigit():
                i = int(key)
                return obj.items[i] if i < len(obj.items) else UNDEFINED
            return builtins.array_method(obj, key, where, lambda f, this, args: self._call(f, this, args, where))
        if type(obj) is str:
            if key == "length":
                return float(js_len(obj))
            if key.isdigit():
                i = int(key)
                return obj[i] if i < len(obj) else UNDEFINED
            return builtins.string_method(obj, key, where)
        if type(obj) is float:
            return builtins.number_method(obj, key, where)
        if isinstance(obj, NativeFunction):
            if key in obj.props:
                return obj.props[key]
            raise UnsupportedSyntax(f"{obj.name}.{key}", where)
        raise UnsupportedSyntax(f"property {key!r} of a {typeof(obj)}", where)

    def _call_expr(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        fn_node = node.child_by_field_name("function")
        this: Any = UNDEFINED
        inner = unwrap(fn_node) if fn_node.type == "non_null_expression" else fn_node
        if inner.type in ("member_expression", "subscript_expression"):
            this = self._chain_object(inner, scope, mod)
            if this is _SHORT:
                return _SHORT
            if _is_optional(inner) and is_nullish(this):
                return _SHORT
            fn = self.get_member(this, self._member_key(inner, scope, mod), mod, inner)
        elif inner.type == "call_expression":
            fn = self._eval(inner, scope, mod)
            if fn is _SHORT:
                return _SHORT
        elif fn_node.type == "import":
            raise UnsupportedSyntax("dynamic import()", mod.where(node))
        else:
            fn = self.eval(fn_node, scope, mod)
        if _is_optional_call(node) and is_nullish(fn):
            return _SHORT
        args_node = node.child_by_field_name("arguments")
        if args_node.type == "template_string":
            raise UnsupportedSyntax("tagged template", mod.where(node))
        args: list[Any] = []
        for a in args_node.named_children:
            if a.type == "spread_element":
                v = self.eval(a.named_children[0], scope, mod)
                if not isinstance(v, JSArray):
                    raise UnsupportedSyntax("spread of a non-array into call arguments", mod.where(a))
                args.extend(v.items)
            elif a.type != "comment":
                args.append(self.eval(a, scope, mod))
        return self._call(fn, this, args, mod.where(node), mod.text(fn_node))

    def _call(self, fn: Any, this: Any, args: list[Any], where: str, label: str = "") -> Any:
        if isinstance(fn, NativeFunction):
            return fn.fn(this, args, where)
        if not isinstance(fn, JSFunction):
            raise JSThrow("TypeError", f"{label or to_string(fn)} is not a function", where)
        node, mod = fn.node, fn.module
        if node.id not in self._checked:
            check_parse_errors(mod, node)
            self._checked.add(node.id)
        if any(c.type in ("async", "*") for c in node.children):
            raise UnsupportedSyntax("async or generator function", mod.where(node))
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.depth = 0
            raise JSThrow("RangeError", "Maximum call stack size exceeded", where)
        try:
            scope = Scope(fn.env)
            if not fn.is_arrow:
                scope.declare("this", this)
            self._bind_params(node, args, scope, mod)
            body = node.child_by_field_name("body")
            if body.type == "statement_block":
                try:
                    self.exec_block(_statements(body), scope, mod)
                except _Return as r:
                    self.last_return_site = r.site
                    return r.value
                except (_Break, _Continue):
                    raise UnsupportedSyntax("break/continue outside a loop", mod.where(body)) from None
                self.last_return_site = mod.site(body.children[-1])
                return UNDEFINED
            value = self.eval(body, scope, mod)
            self.last_return_site = mod.site(body)
            return value
        finally:
            self.depth -= 1

    def _bind_params(self, node: Any, args: list[Any], scope: Scope, mod: SourceModule) -> None:
        params = node.child_by_field_name("parameters")
        if params is None:  # `x => …`
            single = node.child_by_field_name("parameter")
            scope.declare(mod.text(single), args[0] if args else UNDEFINED)
            return
        i = 0
        for p in params.named_children:
            if p.type == "comment":
                continue
            if p.type in ("required_parameter", "optional_parameter"):
                if any(c.type in ("accessibility_modifier", "override_modifier", "readonly") for c in p.children):
                    raise UnsupportedSyntax("parameter property", mod.where(p))
                pattern = p.child_by_field_name("pattern")
                default = p.child_by_field_name("value")
            else:
                pattern, default = p, None
            if pattern.type == "this":
                continue  # `this: T` parameter is type-only
            if pattern.type == "rest_pattern":
                self.bind_pattern(pattern.named_children[0], JSArray(args[i:]), scope, mod, declare=True)
                i = len(args)
                continue
            value = args[i] if i < len(args) else UNDEFINED
            if value is UNDEFINED and default is not None:
                value = self.eval(default, scope, mod)
            self.bind_pattern(pattern, value, scope, mod, declare=True)
            i += 1

    def _new(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        ctor = node.child_by_field_name("constructor")
        name = mod.text(ctor)
        if name in ("Error", "TypeError", "RangeError") and scope.find(name) is None:
            args_node = node.child_by_field_name("arguments")
            args = [self.eval(a, scope, mod) for a in args_node.named_children] if args_node else []
            return JSObject({"name": name, "message": to_string(args[0]) if args else ""})
        raise UnsupportedSyntax(f"new {name}", mod.where(node))

    # operators

    def _to_primitive(self, v: Any, mod: SourceModule, node: Any) -> Any:
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
        return to_number(self._to_primitive(v, mod, node))

    def _binary(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        op = mod.text(node.child_by_field_name("operator"))
        left = self.eval(node.child_by_field_name("left"), scope, mod)
        if op == "&&":
            return self.eval(node.child_by_field_name("right"), scope, mod) if truthy(left) else left
        if op == "||":
            return left if truthy(left) else self.eval(node.child_by_field_name("right"), scope, mod)
        if op == "??":
            return self.eval(node.child_by_field_name("right"), scope, mod) if is_nullish(left) else left
        right = self.eval(node.child_by_field_name("right"), scope, mod)
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
            lp, rp = self._to_primitive(left, mod, node), self._to_primitive(right, mod, node)
            if type(lp) is str or type(rp) is str:
                return to_string(lp) + to_string(rp)
            return to_number(lp) + to_number(rp)
        if op in ("<", ">", "<=", ">="):
            lp, rp = self._to_primitive(left, mod, node), self._to_primitive(right, mod, node)
            if type(lp) is str and type(rp) is str:
                return _ordered(op, lp.encode("utf-16-be"), rp.encode("utf-16-be"))
            x, y = to_number(lp), to_number(rp)
            if math.isnan(x) or math.isnan(y):
                return False
            return _ordered(op, x, y)
        if op == "in":
            if not isinstance(right, JSObject):
                raise UnsupportedSyntax("'in' on a non-plain object", mod.where(node))
            return self._key_of(left, mod, node) in right.props
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

    def _unary(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        op = mod.text(node.child_by_field_name("operator"))
        arg = node.child_by_field_name("argument")
        if op == "typeof":
            if arg.type == "identifier" and scope.find(mod.text(arg)) is None and scope.module_scope is not None:
                try:
                    return typeof(self.eval(arg, scope, mod))
                except UnresolvedName:
                    raise UnsupportedSyntax("typeof of an unresolvable name", mod.where(node)) from None
            return typeof(self.eval(arg, scope, mod))
        if op == "delete":
            target = unwrap(arg)
            if target.type not in ("member_expression", "subscript_expression"):
                raise UnsupportedSyntax("delete of a non-property", mod.where(node))
            obj = self.eval(target.child_by_field_name("object"), scope, mod)
            if not isinstance(obj, JSObject):
                raise UnsupportedSyntax("delete on a non-plain object", mod.where(node))
            key = self._member_key(target, scope, mod)
            obj.props.pop(key, None)
            obj.origins.pop(key, None)
            return True
        v = self.eval(arg, scope, mod)
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

    def _update(self, node: Any, scope: Scope, mod: SourceModule) -> float:
        arg = node.child_by_field_name("argument")
        op = "++" if "++" in mod.text(node) else "--"
        prefix = node.children[0].type in ("++", "--")
        old = self._num(self.eval(arg, scope, mod), mod, node)
        new = old + 1 if op == "++" else old - 1
        self._assign_target(arg, new, scope, mod, node)
        return new if prefix else old

    def _assignment(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        left = node.child_by_field_name("left")
        value = self.eval(node.child_by_field_name("right"), scope, mod)
        if left.type in ("object_pattern", "array_pattern"):
            self.bind_pattern(left, value, scope, mod, declare=False)
        else:
            self._assign_target(left, value, scope, mod, node)
        return value

    def _augmented(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        left = node.child_by_field_name("left")
        op = mod.text(node.child_by_field_name("operator"))[:-1]
        current = self.eval(left, scope, mod)
        right_node = node.child_by_field_name("right")
        if op in ("&&", "||", "??"):
            keep = {"&&": not truthy(current), "||": truthy(current), "??": not is_nullish(current)}[op]
            if keep:
                return current
            value = self.eval(right_node, scope, mod)
        else:
            value = self.binary_op(op, current, self.eval(right_node, scope, mod), mod, node)
        self._assign_target(left, value, scope, mod, node)
        return value

    def _assign_target(self, target: Any, value: Any, scope: Scope, mod: SourceModule, node: Any) -> None:
        target = unwrap(target)
        if target.type == "identifier":
            self._assign_name(mod.text(target), value, scope, mod, node)
            return
        if target.type not in ("member_expression", "subscript_expression"):
            raise UnsupportedSyntax(f"assignment to {target.type}", mod.where(target))
        if _is_optional(target):
            raise UnsupportedSyntax("assignment through optional chaining", mod.where(target))
        obj = self.eval(target.child_by_field_name("object"), scope, mod)
        key = self._member_key(target, scope, mod)
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


# ---- helpers ----------------------------------------------------------------------------------------


def _statements(block: Any) -> list[Any]:
    return [c for c in block.named_children if c.type != "comment"]


def _is_optional(node: Any) -> bool:
    return any(c.type in ("optional_chain", "?.") for c in node.children)


def _is_optional_call(node: Any) -> bool:
    return any(c.type in ("optional_chain", "?.") for c in node.children)


def _pattern_names(pattern: Any, mod: SourceModule) -> list[str]:
    if pattern is None:
        return []
    if pattern.type in ("identifier", "shorthand_property_identifier_pattern"):
        return [mod.text(pattern)]
    names: list[str] = []
    for c in pattern.named_children:
        if c.type == "pair_pattern":
            names += _pattern_names(c.child_by_field_name("value"), mod)
        elif c.type in ("object_assignment_pattern", "assignment_pattern"):
            names += _pattern_names(c.child_by_field_name("left"), mod)
        elif c.type in ("identifier", "shorthand_property_identifier_pattern", "object_pattern", "array_pattern",
                        "rest_pattern"):
            names += _pattern_names(c, mod) if c.type != "rest_pattern" else _pattern_names(c.named_children[0], mod)
    return names


_Ordered = TypeVar("_Ordered", bytes, float)


def _ordered(op: str, a: _Ordered, b: _Ordered) -> bool:
    """`<`, `>`, `<=`, `>=` of two numbers, or of two strings as UTF-16 code units (as JS compares them)."""
    return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


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


def _parse_number(text: str, where: str) -> float:
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


def _decode_string(node: Any, mod: SourceModule, substitute: Callable[[Any], str] | None = None,
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


def check_parse_errors(mod: SourceModule, node: Any) -> None:
    """Refuse to run a function whose parse tree has errors (tree-sitter recovers silently)."""
    if node.has_error:
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "ERROR" or n.is_missing:
                raise UnsupportedSyntax("ERROR (unparseable source)", mod.where(n))
            stack.extend(n.children)
        raise UnsupportedSyntax("ERROR (unparseable source)", mod.where(node))
