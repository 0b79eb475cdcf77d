"""Extraction records for small TS/JS shapes (analyzer.parse.extract → analyzer.index.model)."""

from __future__ import annotations

import textwrap

from analyzer.index.model import Arg, Binding, Call, DynamicImport, Export, Field, FileFacts, Import, Param
from analyzer.parse.extract import extract_facts


def facts(src: str, path: str = "src/mod.ts") -> FileFacts:
    f = extract_facts(textwrap.dedent(src).lstrip("\n").encode(), path)
    assert f.extract_errors == 0
    return f


def defs(f: FileFacts) -> dict:
    return {d.qualname: d for d in f.definitions}


def calls(f: FileFacts, scope: str | None) -> list[Call]:
    return [c for c in f.calls if c.scope == scope]


AGENT = """
import type { Session } from './session.js';

export interface Runner { run(input: string): Promise<void>; }

export abstract class Base<T> implements Runner {
  abstract run(input: string): Promise<void>;
  protected log(msg: string) { console.log(msg); }
}

export class Agent extends Base<string> implements Runner, Disposable {
  static instances = 0;
  private prompt: SystemPrompt = new SystemPrompt();
  private models = createModels();
  handler = (e: Event) => this.onEvent(e);

  constructor(private readonly session: Session, public ctx?: Context) {
    super(ctx, 'llm');
  }

  get name(): string { return this.session.id; }
  set name(v: string) { this.session.rename(v); }

  async run(input: string): Promise<void> {
    const text = this.prompt.project(input);
    const call: Prepared = await this.ctx?.llm.prepare(text);
    await call?.stream(text);
    this.log('done');
    (async () => {
      await this.models.flush();
      items.forEach((it) => { it.close(); });
    })();
    const loader = () => import('./lazy.js');
  }

  static create(): Agent { return new Agent(sessionFor('x')); }
}
"""


def test_classes_heritage_and_members() -> None:
    d = defs(facts(AGENT))
    assert d["Runner"].kind == "interface" and d["Runner"].exported
    assert d["Runner.run"].kind == "method" and d["Runner.run"].return_type == "Promise<void>"
    base = d["Base"]
    assert (base.kind, base.modifiers, base.implements, base.extends) == ("class", ["abstract"], ["Runner"], [])
    assert d["Base.run"].modifiers == ["abstract"] and d["Base.run"].parent == "Base"
    assert d["Base.log"].modifiers == ["protected"]
    agent = d["Agent"]
    assert agent.extends == ["Base<string>"] and agent.implements == ["Runner", "Disposable"]
    assert (agent.line, agent.end_line) == (10, 36)
    assert agent.signature == "class Agent extends Base<string> implements Runner, Disposable"
    assert d["Agent.constructor"].kind == "constructor"
    assert d["Agent.constructor"].params == [
        Param("session", "Session", True, False), Param("ctx", "Context", True, True)
    ]
    assert (d["Agent.name"].kind, d["Agent.name#set"].kind) == ("getter", "setter")  # one property, two accessors
    assert d["Agent.run"].modifiers == ["async"] and d["Agent.run"].params == [Param("input", "string")]
    assert d["Agent.create"].modifiers == ["static"]
    assert d["Agent.create"].returns_new == ["Agent"]
    assert d["Agent.handler"].kind == "method" and d["Agent.handler"].params == [Param("e", "Event")]
    assert d["Agent.run.loader"].kind == "function" and d["Agent.run.loader"].parent == "Agent.run"


def test_fields_and_parameter_properties() -> None:
    fields = {(x.owner, x.name): x for x in facts(AGENT).fields}
    assert fields[("Agent", "instances")] == Field("Agent", "instances", 11, is_static=True)
    assert fields[("Agent", "prompt")] == Field("Agent", "prompt", 12, type="SystemPrompt", new_class="SystemPrompt")
    assert fields[("Agent", "models")] == Field("Agent", "models", 13, init_callee=["createModels"])
    assert fields[("Agent", "session")] == Field("Agent", "session", 16, type="Session", from_parameter=True)
    assert fields[("Agent", "ctx")] == Field("Agent", "ctx", 16, type="Context", from_parameter=True)
    assert fields[("Runner", "run")].is_method_signature


def test_call_shapes_scopes_and_nesting() -> None:
    f = facts(AGENT)
    ctor = calls(f, "Agent.constructor")
    assert [(c.callee, c.kind, c.args) for c in ctor] == [
        (["super"], "super", [Arg("identifier", "ctx"), Arg("string", "llm")])
    ]
    run = [(c.callee, c.optional, c.nested, c.kind) for c in calls(f, "Agent.run")]
    assert run == [
        (["this", "prompt", "project"], False, 0, "call"),
        (["this", "ctx", "llm", "prepare"], True, 0, "call"),
        (["call", "stream"], True, 0, "call"),
        (["this", "log"], False, 0, "call"),
        (["<expr>"], False, 0, "call"),  # the async IIFE itself
        (["this", "models", "flush"], False, 1, "call"),
        (["items", "forEach"], False, 1, "call"),
        (["it", "close"], False, 2, "call"),
    ]
    assert calls(f, "Agent")[0].callee == ["SystemPrompt"] and calls(f, "Agent")[0].kind == "new"
    assert [c.callee for c in calls(f, "Agent.handler")] == [["this", "onEvent"]]
    create = calls(f, "Agent.create")
    assert [(c.callee, c.kind) for c in create] == [(["Agent"], "new"), (["sessionFor"], "call")]
    assert create[0].args == [Arg("call", "sessionFor")] and create[1].args == [Arg("string", "x")]
    assert f.dynamic_imports == [DynamicImport("./lazy.js", "Agent.run.loader", 32, 0)]


def test_bindings_typed_and_inferred() -> None:
    f = facts(AGENT)
    run = {b.name: b for b in f.bindings if b.scope == "Agent.run"}
    assert run["input"] == Binding("Agent.run", "input", 23, type="string", kind="param")
    assert run["text"] == Binding("Agent.run", "text", 24, init_callee=["this", "prompt", "project"])
    assert run["call"].type == "Prepared" and run["call"].init_callee == ["this", "ctx", "llm", "prepare"]


def test_more_call_shapes() -> None:
    f = facts("""
        a?.b(); f?.(); this.f.m(); new ns.D(); a[k](); createModels().stream(); super.m(); new P(f).paint();
        """)
    got = [(c.callee, c.kind, c.optional) for c in f.calls]
    assert got == [
        (["a", "b"], "call", True),
        (["f"], "call", True),
        (["this", "f", "m"], "call", False),
        (["ns", "D"], "new", False),
        (["a", "[k]"], "call", False),
        (["createModels()", "stream"], "call", False),
        (["createModels"], "call", False),
        (["super", "m"], "call", False),
        (["new P()", "paint"], "call", False),
        (["P"], "new", False),
    ]


RUNTIME = """
export * from './types.js';
export * as helpers from './helpers.js';
export { a as b, c } from './re.js';
export type { T } from './t.js';
export { local as renamed };
export default createRuntime;

declare module 'cordis' {
  interface Context { llm: LlmRuntime }
}

type Options = { model: string; stream(req: Req): AsyncIterable<Chunk> };

export const providers = {
  openai: lazyApi(() => import('./openai.js')),
  anthropic: streamAnthropic,
  nested: { deep: () => 1 },
};

export class LlmRuntime {
  prepare(req: Req): PreparedLlmCall {
    return {
      model: req.model,
      stream: async function* () { yield* adapter.stream(req); },
    };
  }
}

export function makeCall(): PreparedLlmCall {
  const call: PreparedLlmCall = { stream: (r) => send(r) };
  return call;
}

const checked = { run() { go(); } } satisfies Runner;
register('agent/request', { handle: onRequest, order: 1 });
const { models: m, other } = createModels();
for (const adapter of this.adapters) adapter.init?.();
const arrow = async (x: number): Promise<Thing> => new Thing(x);
const fnExpr = function named() { return helper(); };
"""


def test_exports_every_form() -> None:
    f = facts(RUNTIME)
    assert f.exports == [
        Export("*", 1, None, "./types.js"),
        Export("helpers", 2, "*", "./helpers.js"),
        Export("b", 3, "a", "./re.js"),
        Export("c", 3, "c", "./re.js"),
        Export("T", 4, "T", "./t.js", type_only=True),
        Export("renamed", 5, "local"),
        Export("default", 6, "createRuntime"),
        Export("providers", 14, "providers"),
        Export("LlmRuntime", 20, "LlmRuntime"),
        Export("makeCall", 29, "makeCall"),
    ]


def test_imports_every_form() -> None:
    f = facts("""
        import type { Session } from './session.js';
        import Default, { a as b, type Prepared } from './d.js';
        import * as path from 'node:path';
        import './register.js';
        import type Only from './only.js';
        """)
    assert f.imports == [
        Import("./session.js", "Session", "Session", 1, type_only=True),
        Import("./d.js", "default", "Default", 2),
        Import("./d.js", "a", "b", 2),
        Import("./d.js", "Prepared", "Prepared", 2, type_only=True),
        Import("node:path", "*", "path", 3),
        Import("./register.js", "", "", 4),
        Import("./only.js", "default", "Only", 5, type_only=True),
    ]


def test_module_augmentation_and_type_alias_members() -> None:
    f = facts(RUNTIME)
    d = defs(f)
    assert d["Context"].kind == "interface" and d["Context"].ambient_module == "cordis"
    assert Field("Context", "llm", 9, type="LlmRuntime") in f.fields
    assert d["Options"].kind == "type_alias"
    assert d["Options.stream"].return_type == "AsyncIterable<Chunk>"
    assert Field("Options", "model", 12, type="string") in f.fields


def test_object_literals_and_holders() -> None:
    f = facts(RUNTIME)
    d = defs(f)
    objects = {o.object_id: o for o in f.objects}
    providers = objects["L14C26"]
    assert (providers.holder, providers.scope) == ("variable:providers", None)
    props = {p.key: p for p in providers.properties}
    assert (props["openai"].value_kind, props["openai"].value_text) == ("call", "lazyApi")
    assert props["openai"].dynamic_imports == ["./openai.js"]
    assert (props["anthropic"].value_kind, props["anthropic"].value_text) == ("identifier", "streamAnthropic")
    assert props["nested"].value_object_id == "L17C11"
    assert objects["L17C11"].holder == "property:L14C26.nested"
    assert d["providers.nested.deep"].kind == "object_method"

    returned = objects["L22C12"]
    assert (returned.holder, returned.holder_type) == ("return", "PreparedLlmCall")
    assert returned.scope == "LlmRuntime.prepare"
    stream = d["LlmRuntime.prepare.stream"]
    assert (stream.kind, stream.object_id, stream.modifiers) == ("object_method", "L22C12", ["async", "generator"])
    assert [p.value_def for p in returned.properties if p.key == "stream"] == ["LlmRuntime.prepare.stream"]
    assert calls(f, "LlmRuntime.prepare.stream")[0].callee == ["adapter", "stream"]

    annotated = objects["L30C33"]
    assert (annotated.holder, annotated.holder_type) == ("variable:call", "PreparedLlmCall")
    assert "makeCall.call.stream" in d
    satisfied = objects["L34C17"]
    assert (satisfied.holder, satisfied.holder_type) == ("variable:checked", "Runner")
    assert d["checked.run"].object_id == "L34C17"
    arg = objects["L35C27"]
    assert arg.holder == "argument:register:1"
    register = [c for c in f.calls if c.callee == ["register"]][0]
    assert register.args == [Arg("string", "agent/request"), Arg("object", "{ handle: onRequest, order: 1 }", "L35C27")]


def test_lazy_loader_dynamic_import_in_argument() -> None:
    f = facts(RUNTIME)
    lazy = [c for c in f.calls if c.callee == ["lazyApi"]][0]
    assert lazy.args[0].kind == "function" and lazy.args[0].dynamic_imports == ["./openai.js"]
    assert f.dynamic_imports == [DynamicImport("./openai.js", None, 15, 1)]


def test_functions_arrows_and_destructuring() -> None:
    f = facts(RUNTIME)
    d = defs(f)
    assert d["arrow"].kind == "function" and d["arrow"].modifiers == ["async"]
    assert d["arrow"].return_type == "Promise<Thing>" and d["arrow"].returns_new == ["Thing"]
    assert d["arrow"].signature == "const arrow = async (x: number): Promise<Thing> =>"
    assert d["fnExpr"].kind == "function" and calls(f, "fnExpr")[0].callee == ["helper"]
    assert d["makeCall"].exported and d["makeCall"].return_type == "PreparedLlmCall"
    module = {b.name: b for b in f.bindings if b.scope is None}
    assert module["m"] == Binding(None, "m", 36, init_callee=["createModels"], destructure_key="models")
    assert module["other"].destructure_key == "other"
    assert module["adapter"] == Binding(None, "adapter", 37, init_chain=["this", "adapters"], kind="for_of")
    assert module["providers"].exported
    assert [c for c in f.calls if c.callee == ["adapter", "init"]][0].optional


def test_default_exports() -> None:
    f = facts("""
        export default function () { work(); }
        """)
    assert defs(f)["default"].default_export and f.exports == [Export("default", 1, "default")]
    f = facts("""
        export default class Store { save() {} }
        """)
    d = defs(f)
    assert d["Store"].default_export and "Store.save" in d
    assert f.exports == [Export("default", 1, "Store")]


def test_overloads_keep_one_name_for_the_implementation() -> None:
    f = facts("""
        class A { m(a: string): void; m(a: number): void; m(a: any) { x(); } }
        function f(a: string): void;
        function f(a: any): string { y(); }
        """)
    assert sorted(defs(f)) == ["A", "A.m", "f"]
    assert [(c.scope, c.callee) for c in f.calls] == [("A.m", ["x"]), ("f", ["y"])]


def test_javascript_module() -> None:
    f = facts("""
        const { join } = require('path');
        const fs = require('fs');
        export class Store extends mix(Base) {
          #cache = new Map();
          load() { return fs.readFileSync(join('a', 'b')); }
        }
        export default { name: 'plugin', apply(ctx) { ctx.on('ready', () => done()); } };
        """, "lib/m.js")
    assert f.language == "javascript"
    assert f.imports == [Import("path", "join", "join", 1), Import("fs", "*", "fs", 2)]
    d = defs(f)
    assert d["Store"].extends == ["mix(Base)"] and "Store.load" in d
    assert Field("Store", "#cache", 4, new_class="Map") in f.fields
    plugin = [o for o in f.objects if o.holder == "export_default"][0]
    assert [p.key for p in plugin.properties] == ["name", "apply"]
    assert d["apply"].kind == "object_method"
    on = calls(f, "apply")
    assert [(c.callee, c.nested) for c in on] == [(["ctx", "on"], 0), (["done"], 1)]
    assert on[0].args[0] == Arg("string", "ready")


def test_declaration_file_names_only() -> None:
    f = facts("""
        import type { Base } from './base';
        export declare class Client extends Base { send(msg: string): Promise<void>; private conn: Connection; }
        export declare function connect(url: string): Client;
        export interface Options { retries: number }
        helper();
        const x = { a: 1 };
        """, "types/index.d.ts")
    assert f.declaration_only
    assert sorted(defs(f)) == ["Client", "Client.send", "Options", "connect"]
    assert defs(f)["connect"].modifiers == ["declare"] and defs(f)["connect"].return_type == "Client"
    assert Field("Client", "conn", 2, type="Connection") in f.fields
    assert [e.exported for e in f.exports] == ["Client", "connect", "Options"]
    assert f.imports == [Import("./base", "Base", "Base", 1, type_only=True)]
    assert (f.calls, f.bindings, f.objects, f.dynamic_imports) == ([], [], [], [])


def test_syntax_errors_are_counted_and_the_rest_is_indexed() -> None:
    f = extract_facts(b"export function ok() { good(); }\nfunction broken( { bad(;\nclass Later { m() { fine(); } }\n",
                      "src/broken.ts")
    assert f.parse_errors > 0
    assert {"ok", "Later", "Later.m"} <= set(defs(f))
    assert ("Later.m", ["fine"]) in [(c.scope, c.callee) for c in f.calls]


def test_never_raises_on_garbage() -> None:
    for blob in (b"", b"\x00\xff\xfe{{{", "const s = '\u00e9';".encode(), b"}" * 1000, b"(" * 5000):
        f = extract_facts(blob, "src/x.tsx")
        assert isinstance(f, FileFacts) and f.language == "tsx"


def test_body_hash_ignores_whitespace_and_comments_but_not_code_or_strings() -> None:
    base = "function f(a, b) {\n  return g(a, b) + 'x y';\n}\n"
    variants_same = [
        "function f( a,b ){ return g( a , b )+'x y' }\n".replace("}", ";}"),
        "function f(a, b) {\n  // note\n  return /* c */ g(a, b) + 'x y';\n}\n",
        "\n\nfunction   f(a,\n    b) {\n\treturn g(a, b)\n      + 'x y';\n}\n",
    ]
    h = defs(facts(base, "a.ts"))["f"].body_hash
    assert len(h) == 16
    for text in variants_same:
        assert defs(facts(text, "a.ts"))["f"].body_hash == h, text
    for text in ("function f(a, b) {\n  return g(b, a) + 'x y';\n}\n",
                 "function f(a, b) {\n  return g(a, b) + 'x  y';\n}\n",
                 "function f(a, b) {\n  return ga(a, b) + 'x y';\n}\n"):
        assert defs(facts(text, "a.ts"))["f"].body_hash != h, text


def test_returned_objects_know_whose_return_they_are() -> None:
    f = facts("""
        class R {
          prepare(): Promise<P> { return Object.freeze({ stream: () => go() }); }
          list(): Item[] { return xs.map((x) => ({ a: x })); }
        }
        """)
    frozen, mapped = f.objects
    assert (frozen.holder, frozen.holder_type, frozen.scope, frozen.nested) == ("return", "Promise<P>", "R.prepare", 0)
    assert defs(f)["R.prepare.stream"].object_id == frozen.object_id
    assert (mapped.holder, mapped.holder_type, mapped.scope, mapped.nested) == ("return", None, "R.list", 1)


def test_global_augmentation_and_namespaces() -> None:
    f = facts("""
        declare global { interface Window { app: App } }
        export namespace Util { export function helper() { run(); } }
        """)
    d = defs(f)
    assert d["Window"].ambient_module == "global"
    assert Field("Window", "app", 1, type="App") in f.fields
    assert [(c.scope, c.callee) for c in f.calls] == [("helper", ["run"])]


def test_type_only_star_reexport_newer_than_the_grammar() -> None:
    f = extract_facts(b"export type * from './types.ts'\nexport type * as ns from './t2.ts'\n", "src/index.ts")
    assert f.exports == [Export("*", 1, None, "./types.ts", type_only=True),
                         Export("ns", 2, "*", "./t2.ts", type_only=True)]


def test_computed_keys_literal_roots_and_conditional_bindings() -> None:
    f = facts("""
        async function g(a: A, c: boolean) {
          t[K].p(); t[M.K].q(); t["s"].r(); t[i + 1].u(); `x${a}`.normalize(); "y".trim();
          const m = c ? a.oauth : (a.apiKey ?? new Fallback());
          using lock = new Lock();
          await using conn = openConn();
          a.onChunk = print;
          a.onDone = () => done();
        }
        """)
    assert [c.callee for c in f.calls][:6] == [["t", "[K]", "p"], ["t", "[M.K]", "q"], ["t", "s", "r"],
                                               ["t", "[]", "u"], ["<literal>", "normalize"], ["<literal>", "trim"]]
    m = [b for b in f.bindings if b.name == "m"]
    assert [(b.init_chain, b.new_class, b.branch) for b in m] == [
        (["a", "oauth"], None, 0), (["a", "apiKey"], None, 1), (None, "Fallback", 2)]
    assert [(b.name, b.kind, b.new_class) for b in f.bindings if b.name == "lock"] == [("lock", "using", "Lock")]
    assert [(b.kind, b.init_callee) for b in f.bindings if b.name == "conn"] == [("using", ["openConn"])]
    assert [(a.target, a.value_kind, a.value_text) for a in f.assignments] == [
        (["a", "onChunk"], "identifier", "print"), (["a", "onDone"], "function", "")]


def test_declaration_merging_and_bodies() -> None:
    f = facts("""
        export type CallId = string & { readonly brand: "CallId" };
        export function CallId(raw: string): CallId { return raw as CallId; }
        export interface Registry { size(): number }
        export class Registry { count(): number { return 1; } }
        declare function later(): void;
        abstract class Base { abstract run(): void; stop(): void {} }
        """)
    got = {d.qualname: (d.kind, d.has_body, d.merges) for d in f.definitions}
    assert got["CallId"] == ("function", True, "CallId#type")
    assert got["CallId#type"] == ("type_alias", False, "CallId")
    assert got["Registry"] == ("class", True, "Registry#type")
    assert got["Registry#type"] == ("interface", False, "Registry")
    assert got["Registry#type.size"][:2] == ("method", False) and got["Registry.count"][:2] == ("method", True)
    assert got["later"][1] is False and got["Base.run"][1] is False and got["Base.stop"][1] is True


def test_unannotated_returns_keep_their_chain() -> None:
    f = facts("""
        class A {
          get current() { return this.session.agent; }
          typed(): B { return this.b; }
          later() { const run = () => { return this.x; }; return undefined; }
        }
        """)
    got = {d.qualname: d.returns_chain for d in f.definitions}
    assert got["A.current"] == ["this", "session", "agent"]
    assert got["A.typed"] is None  # annotated: the annotation says it
    assert got["A.later"] is None  # a closure's return is not the method's; `undefined` types nothing


def test_jsx_elements_give_their_attributes_as_a_props_object() -> None:
    source = textwrap.dedent("""
        export function Screen({ done }: P) {
          return <Dialog.Frame title="x" onClose={() => done()} t={translate} {...rest} open>
            <button onClick={done} />
            <Row pick={props.pick} />
          </Dialog.Frame>
        }
        """).encode()
    for path in ("a.tsx", "a.jsx"):
        f = extract_facts(source.replace(b": P", b"") if path.endswith("jsx") else source, path)
        jsx = [o for o in f.objects if o.holder.startswith("jsx:")]
        assert [(o.holder, o.scope, o.line) for o in jsx] == [("jsx:Dialog.Frame", "Screen", 3),
                                                              ("jsx:Row", "Screen", 5)]
        frame = {p.key: (p.value_kind, p.value_text, p.value_def) for p in jsx[0].properties}
        assert frame == {"title": ("other", "", None), "onClose": ("function", "", None),
                         "t": ("identifier", "translate", None), "open": ("other", "", None),
                         "...": ("spread", "rest", None)}  # `{...rest}` spreads another object's props
        assert [(p.key, p.value_kind, p.value_text) for p in jsx[1].properties] == [("pick", "member", "props.pick")]
    assert not [o for o in extract_facts(b"const a = <T>b; const c = x < Y && z > w;", "a.ts").objects]


def test_a_long_destructured_parameter_keeps_every_name() -> None:
    names = [f"propertyNumber{i}" for i in range(20)]
    source = f"export function View({{ {', '.join(names)} }}: Props) {{ propertyNumber19() }}".encode()
    (view,) = [d for d in extract_facts(source, "a.tsx").definitions if d.name == "View"]
    assert len(view.params[0].name) > 120 and view.params[0].name.endswith("propertyNumber19 }")


VALUES = """
import { join } from "node:path/posix/long";
const ROOT = fileURLToPath(import.meta.url);
export class Agent {
  started = Date.now();
  run(i: number): string {
    const home = process.env.HOME;
    const again = process.env.HOME;
    this.prompt.text = `Home: ${home}`;
    this.items[i] = home;
    this.n++;
    const id = ++this.turn;
    for (const tool of this.tools.values()) { join(__dirname, tool); i++; }
    for (const key in this.table) { this.log(key); }
    return [...this.extra, "short", "a longer text"].join(stat.mtimeMs);
  }
}
const PARENT = dirname(import.meta.url);
"""


def test_values_are_the_reads_writes_and_texts_no_call_fact_holds() -> None:
    f = facts(VALUES)
    got = [(v.kind, v.scope, v.line, v.text) for v in f.values]
    assert got == [
        ("member", None, 2, "import.meta.url"),               # an argument read whole
        ("member", "Agent.run", 6, "process.env.HOME"),        # once per scope: line 7 reads it again
        ("assign", "Agent.run", 8, "this.prompt.text"),
        ("literal", "Agent.run", 8, "`Home: ${home}`"),         # as written, `${…}` included
        ("assign", "Agent.run", 9, "this.items.[i]"),
        ("update", "Agent.run", 10, "this.n"),                 # a member's state; the bare `i++;` is none
        ("update", "Agent.run", 11, "this.turn"),              # its value is used
        ("iterate", "Agent.run", 12, "this.tools.values()"),
        ("ident", "Agent.run", 12, "__dirname"),
        ("member", "Agent.run", 13, "this.table"),             # read; `for … in` iterates keys: no iterate
        ("iterate", "Agent.run", 14, "this.extra"),            # a spread
        ("member", "Agent.run", 14, "this.extra"),
        ("literal", "Agent.run", 14, '"a longer text"'),       # "short" is under LITERAL_MIN_CHARS
        ("member", "Agent.run", 14, "stat.mtimeMs"),
        ("member", None, 17, "import.meta.url"),              # module level: every line (each constant)
    ]
    # callees (`this.tools.values`, `this.log`), the inner members of a chain (`process.env`) and the module
    # specifier are none of them
    assert not {v.text for v in f.values} & {"this.tools.values", "this.log", "process.env", "this.tools",
                                              '"node:path/posix/long"'}


def test_values_leave_the_call_facts_as_they_were(monkeypatch) -> None:
    """The value facts are extra records: the calls, bindings and objects of a file do not change."""
    import analyzer.parse.extract as extract
    from analyzer.parse.queries_loader import FULL_ASPECTS, combined_query

    with_values = facts(VALUES)
    others = tuple(a for a in FULL_ASPECTS if a != "values")
    monkeypatch.setattr(extract, "file_query", lambda language, _declaration: combined_query(language, others))
    without = facts(VALUES)
    assert without.values == [] and with_values.values
    with_values.values = []
    assert with_values == without


def test_both_dialects_inherit_the_shared_patterns_once() -> None:
    """`; inherits: ecma`: a pattern JavaScript and TypeScript share is written once and reaches both grammars'
    queries once (twice would record its facts twice)."""
    from analyzer.parse.queries_loader import QUERY_DIR, query_source

    for aspect in ("code", "definitions", "members", "modules"):
        shared = (QUERY_DIR / f"{aspect}.ecma.scm").read_text(encoding="utf-8")
        for language in ("javascript", "typescript", "tsx"):
            assert query_source(aspect, language).count(shared) == 1, (aspect, language)
        own = {d: (QUERY_DIR / f"{aspect}.{d}.scm").read_text(encoding="utf-8") for d in ("js", "ts")}
        assert all(text.startswith("; inherits: ecma\n") for text in own.values())
        patterns = [line for line in shared.splitlines() if line.startswith("((")]
        assert patterns and not [p for p in patterns for text in own.values() if p in text]


def test_a_plain_and_a_satisfies_object_are_each_held_once() -> None:
    """The plain holder comes from the shared patterns, the `satisfies` one from TypeScript's own."""
    src = "const a = { x: 1 };\nconst b = { y: 2 } satisfies Opts;\nfunction f() { return { z: 3 }; }\n"
    facts = extract_facts(src.encode(), "src/h.ts")
    assert sorted((o.holder, o.holder_type) for o in facts.objects) == [
        ("return", None), ("variable:a", None), ("variable:b", "Opts")]
    js = extract_facts(b"const a = { x: 1 };\nclass C { f = { y: 2 }; }\n", "src/h.js")
    assert sorted(o.holder for o in js.objects) == ["field:C.f", "variable:a"]
