"""Service containers shaped like cordis' `Context` (here a `Hub`, with names of our own): a closure passed
where an interface with a call signature is expected (`inject(deps, callback: Addon.Function<void>)`, the
interface declared inside a namespace) gets that signature's parameter types, and `get<K extends keyof
this>(key: K): this[K]` called with a string literal is the receiver's member of that name. Written shapes
only (no upstream code)."""

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
    "src/hub.ts": """
        import { Bus } from './bus.ts'
        export interface Hub {
          root: this
          events: Bus
        }
        export class Hub {
          constructor() {}
        }
        """,
    "src/reflect.ts": """
        import { Hub } from './hub.ts'
        declare module './hub.ts' {
          interface Hub {
            get<K extends string & keyof this>(key: K, required?: boolean): undefined | this[K]
            get(key: string, required?: boolean): any
            lookup(key: string): this[K]
          }
        }
        """,
    "src/registry.ts": """
        import { Hub } from './hub.ts'
        export type Addon = Addon.Function | Addon.Object
        export namespace Addon {
          export interface Function<T = any> {
            (ctx: Hub, options: T): any
          }
          export interface Object {
            apply(ctx: Hub): any
          }
        }
        export type Needs = string[]
        export function Needs(key: string) { return name }
        export namespace Needs {
          export function resolve(inject: Needs): void {}
        }
        export function plain(x: string) { return x }
        export function helper() {}
        declare module './hub.ts' {
          export interface Hub {
            inject(deps: string[], callback: Addon.Function<void>): void
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
        import { Hub } from './hub.ts'
        import { SettingsProvider } from './store.ts'
        declare module './hub.ts' {
          interface Hub { settings: SettingsProvider }
        }
        """,
    "src/bus.ts": """
        import { Hub } from './hub.ts'
        import { Task } from './task.ts'
        export interface Signals {
          'task/start'(task: Task): void
          'task/reload'(this: Task, config: any, next: () => void): void
          'tick': (task: Task, n: number) => void
        }
        declare module './hub.ts' {
          interface Hub {
            on<K extends keyof Signals>(key: K, listener: Signals[K]): () => boolean
          }
        }
        export class Bus {
          emit(key: string): void {}
        }
        """,
    "src/task.ts": """
        export class Task {
          dispose(): void {}
          reload(config: any): void {}
        }
        """,
    "src/loader.ts": """
        import { Hub } from './hub.ts'
        import { Needs, plain } from './registry.ts'
        declare module './hub.ts' {
          interface Hub { loader: Loader }
        }
        export class Loader {
          constructor(ctx: Hub) {
            ctx.events.emit('x')
            ctx.on('task/start', (task) => {
              task.dispose()
            })
            ctx.on('tick', (task, n) => {
              task.reload(n)
            })
            Needs.resolve(['a'])
            plain.helper()
          }
        }
        """,
    "src/use.ts": """
        import type { Hub } from './hub.ts'
        import { Store } from './store.ts'
        export function apply(ctx: Hub, name: string, store: Store): void {
          ctx.inject(['settings'], (withSettings) => {
            withSettings.settings.register('a')
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
    assert [(f.owner, f.type) for f in sig] == [("Function", "(ctx: Hub, options: T) => any")]


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
    # the file augments Hub itself; `ctx.events` is still the imported Hub's (augmented) member
    assert _loader_edges().get(9) == {("method", "src/bus.ts:Bus.emit")}


def test_listener_of_keyed_event_takes_the_members_parameters() -> None:
    edges = _loader_edges()
    assert edges.get(11) == {("method", "src/task.ts:Task.dispose")}  # Signals['task/start'](task: Task)
    assert edges.get(14) == {("method", "src/task.ts:Task.reload")}  # Signals['tick']: (task: Task, n) => void


def test_member_of_a_function_merged_with_a_namespace_is_the_namespace_member() -> None:
    edges = _loader_edges()
    assert edges.get(16) == {("direct", "src/registry.ts:resolve")}  # Needs: type + function + namespace
    assert 17 not in edges  # plain.helper(): plain declares no namespace, so helper is not its member
