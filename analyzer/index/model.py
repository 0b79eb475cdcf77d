"""The facts extracted from one source file: the contract between extraction and resolution.

Extraction (tree-sitter queries) produces a `FileFacts` per file and knows nothing of other files;
resolution (modules, calls, dispatch rules) reads only these records. Everything is plain data, so the
per-blob cache can store a `FileFacts` as positional rows (`analyzer/index/cache.py`).

Conventions
- Lines are 1-based; `end_line` is inclusive.
- `qualname` is unique within a file and dotted by lexical nesting of *named* things:
  `Agent`, `Agent.step`, `Agent.constructor`, `helper`, `createModels`,
  an object-literal function property gets its owner's qualname plus its key
  (`LlmRuntime.prepareCall.stream`, or `providers.openai` for a module-level `const providers = {…}`).
  Repeated names (overloads, redeclarations) keep the first; later ones get a `#2`, `#3` suffix.
- `scope` on calls/bindings/objects is the qualname of the nearest enclosing *named* definition, or
  None at module level. Calls inside anonymous closures, callbacks and IIFEs belong to that scope,
  with `nested` counting the anonymous function levels in between (0 = directly in the body).
- Type texts are stored as written (`Promise<PreparedLlmCall>`, `LlmAdapter | undefined`); helpers
  in `analyzer.index.types` reduce them to candidate class names.
- Callee chains: `this.loopCtx.llm.stream(x)` → ["this", "loopCtx", "llm", "stream"];
  `preparedCall?.stream(r)` → ["preparedCall", "stream"] with optional=True; `f()` → ["f"];
  `new Foo()` → ["Foo"] with kind "new"; `super(ctx, 'llm')` → ["super"] with kind "super";
  `super.m()` → ["super", "m"]; a root that is itself a call keeps its callee text with "()" appended
  (`createModels().stream()` → ["createModels()", "stream"]; `new P(f).paint()` → ["new P()", "paint"]);
  any other root is "<expr>";
  computed members keep a constant key: `a[K]()` → ["a", "[K]"], `a[M.K]()` → ["a", "[M.K]"],
  `a["k"]()` → ["a", "k"]; any other index → ["a", "[]"]; a literal root (a template literal's `.normalize()`,
  `"x".trim()`, `[1].map()`) is "<literal>".
- Declaration merging (`type CallId` + `function CallId`, `interface Context` + `class Context`): the
  value half keeps the plain qualname, the type half gets a `#type` suffix (`CallId#type`,
  `Context#type.effect`); each half names the other in `merges`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Final

DEFINITION_KINDS = (
    "function",  # function declaration / `const f = () => …` / `const f = function () {…}`
    "class",
    "interface",
    "type_alias",  # `type X = { … }` (object-shaped types are treated like interfaces)
    "enum",
    "method",  # class or interface method (incl. abstract and signatures)
    "getter",
    "setter",
    "constructor",
    "object_method",  # function-valued property of an object literal
)


# The four most numerous records (1.2 million of 1.4 million on the real repos: calls, their arguments,
# object properties, bindings) spell out `__init__` (`init=False`): compiled with mypyc, a written
# initialiser is a native call, the dataclass-generated one stays interpreted (about 6x slower per record).
# A test keeps each one equal to the generated one (same parameters, order and defaults).


@dataclass(slots=True)
class Param:
    """A parameter; `is_property` marks constructor parameter properties (`private readonly s: S`)."""

    name: str
    type: str | None = None
    is_property: bool = False
    optional: bool = False


@dataclass(slots=True)
class Definition:
    """A named function, class, interface, method or object-literal function property."""

    qualname: str
    name: str
    kind: str
    line: int
    end_line: int
    parent: str | None = None  # enclosing definition's qualname (the class for methods)
    exported: bool = False  # declared with `export` (export lists are in `FileFacts.exports`)
    default_export: bool = False
    modifiers: list[str] = field(default_factory=list)  # static, abstract, async, private, declare, …
    params: list[Param] = field(default_factory=list)
    return_type: str | None = None
    extends: list[str] = field(default_factory=list)  # type texts (class: ≤1, interface: many)
    implements: list[str] = field(default_factory=list)
    signature: str = ""  # the declaration's first line(s) up to the body, whitespace-folded
    body_hash: str = ""  # hash of the normalised tokens (no comments, no whitespace differences)
    ambient_module: str | None = None  # `declare module 'x' { … }` that encloses it (augmentations)
    # object_method only: how the enclosing object literal is used (see ObjectLiteral.holder)
    object_id: str | None = None
    returns_new: list[str] = field(default_factory=list)  # classes of `return new X(…)` in its body
    returns_chain: list[str] | None = None  # unannotated: the first `return a.b.c` in its own body
    has_body: bool = True  # False for interface members, abstract methods, `declare`d and `.d.ts` signatures
    merges: str | None = None  # declaration merging: the qualname of the other half (see module docstring)
    # interface/object-type method overloads (`on(e: "a", h: A)`, `on(e: "b", h: B)`) are one member: the first
    # signature is the Definition; the parameters of the others follow here back to back, `overload_sizes`
    # says how many each has (flat lists keep the positional cache codec simple); see `overload_params()`
    overload_params: list[Param] = field(default_factory=list)
    overload_sizes: list[int] = field(default_factory=list)

    def signatures(self) -> list[list[Param]]:
        """Every signature's parameters: its own, then each further overload's."""
        out, at = [self.params], 0
        for n in self.overload_sizes:
            out.append(self.overload_params[at:at + n])
            at += n
        return out


# The field name under which an interface's call signature (`interface Fn { (ctx: C): R }`) is stored,
# typed as the equivalent function type `(ctx: C) => R`; no TypeScript member can have this name.
CALL_SIGNATURE_FIELD = "()"


@dataclass(slots=True)
class Field:
    """A class field, interface/type property, or constructor parameter property."""

    owner: str  # qualname of the class/interface/type alias
    name: str
    line: int
    type: str | None = None  # declared annotation text
    new_class: str | None = None  # initialiser `new X(…)` → "X"
    init_callee: list[str] | None = None  # initialiser call chain (`= createModels()` → ["createModels"])
    is_static: bool = False
    from_parameter: bool = False  # constructor parameter property
    is_method_signature: bool = False  # interface member written as `m(): T` (also a Definition)


@dataclass(slots=True, init=False)
class Binding:
    """A local or module variable whose type can be inferred: annotation, `new`, call result."""

    scope: str | None
    name: str
    line: int
    type: str | None = None
    new_class: str | None = None
    init_callee: list[str] | None = None  # `const m = createModels()` / `await this.build()` → chain
    destructure_key: str | None = None  # `const { a: b } = f()` → name "b", key "a"
    init_chain: list[str] | None = None  # `const x = this.adapters` → ["this", "adapters"] (aliases)
    kind: str = "const"  # const | let | var | using | param | for_of | catch
    exported: bool = False  # module-level `export const x = …` (non-function values)
    branch: int = 0  # `const m = c ? a : b` / `a ?? b`: one binding per branch (same line), numbered

    def __init__(self, scope: str | None, name: str, line: int, type: str | None = None,  # noqa: A002
                 new_class: str | None = None, init_callee: list[str] | None = None,
                 destructure_key: str | None = None, init_chain: list[str] | None = None, kind: str = "const",
                 exported: bool = False, branch: int = 0) -> None:
        self.scope = scope
        self.name = name
        self.line = line
        self.type = type
        self.new_class = new_class
        self.init_callee = init_callee
        self.destructure_key = destructure_key
        self.init_chain = init_chain
        self.kind = kind
        self.exported = exported
        self.branch = branch


@dataclass(slots=True, init=False)
class Arg:
    """One call argument, summarised for dispatch rules."""

    kind: str  # string | identifier | member | function | call | object | number | other
    text: str  # string value, identifier name, member chain "a.b.c", callee text, or source text (≤120 chars)
    object_id: str | None = None  # kind == "object": the ObjectLiteral passed
    dynamic_imports: list[str] = field(default_factory=list)  # `import('…')` specifiers inside the argument

    def __init__(self, kind: str, text: str, object_id: str | None = None,
                 dynamic_imports: list[str] | None = None) -> None:
        self.kind = kind
        self.text = text
        self.object_id = object_id
        self.dynamic_imports = [] if dynamic_imports is None else dynamic_imports


@dataclass(slots=True, init=False)
class Call:
    """A call site."""

    scope: str | None
    callee: list[str]
    line: int
    column: int
    kind: str = "call"  # call | new | super
    optional: bool = False
    nested: int = 0
    args: list[Arg] = field(default_factory=list)
    text: str = ""  # the callee expression as written (whitespace-folded, ≤120 chars)

    def __init__(self, scope: str | None, callee: list[str], line: int, column: int, kind: str = "call",
                 optional: bool = False, nested: int = 0, args: list[Arg] | None = None, text: str = "") -> None:
        self.scope = scope
        self.callee = callee
        self.line = line
        self.column = column
        self.kind = kind
        self.optional = optional
        self.nested = nested
        self.args = [] if args is None else args
        self.text = text


@dataclass(slots=True, init=False)
class ObjectProperty:
    key: str  # identifier or string key; computed keys as "[expr text]"; shorthand `{ a }` → "a"
    line: int
    value_kind: str  # function | identifier | member | call | new | string | object | spread | other
    value_text: str = ""  # identifier, chain text, callee text, string value
    value_def: str | None = None  # function values: the Definition qualname created for it
    value_object_id: str | None = None  # nested object literal
    dynamic_imports: list[str] = field(default_factory=list)  # `import('…')` anywhere in the value

    def __init__(self, key: str, line: int, value_kind: str, value_text: str = "", value_def: str | None = None,
                 value_object_id: str | None = None, dynamic_imports: list[str] | None = None) -> None:
        self.key = key
        self.line = line
        self.value_kind = value_kind
        self.value_text = value_text
        self.value_def = value_def
        self.value_object_id = value_object_id
        self.dynamic_imports = [] if dynamic_imports is None else dynamic_imports


@dataclass(slots=True)
class ObjectLiteral:
    """An object literal with at least one property (registries, returned interface objects)."""

    object_id: str  # "L<line>C<col>", unique within the file
    scope: str | None
    line: int
    end_line: int
    holder: str  # variable:<name> | return | argument:<callee text>:<index> | property:<object_id>.<key>
    #              | field:<Class>.<name> | assign:<chain text> | export_default | other
    holder_type: str | None = None  # annotation of the variable / `satisfies T` / the scope's return type
    properties: list[ObjectProperty] = field(default_factory=list)
    nested: int = 0  # anonymous function levels between `scope` and the literal (return → whose return)
    # holder `return` from a closure passed as an argument: "<callee text>:<index>" (`ui.custom((…) => {
    # return {…} })`), so the literal gets the return type of that parameter's declared function type
    returned_to: str | None = None


@dataclass(slots=True)
class Assignment:
    """`target.key = value` with a function-ish value: a function-typed property set after construction."""

    scope: str | None
    target: list[str]  # chain of the assigned member (`this.stream.onChunk` → ["this", "stream", "onChunk"])
    line: int
    value_kind: str  # identifier | member | function (an inline closure: its calls belong to `scope`)
    value_text: str = ""
    nested: int = 0


@dataclass(slots=True)
class Import:
    specifier: str
    imported: str  # exported name in the source module; "default"; "*" for namespace imports
    local: str
    line: int
    type_only: bool = False


@dataclass(slots=True)
class Export:
    exported: str  # name seen by importers; "default"; "*" for `export * from`
    line: int
    local: str | None = None  # local name (`export { a as b }` → "a"); None for `export *`
    specifier: str | None = None  # re-export source module
    type_only: bool = False


@dataclass(slots=True)
class DynamicImport:
    specifier: str
    scope: str | None
    line: int
    nested: int = 0


@dataclass(slots=True)
class Value:
    """An expression no call fact holds, recorded for the questions that look code up by what it reads or
    writes (the hazard scan's candidates, literal attribution); the resolver reads none of it.

    kind     what `text` is
    member   a member read that is not called (`process.env.HOME`, `import.meta.url`, `st.mtimeMs`): its chain
             joined by dots (see the callee chains above); in a definition once per scope and text, at its
             first line; at module level on every line
    ident    a CommonJS module-wrapper name read (`__dirname`); like members, once per scope and name
    assign   the target chain of a plain `=` to a member or an element (`this.prompt = …`, `list[i].text = …`)
    update   the operand chain of an `x++` / `--this.n` whose value is used (`id = ++this.n`) or that updates a
             member (`this.n++;`); not a bare `i++;`
    iterate  the iterated value of a `for … of` loop or a spread as written, folded (`this.items`,
             `this.byName.get(k) ?? []`)
    literal  a string or template literal of at least LITERAL_MIN_CHARS characters, as written (quotes and
             `${…}` included), not a module specifier; it ends at `line` plus its line breaks
    """

    kind: str
    scope: str | None
    line: int
    text: str


# Literal texts shorter than this are not recorded as `Value`s (a lookup needs a needle at least this long).
LITERAL_MIN_CHARS: Final = 8


@dataclass(slots=True)
class FileFacts:
    """Everything extraction knows about one file."""

    path: str  # repo-relative, forward slashes
    language: str  # typescript | tsx | javascript
    declaration_only: bool = False  # `.d.ts`: names only, no calls
    parse_errors: int = 0  # ERROR + MISSING nodes (the file is still indexed)
    extract_errors: int = 0  # constructs the extractor skipped after an internal failure (file still indexed)
    line_count: int = 0
    definitions: list[Definition] = field(default_factory=list)
    fields: list[Field] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    objects: list[ObjectLiteral] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    exports: list[Export] = field(default_factory=list)
    dynamic_imports: list[DynamicImport] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# The fields that hold lists of records, per record class: the cache codec (analyzer.index.cache) rebuilds
# positional rows from this. Stated here rather than read from the annotations because a compiled
# (mypyc) model keeps only `list` of `list[Param]` at run time; a test keeps it equal to the annotations.
RECORD_LISTS: Final[dict[type, dict[str, type]]] = {
    FileFacts: {"definitions": Definition, "fields": Field, "bindings": Binding, "calls": Call,
                "objects": ObjectLiteral, "imports": Import, "exports": Export, "dynamic_imports": DynamicImport,
                "assignments": Assignment, "values": Value},
    Definition: {"params": Param, "overload_params": Param},
    Call: {"args": Arg},
    ObjectLiteral: {"properties": ObjectProperty},
}
