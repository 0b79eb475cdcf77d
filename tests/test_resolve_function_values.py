"""Calls of function-typed values whose value arrives in ways the parameter/option tracing alone misses
(written shapes, names of our own, no upstream code):

- a checker registered into a service's registry (`ctx.checks.register('pkg', install)`, `install` a closure
  wrapped by `Object.assign(closure, { needs })`): the registry later calls it with a failure function of
  its own, so the closure's `report` parameter — called in the closure, in a local function of it, or
  forwarded to a module function — reaches that failure function (the registry method writing it);
- a constructor parameter property holding a function (`private readonly makeError: (n) => Error`):
  `this.makeError(n)` reaches what `new Table(…)` passes;
- a member destructured from a call's result (`const { release } = await acquire()`): the closures the
  callee's returned object literals hold;
- a service member typed by a named function type through a context's declared type
  (`this.ctx.log.warn(…)` with `warn: LogMethod` from `extends Record<Level, LogMethod>`): the producers
  of that type.
"""

from __future__ import annotations

import textwrap

from analyzer.graph.build import build_graph
from analyzer.index.configs import RepoConfigs
from analyzer.parse.extract import extract_facts
from analyzer.resolve.modules import RepoModules
from analyzer.resolve.program import Program, RepoInput
from analyzer.resolve.rules import load_rules

FILES = {
    "src/context.ts": """
        export interface Context {
          records(): string[]
          on(name: string, listener: (...args: any[]) => void): void
          defer(run: () => Promise<void>): void
        }
        export class Context {
          constructor() {}
        }
        export abstract class Service {
          constructor(protected ctx: Context, name: string) {}
        }
        """,
    "src/checks.ts": """
        import { Context, Service } from './context.ts'
        export type Report = (message: string) => never
        export interface Installer {
          (ctx: Context, report: Report): void
          readonly needs?: string[]
        }
        export class CheckError extends Error {}
        declare module './context.ts' {
          interface Context {
            checks: CheckRegistry
          }
        }
        export class CheckRegistry extends Service {
          constructor(ctx: Context) {
            super(ctx, 'checks')
          }
          register(owner: string, installer: Installer): () => void {
            const start = (child: Context) => installer(child, (message): never => {
              throw new CheckError(owner + ': ' + message)
            })
            this.ctx.defer(async () => {
              start(this.ctx)
            })
            return () => {}
          }
        }
        """,
    "src/record-checks.ts": """
        import type { Context } from './context.ts'
        import type { Installer, Report } from './checks.ts'
        function checkName(name: string, report: Report): void {
          if (name.length === 0) report('a record needs a name')
        }
        const install: Installer = Object.assign((ctx: Context, report: Report) => {
          for (const name of ctx.records()) checkName(name, report)
          const checkAll = (names: string[]) => {
            if (names.length > 9) report('too many records')
          }
          ctx.on('records/changed', (names: string[]) => {
            checkAll(names)
            if (names.length === 0) report('no records left')
          })
        }, { needs: ['records'] })
        export const apply = (ctx: Context) => ctx.checks.register('records', install)
        """,
    "src/unregistered.ts": """
        import type { Context } from './context.ts'
        import type { Report } from './checks.ts'
        function checkSize(size: number, report: Report): void {
          if (size < 0) report('negative size')
        }
        const kept = Object.assign((ctx: Context, report: Report) => {
          checkSize(ctx.records().length, report)
        }, { needs: [] })
        export const size = kept.needs
        """,
    "src/table.ts": """
        export class Table<V> {
          private rows = new Map<string, V>()
          constructor(private readonly makeError: (name: string) => Error, readonly label: string) {}
          insert(name: string, value: V): void {
            if (this.rows.has(name)) throw this.makeError(name)
            this.rows.set(name, value)
          }
        }
        function tableError(name: string): Error {
          return new Error('duplicate ' + name)
        }
        export class Catalog {
          readonly plain = new Table<number>(tableError, 'plain')
          readonly inline = new Table<string>((name) => new Error(name + ' twice'), 'inline')
        }
        export type Writer = (text: string) => void
        export const writeOut: Writer = (text) => {
          void text
        }
        function writeTwice(text: string): void {
          void text
        }
        export class Sink {
          constructor(private readonly write: Writer = writeOut) {}
          flush(text: string): void {
            this.write(text)
          }
        }
        export const loud = new Sink(writeTwice)
        export class Pipe {
          constructor(private readonly emit: (text: string) => void = (text) => writeTwice(text)) {}
          send(text: string): void {
            this.emit(text)
          }
        }
        export const quiet = new Pipe()
        """,
    "src/pool.ts": """
        const idle: string[] = []
        function closeQuietly(conn: string): void {
          void conn
        }
        async function acquire(key: string | undefined): Promise<{ conn: string; release: (keep?: boolean) => void }> {
          if (!key) {
            return { conn: 'fresh', release: () => closeQuietly('fresh') }
          }
          return {
            conn: key,
            release: (keep) => {
              if (keep) idle.push(key)
            },
          }
        }
        export async function send(key?: string): Promise<void> {
          const { conn, release } = await acquire(key)
          void conn
          release(true)
        }
        """,
    "src/log.ts": """
        export type Level = 'error' | 'warn' | 'info'
        export type LogMethod = (format: any, ...rest: any[]) => void
        export interface Logger extends Record<Level, LogMethod> {}
        export class Logger {
          constructor(readonly name: string) {
            this.warn = this.method('warn')
          }
          private method(level: Level): LogMethod {
            return (...args: any[]) => {
              void level
              void args
            }
          }
        }
        export interface LogService extends Record<Level, LogMethod> {
          (name?: string): Logger
        }
        export class LogService {
          constructor() {}
        }
        """,
    "src/runtime.ts": """
        import type { LogService } from './log.ts'
        export interface Host {
          log: LogService
        }
        export class Runtime {
          constructor(private readonly host: Host) {}
          warnFailure(error: unknown): void {
            this.host.log.warn('a listener failed')
            this.host.log.warn(error)
            this.host.log.trace(error)
          }
        }
        export function complain(host: Host): void {
          host.log.error('from a parameter')
        }
        """,
}

FAILURE = "app:src/checks.ts:CheckRegistry.register.start"  # writes the failure closure it passes


def _graph():  # type: ignore[no-untyped-def]
    facts = [extract_facts(textwrap.dedent(src).encode(), path) for path, src in FILES.items()]
    mods = RepoModules("app", set(FILES), RepoConfigs(), ())
    program = Program([RepoInput("app", "0" * 40, facts, mods)])
    return build_graph(program, load_rules())


GRAPH = None


def graph():  # type: ignore[no-untyped-def]
    global GRAPH
    if GRAPH is None:
        GRAPH = _graph()
    return GRAPH


def _value_edges(source: str) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for _u, v, d in graph().out_edges(source, data=True):
        if d.get("rule") == "function-value":
            out.setdefault(d["line"], []).append({**d, "to": v})
    return out


def test_a_registered_checkers_report_parameter_reaches_the_registrys_failure_function() -> None:
    # forwarded from the closure to a module function: `checkName(name, report)`, then `report(…)` there
    edges = _value_edges("app:src/record-checks.ts:checkName")
    assert [e["to"] for e in edges[5]] == [FAILURE]
    ev = edges[5][0]["evidence"]
    assert "src/record-checks.ts:7: install = Object.assign(…) holds the closure declaring report" in ev, ev
    assert "src/record-checks.ts:17: report is parameter 2 of install passed to CheckRegistry.register" in ev, ev
    assert any("calls installer(…) with (message): never =>" in line for line in ev), ev


def test_report_called_in_a_local_function_and_in_a_listener_of_the_closure() -> None:
    assert [e["to"] for e in _value_edges("app:src/record-checks.ts:checkAll").get(10, [])] == [FAILURE]
    assert [e["to"] for e in _value_edges("app:src/record-checks.ts:<module>").get(14, [])] == [FAILURE]


def test_the_registry_call_of_the_installer_reaches_the_held_closures_writer() -> None:
    # `installer(child, …)` in the registry: `install` holds a closure written at module level
    edges = _value_edges(FAILURE)
    assert [(e["to"], e["passer"]) for e in edges[19]] == [("app:src/record-checks.ts:<module>",
                                                             "app:src/record-checks.ts:apply")]


def test_a_wrapped_closure_nobody_registers_gets_no_value() -> None:
    assert _value_edges("app:src/unregistered.ts:checkSize") == {}


def test_a_function_held_by_a_constructor_parameter_property_is_what_the_constructions_pass() -> None:
    edges = _value_edges("app:src/table.ts:Table.insert")
    got = sorted((e["to"], e["passer"]) for e in edges[6])
    # the named function, and the inline closure's writer (the class, which owns its field initialisers)
    assert got == [("app:src/table.ts:Catalog", None), ("app:src/table.ts:tableError", None)], got
    assert any("makeError is a parameter property of Table" in line for line in edges[6][0]["evidence"])


def test_a_member_destructured_from_a_calls_result_is_what_the_callees_returned_literals_hold() -> None:
    edges = _value_edges("app:src/pool.ts:send")
    # each returned literal's closure (an object-literal function property: a node of its own)
    assert sorted(e["to"] for e in edges[20]) == ["app:src/pool.ts:acquire.release",
                                                  "app:src/pool.ts:acquire.release#2"]
    ev = edges[20][0]["evidence"]
    assert any("release is member 'release' of what acquire(…) returns" in line for line in ev), ev


def test_an_optional_parameter_property_also_reaches_its_default() -> None:
    # what `new Sink(writeTwice)` passes, and — a caller may leave it out — the default `= writeOut`
    edges = _value_edges("app:src/table.ts:Sink.flush")[27]
    got = sorted(e["to"] for e in edges)
    assert got == ["app:src/table.ts:writeOut", "app:src/table.ts:writeTwice"], got
    assert any("write defaults to writeOut" in line for e in edges for line in e["evidence"])
    # a default written as a closure belongs to the constructor that writes it
    assert [e["to"] for e in _value_edges("app:src/table.ts:Pipe.send")[34]] == ["app:src/table.ts:Pipe.constructor"]


def test_a_service_member_typed_through_a_record_heritage_reaches_the_producers_of_its_function_type() -> None:
    edges = _value_edges("app:src/runtime.ts:Runtime.warnFailure")
    assert [e["to"] for e in edges[9]] == ["app:src/log.ts:Logger.method"]  # the closure `method` returns
    assert [e["to"] for e in edges[10]] == ["app:src/log.ts:Logger.method"]
    ev = edges[9][0]["evidence"]
    assert "src/log.ts:16: LogService extends Record<Level, LogMethod>" in ev, ev
    assert 11 not in edges  # `trace` is no literal of Level: no member, no value


def test_the_same_member_read_off_a_parameters_declared_type() -> None:
    edges = _value_edges("app:src/runtime.ts:complain")
    assert [e["to"] for e in edges[15]] == ["app:src/log.ts:Logger.method"]


def test_a_default_is_read_from_a_signature_cut_short() -> None:
    from analyzer.resolve.functionvalues import _parameter_default
    cut = "constructor( private readonly run: (spec: Spec) => Promise<H> = spec => start(spec), private readonly la"
    assert _parameter_default(cut, "run") == "spec => start(spec)"
    assert _parameter_default(cut, "la") is None
