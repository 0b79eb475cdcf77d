"""`ReturnType<typeof f>` as a declared type: receivers typed by what a function returns."""

from __future__ import annotations

import textwrap

from analyzer.graph.build import build_graph
from analyzer.index.configs import RepoConfigs
from analyzer.parse.extract import extract_facts
from analyzer.resolve.modules import RepoModules
from analyzer.resolve.program import Program, RepoInput
from analyzer.resolve.rules import load_rules

FILES = {
    "src/keys.ts": """
        export class KeyManager {
          getKeys(id: string): string[] { return [id]; }
        }
        export class Other {
          getKeys(id: string): string[] { return []; }
        }
        let current: KeyManager | undefined;
        export function getKeys(): KeyManager {
          if (!current) current = new KeyManager();
          return current;
        }
        export async function loadOther(): Promise<Other> { return new Other(); }
        """,
    "src/editor.ts": """
        import { getKeys, loadOther } from "./keys.ts";
        import * as keys from "./keys.ts";
        export class Editor {
          submit(kb: ReturnType<typeof getKeys>): string[] {
            return kb.getKeys("submit");
          }
          viaNamespace(kb: ReturnType<typeof keys.getKeys>) {
            return kb.getKeys("ns");
          }
          async later(o: Awaited<ReturnType<typeof loadOther>>) {
            return o.getKeys("x");
          }
        }
        """,
}


def _graph():  # type: ignore[no-untyped-def]
    facts = [extract_facts(textwrap.dedent(src).encode(), path) for path, src in FILES.items()]
    mods = RepoModules("app", set(FILES), RepoConfigs(), ())
    program = Program([RepoInput("app", "0" * 40, facts, mods)])
    return build_graph(program, load_rules())


def _edges(g, source: str) -> dict[int, set[str]]:  # type: ignore[no-untyped-def]
    out: dict[int, set[str]] = {}
    for _u, v, d in g.out_edges(f"app:src/editor.ts:{source}", data=True):
        if d["kind"] != "name":
            out.setdefault(d["line"], set()).add(v.split(":", 2)[2])
    return out


def test_return_type_of_a_function_types_the_parameter() -> None:
    g = _graph()
    assert _edges(g, "Editor.submit") == {6: {"KeyManager.getKeys"}}
    assert _edges(g, "Editor.viaNamespace") == {9: {"KeyManager.getKeys"}}
    assert _edges(g, "Editor.later") == {12: {"Other.getKeys"}}
    evidence = [d for _u, _v, d in g.out_edges("app:src/editor.ts:Editor.submit", data=True)][0]
    assert any("ReturnType<typeof getKeys>" in line for line in evidence.get("evidence", []))


def test_a_member_of_a_dynamic_import_called_in_place() -> None:
    FILES["src/lazy.ts"] = """
        export const lazyApi = () => ({
          generate: async (n: number) => (await import("./impl.ts")).generate(n),
        });
        export async function direct() {
          return (await import("./impl.ts")).generate(1);
        }
        export async function unknownModule() {
          return (await import("./missing.ts")).generate(2);
        }
        """
    FILES["src/impl.ts"] = "export function generate(n: number) { return n; }\n"
    try:
        g = _graph()
    finally:
        del FILES["src/lazy.ts"], FILES["src/impl.ts"]
    got = {(u.split(":", 2)[2], d["line"]): (v, d["kind"]) for u, v, d in g.edges(data=True)
           if u.startswith("app:src/lazy.ts:")}
    assert got[("lazyApi.generate", 3)] == ("app:src/impl.ts:generate", "direct")
    assert got[("direct", 6)] == ("app:src/impl.ts:generate", "direct")
    assert not any(k[0] == "unknownModule" for k in got)


def test_a_callback_parameter_typed_by_the_receivers_class_type_argument() -> None:
    FILES["src/layers.ts"] = """
        export class ScopedLayers<L extends object, M = string> {
          constructor(private readonly make: () => L) {}
          effect<R>(label: string, fn: (layer: L) => R): R { return fn(this.make()); }
        }
        export class JobLayer { listeners = new Set<string>(); append(x: string) { this.listeners.add(x); } }
        export class PlainLayer { append(x: string) {} }
        """
    FILES["src/registry.ts"] = """
        import { ScopedLayers, JobLayer } from "./layers.ts";
        export class Registry {
          private readonly layers = new ScopedLayers<JobLayer>(() => new JobLayer());
          private readonly typed: ScopedLayers<JobLayer, number> | undefined;
          onDone(x: string) {
            return this.layers.effect("done", layer => layer.append(x));
          }
          onTyped(x: string) {
            return this.typed?.effect("t", (layer) => layer.append(x));
          }
        }
        """
    try:
        g = _graph()
    finally:
        del FILES["src/layers.ts"], FILES["src/registry.ts"]
    got = {(u.split(":", 2)[2], d["line"], v.split(":", 2)[2]) for u, v, d in g.edges(data=True)
           if u.startswith("app:src/registry.ts:") and d["kind"] == "method"}
    assert ("Registry.onDone", 7, "JobLayer.append") in got
    assert ("Registry.onTyped", 10, "JobLayer.append") in got
    assert not any(t == "PlainLayer.append" for _s, _l, t in got)
