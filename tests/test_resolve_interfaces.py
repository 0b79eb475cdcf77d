"""Interface dispatch and receiver typing shapes the compiler resolves: each test names one
pattern, with the exact edges it must give and the pairs it must not."""

from __future__ import annotations

import textwrap

from analyzer.graph.build import build_graph
from analyzer.index.configs import RepoConfigs
from analyzer.parse.extract import extract_facts
from analyzer.resolve.modules import RepoModules
from analyzer.resolve.program import Program, RepoInput
from analyzer.resolve.rules import load_rules
from analyzer.resolve.typetext import object_type_members


def _graph(files: dict[str, str]):  # type: ignore[no-untyped-def]
    facts = [extract_facts(textwrap.dedent(src).encode(), path) for path, src in files.items()]
    mods = RepoModules("app", set(files), RepoConfigs(), ())
    program = Program([RepoInput("app", "0" * 40, facts, mods)])
    return build_graph(program, load_rules())


def _edges(g, path: str) -> set[tuple[str, int, str, str]]:  # type: ignore[no-untyped-def]
    """(caller, line, target, kind) of every typed edge out of a file (name guesses left out)."""
    return {(u.split(":", 2)[2], d["line"], v.split(":", 2)[2], d["kind"]) for u, v, d in g.edges(data=True)
            if u.startswith(f"app:{path}:") and d["kind"] != "name"}


def test_a_method_signature_of_an_inline_type_is_a_function_member() -> None:
    members = object_type_members("{ schema: S; invoke?<T>(api: Api, r: Req<T>): Promise<T>; new (x: X): Y }")
    assert members == {"schema": "S", "invoke": "(api: Api, r: Req<T>) => Promise<T>"}


def test_members_a_folded_signature_ran_together_are_split_again() -> None:
    # extracted type texts join lines with one space: a no-semicolon type `{ a: A<X>\n b?: B … }` reads so
    folded = "{ a: A<X> b?: B c: (x: X) => void d(): D readonly e: E f: T extends U ? V: W g: keyof H }"
    assert object_type_members(folded) == {"a": "A<X>", "b": "B", "c": "(x: X) => void", "d": "() => D", "e": "E",
                                           "f": "T extends U ? V: W g: keyof H"}
    assert object_type_members('{ kind: "a b: c" next: N }') == {"kind": '"a b: c"', "next": "N"}


ROUTES = {
    "src/api.ts": """
        export interface Sessions { list(r: string): string; prompt(r: string): string }
        export interface Api { sessions: Sessions }
        export type Map = { "a.list": string; "a.prompt": string };
        export function createApi(): Api {
          return {
            sessions: {
              list: (r) => r,
              prompt(r) { return r; },
            },
          };
        }
        export class Unrelated { list(r: string) { return r; } }
        """,
    "src/handler.ts": """
        import type { Api, Map } from "./api.ts";
        type Routes = {
          [K in keyof Map]: {
            schema: string
            invoke(api: Api, request: string): string
          }
        };
        const ROUTES: Routes = {
          "a.list": { schema: "l", invoke: (api, r) => api.sessions.list(r) },
          "a.prompt": { schema: "p", invoke: (api, r) => api.sessions.prompt(r) },
        };
        export function handle(k: keyof Map, api: Api) { return ROUTES[k].invoke(api, "x"); }
        """,
}


def test_a_callback_in_a_mapped_type_literal_takes_the_method_signatures_parameter_types() -> None:
    got = _edges(_graph(ROUTES), "src/handler.ts")
    lists = {(line, t, kind) for caller, line, t, kind in got if caller.endswith("invoke") and line == 10}
    prompts = {(line, t, kind) for caller, line, t, kind in got if caller.endswith("invoke") and line == 11}
    assert lists == {(10, "createApi.sessions.list", "interface")}
    assert prompts == {(11, "createApi.sessions.prompt", "interface")}
    assert not any(t == "Unrelated.list" for _c, _l, t, _k in got)


KEYED = {
    "src/context.ts": """
        export class Context { name = "root" }
        """,
    "src/reflect.ts": """
        import { Context } from "./context.ts";
        declare module "./context.ts" {
          interface Context {
            get<K extends string & keyof this>(name: K, strict?: boolean): undefined | this[K]
            get(name: string, strict?: boolean): any
          }
        }
        export class ReflectService { get(name: string, strict = true) { return undefined; } }
        """,
    "src/jobs.ts": """
        import { Context } from "./context.ts";
        declare module "./context.ts" {
          interface Context { jobs: JobRegistry; other: Other }
        }
        export abstract class JobRegistry { abstract list(owner: string): string[] }
        export class LocalJobRegistry extends JobRegistry { list(owner: string) { return [owner]; } }
        export class Other { list(owner: string) { return []; } }
        """,
    "src/use.ts": """
        import type {} from "./jobs.ts";
        import type {} from "./reflect.ts";
        import { Context } from "./context.ts";
        export function mux(ctx: Context) {
          const jobs = ctx.get('jobs')
          if (jobs !== undefined) jobs.list("a")
          return ctx.get("jobs")?.list("b")
        }
        export function unknown(ctx: Context, name: string) {
          return ctx.get(name)?.list("c")
        }
        """,
}


def test_a_call_returning_this_k_is_typed_by_the_member_its_string_argument_names() -> None:
    got = _edges(_graph(KEYED), "src/use.ts")
    assert {(c, line, t, k) for c, line, t, k in got if t.endswith(".list")} == {
        ("mux", 7, "LocalJobRegistry.list", "interface"), ("mux", 8, "LocalJobRegistry.list", "interface")}


HOOKS = {
    "src/observable.ts": """
        export interface HostObservable<T> { getSnapshot(): T; subscribe(fn: () => void): () => void }
        export function bind<T>(w: HostObservable<T>) {
          const subscribe = (fn: () => void) => w.subscribe(fn)
          const getSnapshot = () => w.getSnapshot()
          return [subscribe, getSnapshot]
        }
        """,
    "src/settings.ts": """
        import type { HostObservable } from "./observable.ts";
        export type Injected = {
          hooks: {
            /** rows, projected: the nav (ordered, one per section). */
            sections: HostObservable<readonly string[]>
            /** steps */
            steps: HostObservable<number>
          }
        }
        export function apply() {
          const injected = (): Injected => ({
            hooks: {
              sections: { getSnapshot: () => [], subscribe: (listener) => () => {} },
              steps: { getSnapshot: () => 1, subscribe: (listener) => () => {} },
            },
          })
          const untyped = () => ({ hooks: { other: { getSnapshot: () => 2, subscribe: () => () => {} } } })
          return [injected, untyped]
        }
        """,
}


def test_literals_typed_by_a_commented_no_semicolon_alias_implement_its_members() -> None:
    got = _edges(_graph(HOOKS), "src/observable.ts")
    assert {(c, line, t) for c, line, t, k in got if k == "interface"} == {
        ("bind.subscribe", 4, "apply.injected.hooks.sections.subscribe"),
        ("bind.subscribe", 4, "apply.injected.hooks.steps.subscribe"),
        ("bind.getSnapshot", 5, "apply.injected.hooks.sections.getSnapshot"),
        ("bind.getSnapshot", 5, "apply.injected.hooks.steps.getSnapshot")}


GENERIC = {
    "src/store.ts": """
        export class NamedEntries<V> { entries(): [string, V][] { return []; } }
        export interface ScopeLayer { admits?(name: string): boolean }
        export class ScopedLayers<L extends ScopeLayer> {
          readonly global: L
          private readonly scoped = new Map<string, L>()
          constructor(private readonly createLayer: (scope: string | undefined) => L, onChange: () => void) {
            this.global = createLayer(undefined)
          }
          peek(scope?: string): L | undefined { return this.scoped.get(scope ?? ""); }
          chainLayers(scope?: string): L[] { return []; }
        }
        """,
    "src/tools.ts": """
        import { NamedEntries, ScopedLayers, type ScopeLayer } from "./store.ts";
        class ToolLayer implements ScopeLayer {
          readonly tools = new NamedEntries<string>()
          admits(name: string) { return name !== ""; }
        }
        class OtherLayer implements ScopeLayer { admits(name: string) { return false; } }
        export class ToolRuntime {
          private readonly layers = new ScopedLayers(
            scope => new ToolLayer(),
            () => {},
          )
          view(scope?: string) {
            const layers = this.layers.chainLayers(scope)
            const own = this.layers.peek(scope)
            const all = this.layers.global.tools.entries()
            for (const layer of layers) layer.tools.entries()
            if (layers.every(layer => layer.admits("x"))) return own?.tools.entries()
            return all
          }
        }
        """,
}


def test_members_of_a_generic_class_instance_read_its_inferred_type_argument() -> None:
    got = _edges(_graph(GENERIC), "src/tools.ts")
    assert {(line, t, k) for c, line, t, k in got if c == "ToolRuntime.view"} == {
        (14, "ScopedLayers.chainLayers", "method"), (15, "ScopedLayers.peek", "method"),
        (16, "NamedEntries.entries", "method"), (17, "NamedEntries.entries", "method"),
        (18, "ToolLayer.admits", "method"), (18, "NamedEntries.entries", "method")}


SPREAD = {
    "src/repo.ts": """
        export class Session { getMetadata() { return 1; } }
        export class Other { getMetadata() { return 2; } }
        export class Repo {
          private sessions = new Map<string, Session>();
          private names = new Set<Other>();
          list() { return [...this.sessions.values()].map((session) => session.getMetadata()); }
          others() { return [...this.names].map(o => o.getMetadata()); }
          keys() { return [...this.sessions.keys()].map((k) => k.getMetadata()); }
        }
        """,
}


def test_a_callback_on_an_array_literal_of_one_spread_takes_the_spreads_element_type() -> None:
    got = _edges(_graph(SPREAD), "src/repo.ts")
    assert {(c, t) for c, _line, t, k in got if t.endswith("getMetadata")} == {
        ("Repo.list", "Session.getMetadata"), ("Repo.others", "Other.getMetadata")}


def test_return_type_of_a_local_chain_with_an_explicit_key_types_a_callback_parameter() -> None:
    files = dict(KEYED)
    files["src/proxy.ts"] = """
        import type {} from "./jobs.ts";
        import type {} from "./reflect.ts";
        import { Context } from "./context.ts";
        export function createProxy(ctx: Context) {
          function mutate(run: (jobs: NonNullable<ReturnType<typeof ctx.get<'jobs'>>>, n: number) => void) {
            const jobs = ctx.get('jobs')
            if (jobs) run(jobs, 1)
          }
          return {
            list() { mutate((jobs, n) => jobs.list("x")) },
            other() { mutate((registry) => registry.list("y")) },
          }
        }
        """
    got = _edges(_graph(files), "src/proxy.ts")
    assert {(c, t, k) for c, _line, t, k in got if t.endswith(".list") and k != "dispatch"} == {
        ("createProxy.list", "LocalJobRegistry.list", "interface"),
        ("createProxy.other", "LocalJobRegistry.list", "interface")}


PICKED = {
    "src/types.ts": """
        export interface Provider { run(x: string): string; list(): string[] }
        export interface Registry { get(id: string): Provider | undefined }
        """,
    "src/impl.ts": """
        import type { Provider, Registry } from "./types.ts";
        export function makeProvider(): Provider { return { run: (x) => x, list: () => [] }; }
        export function makeRegistry(): Registry { return { get: (id) => makeProvider() }; }
        """,
    "src/use.ts": """
        import { makeRegistry } from "./impl.ts";
        const shared = makeRegistry();
        function pick(id: string) {
          if (!id) return undefined;
          const provider = shared.get(id);
          return provider?.list().some((m) => m === id) ? provider : undefined;
        }
        export function go(id: string) {
          const p = pick(id);
          if (p) {
            return p.run(id);
          }
          return id;
        }
        """,
}


def test_an_unannotated_function_returning_a_local_from_a_conditional_has_that_locals_type() -> None:
    # `pick` declares no return type; its `return ok ? provider : undefined` hands back the local `provider`
    # (a `Provider | undefined` from the registry lookup), so `p.run(…)` reaches Provider's implementations
    got = _edges(_graph(PICKED), "src/use.ts")
    assert {(c, line, t, k) for c, line, t, k in got if c == "go"} == {
        ("go", 10, "pick", "direct"), ("go", 12, "makeProvider.run", "interface")}


LOADED = {
    "src/types.ts": """
        export interface Streams { stream(x: string): string }
        """,
    "src/lazy.ts": """
        import type { Streams } from "./types.ts";
        export function lazy(load: () => Promise<Streams>): Streams {
          return {
            stream: (x) => later(async () => (await load()).stream(x)),
          };
        }
        function later(f: () => Promise<string>): string { void f(); return ""; }
        """,
    "src/wrap.ts": """
        import type { Streams } from "./types.ts";
        export function wrap(inner: Streams): Streams {
          return { stream: (x) => inner.stream(x) };
        }
        """,
    "src/other.ts": """
        export interface Unrelated { stream(x: string): string }
        export function unrelated(): Unrelated { return { stream: (x) => x }; }
        """,
}


def test_the_awaited_result_of_a_function_typed_parameter_has_its_declared_result_type() -> None:
    # `(await load()).stream(…)` with `load: () => Promise<Streams>`: the value is a Streams, so every
    # Streams the code builds is a target — the lazy literal itself and the wrapper — and no other `stream`
    got = _edges(_graph(LOADED), "src/lazy.ts")
    assert {(t, k) for c, line, t, k in got if c == "lazy.stream" and line == 5} == {
        ("later", "direct"), ("lazy.stream", "interface"), ("wrap.stream", "interface")}


OPTIONS = {
    "src/types.ts": """
        export interface Options { signal?: string; onPayload?: (p: unknown) => unknown; }
        export interface SimpleOptions extends Options { reasoning?: string }
        export interface OtherOptions { onPayload?: (p: unknown) => unknown }
        """,
    "src/api.ts": """
        import type { Options } from "./types.ts";
        export interface CompletionOptions extends Options { tool?: string }
        export const stream = (model: string, options?: CompletionOptions): string => {
          (async () => {
            const next = await options?.onPayload?.(model);
            return next;
          })();
          return model;
        };
        """,
    "src/models.ts": """
        import type { OtherOptions, SimpleOptions } from "./types.ts";
        export interface Transforms { mapModel?: (m: string) => string }
        export type ModelsOptions = SimpleOptions & Transforms;
        export interface Models {
          streamSimple(model: string, options?: ModelsOptions): string
          other(options: OtherOptions): string
        }
        """,
    "src/harness.ts": """
        import type { Models } from "./models.ts";
        export class Harness {
          constructor(private models: Models) {}
          private make(): () => Promise<string> {
            return async () => {
              this.models.other({ onPayload: (p) => p });
              return this.models.streamSimple("m", {
                signal: "s",
                onPayload: async (p) => await this.emit(p),
              });
            };
          }
          emit(p: unknown) { return p; }
        }
        """,
}


def test_a_literal_typed_by_an_intersection_alias_implements_each_part_of_it() -> None:
    # the options literal is passed where `ModelsOptions = SimpleOptions & Transforms` is declared: it is a
    # SimpleOptions, hence an Options, so `options?.onPayload?.(…)` on a CompletionOptions (another Options)
    # reaches its `onPayload`; the literal passed as an OtherOptions is no Options
    g = _graph(OPTIONS)
    out = [(d["line"], d["kind"], g.nodes[v]["line"]) for u, v, d in g.edges(data=True) if u == "app:src/api.ts:stream"]
    assert out == [(6, "interface", 10)]  # the closure written on harness.ts line 10, not the one on line 7


LOOKED_UP = {
    "src/a.ts": """
        export class Session { handle(x: string) { return x; } }
        export class Other { handle(x: string) { return x; } }
        export class Manager {
          private readonly sessions = new Map<string, Session>()
          run(id: string) {
            this.sessions.get(id)?.handle(id)
            return id
          }
        }
        """,
}


def test_a_member_called_on_a_map_lookup_has_the_maps_value_type() -> None:
    # `this.sessions.get(id)?.handle(…)` on a `Map<string, Session>` field: the lookup is a Session, as it is
    # when bound first (`const s = this.sessions.get(id)`); the other `handle` is not reached
    got = _edges(_graph(LOOKED_UP), "src/a.ts")
    assert {(c, line, t, k) for c, line, t, k in got if c == "Manager.run"} == {
        ("Manager.run", 7, "Session.handle", "method")}


REGISTERED = {
    "src/a.ts": """
        export interface Def<K, S> { key: K; apply(state: S, e: string): S }
        export class Registry {
          register<K extends string, S>(definition: Def<K, S>): () => void {
            const erased = { apply: (s: unknown, e: string) => definition.apply(s as S, e) }
            void erased
            return () => {}
          }
        }
        export function withRegistry(cb: (reg: Registry) => void) { cb(new Registry()) }
        export function use() {
          withRegistry((reg) => {
            reg.register({ key: 'plain', apply: (s, e) => s })
          })
        }
        """,
}


def test_a_literal_passed_to_a_method_of_a_closure_parameter_is_typed_by_that_methods_parameter() -> None:
    # `reg` is typed by the call `withRegistry` makes of the closure, read at the literal's line: the literal
    # is a Def, so `definition.apply(…)` inside the registry is an interface call reaching its `apply`
    got = _edges(_graph(REGISTERED), "src/a.ts")
    assert ("Registry.register.erased.apply", 5, "use.apply", "interface") in got
