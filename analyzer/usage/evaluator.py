"""A TypeScript-subset interpreter over tree-sitter nodes, with JavaScript semantics.

Why an interpreter and not a re-implementation: the usage mappings change between upstream versions, so the
ledger must come from executing the pinned functions themselves. Why not Node: the analyzer never runs
upstream code with a real JavaScript engine (safety property); this evaluator only knows pure data and
arithmetic. Type annotations, `as`, `satisfies` and `!` are skipped; any node type outside the subset raises
`UnsupportedSyntax` naming the node type and file:line, so nothing is ever guessed.

Calls to other functions resolve lexically, then through the module's top-level declarations and its
imports (via a `FunctionLocator`), and run in this evaluator too.

The interpreter is split along its concerns: this module holds module linking (top-level declarations,
imports, exports), expressions and calls; `statements` executes statements, `operators` applies JS
operators and assignments, `scope` holds scopes and control-flow signals, `literals` reads number and
string literals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analyzer.usage import builtins
from analyzer.usage.errors import JSThrow, UnresolvedName, UnsupportedSyntax
from analyzer.usage.jsliterals import decode_string, parse_number
from analyzer.usage.locate import FunctionLocator, LocatedFunction, SourceModule, unwrap
from analyzer.usage.operators import Operators
from analyzer.usage.scope import (
    MAX_DEPTH,
    OBJECT_PROTOTYPE_NAMES,
    SHORT,
    TDZ,
    TYPE_CHILDREN,
    Break,
    Continue,
    Return,
    Scope,
    is_optional,
    statements,
)
from analyzer.usage.statements import Statements
from analyzer.usage.values import (
    UNDEFINED,
    JSArray,
    JSFunction,
    JSObject,
    NativeFunction,
    from_python,
    is_nullish,
    js_len,
    to_string,
    truthy,
    typeof,
)


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
    """Runs located upstream functions on JS values; one instance per (repo, commit). Evaluates expressions
    itself and owns the statement and operator parts, each handed what it asks (see docs/design.md,
    "Splitting a recursive walker"); the analysis does not pause the cyclic GC around a replay, so the
    parts' references back to it need no release."""

    def __init__(self, locator: FunctionLocator) -> None:
        self.operators = Operators(self)
        self.statements = Statements(self, self.operators)
        self.operators.statements = self.statements
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

    # ---- expressions --------------------------------------------------------------------------------

    def eval(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        v = self._eval(node, scope, mod)
        return UNDEFINED if v is SHORT else v

    def _eval(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        t = node.type
        if t == "number":
            return parse_number(mod.text(node), mod.where(node))
        if t == "string":
            return decode_string(node, mod)
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
            return self.operators.binary(node, scope, mod)
        if t == "unary_expression":
            return self.operators.unary(node, scope, mod)
        if t == "update_expression":
            return self.operators.update(node, scope, mod)
        if t == "ternary_expression":
            branch = "consequence" if truthy(self.eval(node.child_by_field_name("condition"), scope, mod)) \
                else "alternative"
            return self.eval(node.child_by_field_name(branch), scope, mod)
        if t == "assignment_expression":
            return self.operators.assignment(node, scope, mod)
        if t == "augmented_assignment_expression":
            return self.operators.augmented(node, scope, mod)
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
            if v is TDZ:
                raise JSThrow("ReferenceError", f"Cannot access '{name}' before initialization", mod.where(node))
            return v
        ms = scope.module_scope  # None or the module's root scope
        if not isinstance(ms, ModuleScope):
            if name in self.globals:
                return self.globals[name]
            raise UnresolvedName(f"{name} is not defined (at {mod.where(node)})")
        return ms.resolve(name, mod.where(node))

    def _template(self, node: Any, scope: Scope, mod: SourceModule) -> str:
        def substitute(c: Any) -> str:
            return to_string(self.operators.to_primitive(self.eval(c.named_children[0], scope, mod), mod, c))

        return decode_string(node, mod, substitute, "a template literal")

    def property_key(self, key: Any, scope: Scope, mod: SourceModule) -> str:
        if key.type in ("property_identifier", "identifier", "shorthand_property_identifier",
                        "shorthand_property_identifier_pattern"):
            return mod.text(key)
        if key.type == "string":
            return decode_string(key, mod)
        if key.type == "number":
            return to_string(parse_number(mod.text(key), mod.where(key)))
        if key.type == "computed_property_name":
            return self.key_of(self.eval(key.named_children[0], scope, mod), mod, key)
        raise UnsupportedSyntax(f"{key.type} as a property key", mod.where(key))

    def key_of(self, value: Any, mod: SourceModule, node: Any) -> str:
        if isinstance(value, JSObject | JSArray | JSFunction | NativeFunction):
            raise UnsupportedSyntax("object used as a property key", mod.where(node))
        return to_string(value)

    def _object(self, node: Any, scope: Scope, mod: SourceModule) -> JSObject:
        obj = JSObject()
        for p in node.named_children:
            site = mod.site(p)
            if p.type == "pair":
                key = self.property_key(p.child_by_field_name("key"), scope, mod)
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
        if obj is SHORT:
            return SHORT
        if is_optional(node) and is_nullish(obj):
            return SHORT
        key = self.member_key(node, scope, mod)
        return self.get_member(obj, key, mod, node)

    def _chain_object(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        obj_node = node.child_by_field_name("object") if node.type != "call_expression" \
            else node.child_by_field_name("function")
        if obj_node.type in ("member_expression", "subscript_expression", "call_expression", "non_null_expression"):
            return self._eval(obj_node, scope, mod)  # keep SHORT so the whole chain short-circuits
        return self.eval(obj_node, scope, mod)

    def member_key(self, node: Any, scope: Scope, mod: SourceModule) -> str:
        if node.type == "member_expression":
            prop = node.child_by_field_name("property")
            if prop.type == "private_property_identifier":
                raise UnsupportedSyntax("private field", mod.where(prop))
            return mod.text(prop)
        return self.key_of(self.eval(node.child_by_field_name("index"), scope, mod), mod, node)

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
            if this is SHORT:
                return SHORT
            if is_optional(inner) and is_nullish(this):
                return SHORT
            fn = self.get_member(this, self.member_key(inner, scope, mod), mod, inner)
        elif inner.type == "call_expression":
            fn = self._eval(inner, scope, mod)
            if fn is SHORT:
                return SHORT
        elif fn_node.type == "import":
            raise UnsupportedSyntax("dynamic import()", mod.where(node))
        else:
            fn = self.eval(fn_node, scope, mod)
        if _is_optional_call(node) and is_nullish(fn):
            return SHORT
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
                    self.statements.exec_block(statements(body), scope, mod)
                except Return as r:
                    self.last_return_site = r.site
                    return r.value
                except (Break, Continue):
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
                self.statements.bind_pattern(pattern.named_children[0], JSArray(args[i:]), scope, mod, declare=True)
                i = len(args)
                continue
            value = args[i] if i < len(args) else UNDEFINED
            if value is UNDEFINED and default is not None:
                value = self.eval(default, scope, mod)
            self.statements.bind_pattern(pattern, value, scope, mod, declare=True)
            i += 1

    def _new(self, node: Any, scope: Scope, mod: SourceModule) -> Any:
        ctor = node.child_by_field_name("constructor")
        name = mod.text(ctor)
        if name in ("Error", "TypeError", "RangeError") and scope.find(name) is None:
            args_node = node.child_by_field_name("arguments")
            args = [self.eval(a, scope, mod) for a in args_node.named_children] if args_node else []
            return JSObject({"name": name, "message": to_string(args[0]) if args else ""})
        raise UnsupportedSyntax(f"new {name}", mod.where(node))

# ---- helpers ----------------------------------------------------------------------------------------


def _is_optional_call(node: Any) -> bool:
    return any(c.type in ("optional_chain", "?.") for c in node.children)


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
