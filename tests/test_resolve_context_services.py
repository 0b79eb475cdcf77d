"""Service containers typed like cordis' `Context`: a closure passed where an interface with a call signature is
expected (`inject(deps, callback: Plugin.Function<void>)`, the interface declared inside a namespace) gets that
signature's parameter types, and `get<K extends keyof this>(name: K): this[K]` called with a string literal is
the receiver's member of that name. Written shapes only (no upstream code)."""

from __future__ import annotations

import textwrap

from analyzer.graph.build import build_graph
from analyzer.index.configs import RepoConfigs
from analyzer.index.model import CALL_SIGNATURE_FIELD
from analyzer.parse.extract import extract_facts
from analyzer.resolve.modules import RepoModules
from analyzer.resolve.program import Program, RepoInput
from analyzer.resolve.rules import load_rules

FILES = {
    "src/context.ts": """
        import { EventsService } from './events.ts'
        export interface Context {
          root: this
          events: EventsService
        }
        export class Context {
          constructor() {}
        }
        """,
    "src/reflect.ts": """
        import { Context } from './context.ts'
        declare module './context.ts' {
          interface Context {
            get<K extends string & keyof this>(name: K, strict?: boolean): undefined | this[K]
            get(name: string, strict?: boolean): any
            lookup(name: string): this[K]
          }
        }
        """,
    "src/registry.ts": """
        import { Context } from './context.ts'
        export type Plugin = Plugin.Function | Plugin.Object
        export namespace Plugin {
          export interface Function<T = any> {
            (ctx: Context, config: T): any
          }
          export interface Object {
            apply(ctx: Context): any
          }
        }
        export type Inject = string[]
        export function Inject(name: string) { return name }
        export namespace Inject {
          export function resolve(inject: Inject): void {}
        }
        export function plain(x: string) { return x }
        export function helper() {}
        declare module './context.ts' {
          export interface Context {
            inject(deps: string[], callback: Plugin.Function<void>): void
          }
        }
        """,
    "src/store.ts": """
        export interface Services { settings: SettingsProvider; audit: Auditor }
        export class SettingsProvider {
          register(x: string): void {}
          update(x: string): void {}
        }
        export class Auditor {
          update(x: string): void {}
        }
        export class Store {
          pick<K extends keyof Services>(key: K): Services[K] { return undefined as any }
        }
        """,
    "src/settings.ts": """
        import { Context } from './context.ts'
        import { SettingsProvider } from './store.ts'
        declare module './context.ts' {
          interface Context { settings: SettingsProvider }
        }
        """,
    "src/events.ts": """
        import { Context } from './context.ts'
        import { Fiber } from './fiber.ts'
        export interface Events {
          'internal/plugin'(fiber: Fiber): void
          'internal/update'(this: Fiber, config: any, next: () => void): void
          'tick': (fiber: Fiber, n: number) => void
        }
        declare module './context.ts' {
          interface Context {
            on<K extends keyof Events>(name: K, listener: Events[K]): () => boolean
          }
        }
        export class EventsService {
          emit(name: string): void {}
        }
        """,
    "src/fiber.ts": """
        export class Fiber {
          dispose(): void {}
          reload(config: any): void {}
        }
        """,
    "src/loader.ts": """
        import { Context } from './context.ts'
        import { Inject, plain } from './registry.ts'
        declare module './context.ts' {
          interface Context { loader: Loader }
        }
        export class Loader {
          constructor(ctx: Context) {
            ctx.events.emit('x')
            ctx.on('internal/plugin', (fiber) => {
              fiber.dispose()
            })
            ctx.on('tick', (fiber, n) => {
              fiber.reload(n)
            })
            Inject.resolve(['a'])
            plain.helper()
          }
        }
        """,
    "src/use.ts": """
        import type { Context } from './context.ts'
        import { Store } from './store.ts'
        export function apply(ctx: Context, name: string, store: Store): void {
          ctx.inject(['settings'], (settingsCtx) => {
            settingsCtx.settings.register('a')
          })
          const settings = ctx.get('settings')
          settings.update('b')
          ctx.get('settings')?.update('c')
          const unknown = ctx.get(name)
          unknown.update('d')
          ctx.lookup('settings').update('e')
          store.pick('audit').update('f')
        }
        """,
}


def _graph():  # type: ignore[no-untyped-def]
    facts = [extract_facts(textwrap.dedent(src).encode(), path) for path, src in FILES.items()]
    mods = RepoModules("app", set(FILES), RepoConfigs(), ())
    program = Program([RepoInput("app", "0" * 40, facts, mods)])
    return build_graph(program, load_rules())


def _typed_edges() -> dict[int, set[tuple[str, str]]]:
    out: dict[int, set[tuple[str, str]]] = {}
    for _u, v, d in _graph().out_edges("app:src/use.ts:apply", data=True):
        if d["kind"] != "name":
            out.setdefault(d["line"], set()).add((d["kind"], v.split(":", 1)[1]))
    return out


def test_call_signature_is_extracted_as_a_function_type() -> None:
    facts = extract_facts(textwrap.dedent(FILES["src/registry.ts"]).encode(), "src/registry.ts")
    sig = [f for f in facts.fields if f.name == CALL_SIGNATURE_FIELD]
    assert [(f.owner, f.type) for f in sig] == [("Function", "(ctx: Context, config: T) => any")]


def test_closure_passed_as_call_signature_interface_types_its_parameter() -> None:
    assert _typed_edges().get(6) == {("method", "src/store.ts:SettingsProvider.register")}


def test_keyed_this_return_is_the_receivers_member() -> None:
    edges = _typed_edges()
    assert edges.get(9) == {("method", "src/store.ts:SettingsProvider.update")}  # const settings = ctx.get('settings')
    assert edges.get(10) == {("method", "src/store.ts:SettingsProvider.update")}  # ctx.get('settings')?.update()


def test_keyed_type_return_is_that_types_member() -> None:
    pick_then_update = {("method", "src/store.ts:Store.pick"), ("method", "src/store.ts:Auditor.update")}
    assert _typed_edges().get(14) == pick_then_update  # store.pick('audit'): Services[K]


def test_no_key_or_no_type_parameter_gives_no_typed_edge() -> None:
    edges = _typed_edges()
    assert 12 not in edges  # ctx.get(name): not a literal, the member is unknown
    assert 13 not in edges  # lookup(): K is not a type parameter of the method


def _loader_edges() -> dict[int, set[tuple[str, str]]]:
    out: dict[int, set[tuple[str, str]]] = {}
    for _u, v, d in _graph().out_edges("app:src/loader.ts:Loader.constructor", data=True):
        if d["kind"] != "name":
            out.setdefault(d["line"], set()).add((d["kind"], v.split(":", 1)[1]))
    return out


def test_local_augmentation_does_not_shadow_the_imported_declaration() -> None:
    # the file augments Context itself; `ctx.events` is still the imported Context's (augmented) member
    assert _loader_edges().get(9) == {("method", "src/events.ts:EventsService.emit")}


def test_listener_of_keyed_event_takes_the_members_parameters() -> None:
    edges = _loader_edges()
    assert edges.get(11) == {("method", "src/fiber.ts:Fiber.dispose")}  # Events['internal/plugin'](fiber: Fiber)
    assert edges.get(14) == {("method", "src/fiber.ts:Fiber.reload")}  # Events['tick']: (fiber: Fiber, n) => void


def test_member_of_a_function_merged_with_a_namespace_is_the_namespace_member() -> None:
    edges = _loader_edges()
    assert edges.get(16) == {("direct", "src/registry.ts:resolve")}  # Inject: type + function + namespace
    assert 17 not in edges  # plain.helper(): plain declares no namespace, so helper is not its member
