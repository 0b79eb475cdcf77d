"""Measure the call graph against the TypeScript compiler (LanguageService) on a random sample of functions.

    python benchmarks/ts_oracle.py --typescript DIR [--lock repos.lock] [--cache-dir DIR] [--sample 200]
                                   [--seed 11 [23 …]] [--stratum trace] [--misses F.json]
                                   [--rows F.jsonl | --from-rows F.jsonl]

DIR is a `node_modules` folder holding `typescript` (`npm install typescript` into a scratch dir; the
compiler is a yardstick, never a dependency of analyzer). The pinned commits are exported from the synced
cache into a temp dir, one TypeScript program is built over both repos (workspace packages and the lock's
`aliases` mapped to their `src/`), and for every call site of each sampled production function the
compiler's Go to Definition (and Go to Implementation at interface/abstract member calls and calls of
function-typed values) is compared with the graph's edges at that call line. Printed ratios:

- concrete recall: in-repo definitions with a body that the graph reaches (any confident kind);
- interface recall: production implementations (not test code) reached at interface/abstract calls (an
  implementation the compiler names that is no function of its own — `getModels: currentModels`,
  `notify: ui.notify` — would map to the function around it, which is not what runs: counted apart);
- function-typed values (a parameter or property called; locals bound from calls such as React's
  `useState` setters, and parameters of closures handed to code outside the repos such as
  `new Promise((resolve, reject) => …)`, are left out: nothing in the repos is passed there): call sites
  with an edge, and with the compiler's implementation reached;
- `direct` / `method` precision: edges whose target the compiler names at that line;
- `name` guesses: how many, how many right, how many into another repo.

`--stratum trace` adds one more sample, measured on its own: the functions on the request path `analyze
trace` prints (the lock's `[trace]` FROM → TO), the other production targets at that path's dynamic seams,
and every production function those call directly (the graph's confident edges) — the code whose calls
decide whether the traced path is complete.

`--rows F` keeps the compiler's rows (and the samples, as the file's first line) in a scratch file;
`--from-rows F` measures the current graph against such a file without running the compiler again (the
samples are read from it, so a changed graph is measured on the same functions).

Nothing the compiler outputs about upstream code is stored; the temp dir is removed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
FUNCTION_KINDS = ("function", "method", "object_method", "getter", "setter", "constructor")


def workspace_paths(root: Path, aliases: dict[str, list[str]] | None = None,
                    tsconfig_paths: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """tsconfig `paths` for every workspace package under `root` (name → its src/index), plus aliases:
    `{"@old/pi-ai": ["@new/pi-ai"]}` maps the old scope to the same folder."""
    paths: dict[str, list[str]] = dict(tsconfig_paths or {})
    for pj in sorted(root.rglob("package.json")):
        if "node_modules" in pj.parts:
            continue
        try:
            name = json.loads(pj.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError):
            continue
        if not isinstance(name, str) or not name:
            continue
        d = pj.parent.relative_to(root).as_posix()
        paths.setdefault(name, [f"{d}/src/index.ts", f"{d}/src/index.tsx", f"{d}/index.ts"])
        paths.setdefault(name + "/*", [f"{d}/src/*", f"{d}/*"])
    for old, new_names in (aliases or {}).items():
        for new in new_names:
            if new in paths:
                paths[old], paths[old + "/*"] = paths[new], paths[new + "/*"]
    return paths


def sample_functions(g: Any, n: int, seed: int) -> list[str]:
    pool = sorted(node for node, a in g.nodes(data=True)
                  if a.get("kind") in FUNCTION_KINDS and a.get("has_body", True) and not a.get("test")
                  and a.get("path", "").endswith(SOURCE_SUFFIXES))
    random.seed(seed)
    return pool if n >= len(pool) else random.sample(pool, n)


def trace_stratum(g: Any, spec_from: str, spec_to: str) -> list[str]:
    """The functions on the best FROM → TO path, the other production targets at its dynamic seams, and the
    production functions all of those call directly (confident edges, no `name` guesses)."""
    from analyzer.trace.search import PathOptions, trace_graph

    doc = trace_graph(g, spec_from, spec_to, {}, PathOptions()).document
    assert doc is not None
    core = {h["node"] for h in doc["hops"]}
    for e in doc["edges"]:
        core.update(e["alternatives"])
    out = set(core)
    for n in core:
        out.update(v for _, v, d in g.out_edges(n, data=True) if d.get("kind") != "name")

    def wanted(n: str) -> bool:
        a = g.nodes[n]
        return (a.get("kind") in FUNCTION_KINDS and a.get("has_body", True) and not a.get("test")
                and a.get("path", "").endswith(SOURCE_SUFFIXES))

    return sorted(n for n in out if wanted(n))


def run_oracle(root: Path, g: Any, nodes: list[str], paths: dict[str, list[str]], typescript: Path) -> list[dict]:
    from analyzer.index.testcode import is_test_path

    # a test fixture's `.d.ts` may declare `declare module '@deepseek-ai/cordis' { class Service … }`: in one
    # program over everything that ambient module would shadow the real package for every importer (the
    # compiler prefers ambient modules), which no build of the repos does — leave such files out
    files = sorted(rel for p in root.rglob("*") if p.suffix in SOURCE_SUFFIXES and "node_modules" not in p.parts
                   and not ((rel := p.relative_to(root).as_posix()).endswith(".d.ts") and is_test_path(rel)))
    samples = [{"node": n, "file": f"{g.nodes[n]['repo']}/{g.nodes[n]['path']}", "line": g.nodes[n]["line"],
                "end_line": g.nodes[n]["end_line"]} for n in nodes]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "oracle.json"
        cfg.write_text(json.dumps({"root": str(root), "files": files, "paths": paths, "samples": samples}))
        env = dict(os.environ, TS_MODULE=str(typescript / "typescript"))
        res = subprocess.run(["node", "--max-old-space-size=3000", str(HERE / "ts_oracle.js"), str(cfg)],
                             capture_output=True, text=True, env=env, check=False)
    if res.returncode:
        raise RuntimeError(f"ts_oracle.js failed: {res.stderr[-2000:]}")
    return [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]


class Mapper:
    """TypeScript declaration positions → graph nodes (the innermost definition of that name there)."""

    def __init__(self, g: Any) -> None:
        self.g = g
        self.by_file: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.children: dict[str, list[str]] = defaultdict(list)
        for n, a in g.nodes(data=True):
            if a.get("kind") in ("module", "unknown", "external"):
                continue
            self.by_file[(a["repo"], a["path"])].append(n)
            if a.get("parent"):
                self.children[a["parent"]].append(n)
        self.inherited: dict[str, set[str]] = defaultdict(set)  # class → constructors its implicit super(…) runs
        for n, a in g.nodes(data=True):
            if a.get("kind") != "class":
                continue
            todo, seen = [n], set()
            while todo:
                cur = todo.pop()
                for _, v, d in g.out_edges(cur, data=True):
                    if d.get("call_text") == "super" and d.get("kind") == "direct" and v not in seen:
                        seen.add(v)
                        todo.append(v)
            self.inherited[n] = seen

    def node_at(self, file: str | None, line: int, name: str = "") -> str | None:
        if not file:
            return None
        repo, _, path = file.partition("/")
        here = [n for n in self.by_file.get((repo, path), [])
                if self.g.nodes[n]["line"] <= line <= self.g.nodes[n]["end_line"]]
        named = [n for n in here if name and self.g.nodes[n]["name"] == name]
        if not named and name:  # an overload signature: the graph's node starts at the implementation below
            # (the nearest one: several overloads of a long signature each can stand many lines above it)
            below = [n for n in self.by_file.get((repo, path), []) if self.g.nodes[n]["name"] == name
                     and self.g.nodes[n]["line"] > line]
            nearest = min((self.g.nodes[n]["line"] for n in below), default=None)
            named = [n for n in below if self.g.nodes[n]["line"] == nearest]
        named = named or [n for n in here if self.g.nodes[n]["kind"] != "class"] or here
        return min(named, key=lambda n: self.g.nodes[n]["end_line"] - self.g.nodes[n]["line"]) if named else None

    def accept(self, node: str | None) -> set[str]:
        """A class matches its constructor and vice versa (`new C()` is either, depending on C)."""
        if node is None:
            return set()
        out = {node}
        a = self.g.nodes[node]
        if a.get("kind") == "class":
            out |= {c for c in self.children[node] if self.g.nodes[c]["kind"] == "constructor"}
        if a.get("kind") == "constructor" and a.get("parent"):
            out.add(a["parent"])
        if a.get("kind") == "class":  # `new C()` of a class without a constructor runs the inherited one
            out |= self.inherited.get(node, set())
        return out


def compare(g: Any, rows: list[dict]) -> tuple[Counter, dict[str, list]]:
    m = Mapper(g)
    stats: Counter = Counter()
    misses: dict[str, list] = defaultdict(list)
    by_line: dict[tuple[str, int], set[str]] = defaultdict(set)
    known_line: set[tuple[str, int]] = set()
    for r in rows:
        for d in r.get("defs", []):
            if d["file"]:
                known_line.add((r["sample"], r["line"]))
                by_line[(r["sample"], r["line"])] |= m.accept(m.node_at(d["file"], d["line"], d["name"]))
        for im in r.get("impls", []):
            by_line[(r["sample"], r["line"])] |= m.accept(m.node_at(im["file"], im["line"]))
    ours: dict[tuple[str, int], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for u, v, d in g.edges(data=True):
        ours[(u, d["line"])][d["kind"]].add(v)
    seen_lines: set[tuple[str, int]] = set()
    for r in rows:
        if "error" in r:
            stats["errors"] += 1
            continue
        key = (r["sample"], r["line"])
        have = ours.get(key, {})
        confident = set().union(*(v for k, v in have.items() if k != "name")) if have else set()
        stats["call_sites"] += 1
        in_repo = [d for d in r["defs"] if d["file"]]
        for d in in_repo:
            if d["cls"] != "concrete":
                continue
            t = m.node_at(d["file"], d["line"], d["name"])
            if t is None:
                stats["concrete_unmapped"] += 1
                continue
            stats["concrete"] += 1
            if m.accept(t) & confident:
                stats["concrete_found"] += 1
            else:
                misses["concrete"].append((r["sample"], r["line"], r["text"], t))
        impls = set()
        for im in r["impls"]:
            t = m.node_at(im["file"], im["line"])
            if t is None:
                continue
            if not g.nodes[t].get("has_body", True):  # a signature (`Static.const(…)` in a declared interface)
                stats["impl_without_body"] += 1
                continue
            if not 0 <= im["line"] - g.nodes[t]["line"] <= 3:
                # the compiler names a member that is no function of its own (`getModels: currentModels`,
                # `notify: ui.notify`): the definition around that line is not what runs — not counted
                stats["impl_not_a_function"] += 1
                continue
            impls.add(t)
        prod = {t for t in impls if not g.nodes[t].get("test")}
        if any(d["cls"] == "interface" for d in in_repo):
            for t in prod:
                stats["iface_prod_impls"] += 1
                if m.accept(t) & confident:
                    stats["iface_prod_found"] += 1
                else:
                    misses["interface"].append((r["sample"], r["line"], r["text"], t))
        if any(d["cls"] == "value" and d.get("holder") in ("parameter", "property") for d in in_repo):
            stats["value_sites"] += 1
            stats["value_sites_with_edge"] += bool(confident)
            if prod:
                stats["value_sites_with_ts_impl"] += 1
                reached = any(m.accept(t) & confident for t in prod)
                stats["value_sites_impl_found"] += reached
                if not reached:
                    misses["value_impl"].append((r["sample"], r["line"], r["text"], sorted(prod)))
            if not confident:
                misses["value"].append((r["sample"], r["line"], r["text"]))
        if key in seen_lines:
            continue
        seen_lines.add(key)
        for kind in ("direct", "method"):
            for v in have.get(kind, set()):
                if key not in known_line:
                    continue  # the compiler names nothing in the repos here (a global, an npm package)
                stats[f"{kind}_checked"] += 1
                if v in by_line[key]:
                    stats[f"{kind}_right"] += 1
                else:
                    misses[f"wrong_{kind}"].append((r["sample"], r["line"], r["text"], v))
        for v in have.get("name", set()):
            stats["name_edges"] += 1
            stats["name_right"] += v in by_line[key]
            stats["name_cross_repo"] += v.split(":", 1)[0] != r["sample"].split(":", 1)[0]
    return stats, misses


def report(stats: Counter) -> list[str]:
    def pct(a: str, b: str) -> str:
        return f"{stats[a]}/{stats[b]} = {100 * stats[a] / stats[b]:.1f}%" if stats[b] else f"{stats[a]}/0"

    return [
        f"call sites: {stats['call_sites']}",
        f"concrete recall: {pct('concrete_found', 'concrete')} (unmapped {stats['concrete_unmapped']})",
        f"interface production implementations reached: {pct('iface_prod_found', 'iface_prod_impls')} "
        f"(not counted: {stats['impl_not_a_function']} that are no function of their own, "
        f"{stats['impl_without_body']} without a body)",
        f"function-typed parameters/properties called, sites with an edge: "
        f"{pct('value_sites_with_edge', 'value_sites')}; "
        f"with the compiler's implementation reached: {pct('value_sites_impl_found', 'value_sites_with_ts_impl')}",
        f"direct precision: {pct('direct_right', 'direct_checked')}; method precision: "
        f"{pct('method_right', 'method_checked')}",
        f"name guesses: {stats['name_edges']}, right {stats['name_right']}, into another repo "
        f"{stats['name_cross_repo']}",
    ]


def main() -> int:
    from analyzer.analysis import analyze
    from analyzer.cli.context import CliContext

    ap = argparse.ArgumentParser()
    ap.add_argument("--lock", type=Path, default=Path("repos.lock"))
    ap.add_argument("--cache-dir", type=Path)
    ap.add_argument("--typescript", type=Path, required=True, help="a node_modules dir holding typescript")
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--seed", type=int, nargs="+", default=[11],
                    help="one or more seeds: one sample each, measured separately over one TypeScript program")
    ap.add_argument("--misses", type=Path, help="write the misses as JSON here (scratch; quotes upstream names)")
    ap.add_argument("--stratum", choices=["trace"], action="append", default=[],
                    help="also measure this stratum on its own (trace: the functions of `analyze trace`'s path)")
    ap.add_argument("--source", action="append", default=[], metavar="NAME=URL", help="as analyze's --source")
    rows_from = ap.add_mutually_exclusive_group()
    rows_from.add_argument("--rows", type=Path, help="write the compiler's rows as JSON lines here (scratch)")
    rows_from.add_argument("--from-rows", type=Path,
                           help="measure against rows a --rows run wrote (no compiler run; same samples)")
    args = ap.parse_args()
    ctx = CliContext(lock_path=args.lock, cache_dir_option=args.cache_dir, source_options=args.source)
    g = analyze(ctx).graph
    lock = ctx.lock
    if args.from_rows:
        head, *lines = args.from_rows.read_text(encoding="utf-8").splitlines()
        samples = {k: v for k, v in json.loads(head)["samples"].items()}
        rows = [json.loads(line) for line in lines if line.startswith("{")]
        missing = sorted(n for nodes in samples.values() for n in nodes if n not in g)
        if missing:
            print(f"warning: {len(missing)} sampled functions are not in this graph (e.g. {missing[0]})",
                  file=sys.stderr)
        return _measure(g, samples, rows, args.misses)
    root = Path(tempfile.mkdtemp(prefix="ts-oracle-"))
    try:
        aliases: dict[str, list[str]] = {}
        for name, repo in lock.repos.items():
            dest = root / name
            dest.mkdir()
            archive = subprocess.run(["git", "-C", str(ctx.cache_dir / "repos" / name), "archive", repo.commit],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
            own = {}
            for pj in dest.rglob("package.json"):
                if "node_modules" not in pj.parts:
                    pkg = json.loads(pj.read_text(encoding="utf-8") or "{}").get("name")
                    if isinstance(pkg, str):
                        own[pkg.split("/")[-1]] = pkg
            for alias in repo.aliases:  # an old npm scope of this repo's package of the same name
                if alias.split("/")[-1] in own:
                    aliases[alias] = [own[alias.split("/")[-1]]]
        samples: dict[str, list[str]] = {f"seed {seed}": sample_functions(g, args.sample, seed)
                                          for seed in args.seed}
        if "trace" in args.stratum:
            if not lock.trace_from or not lock.trace_to:
                raise SystemExit("error: --stratum trace needs a [trace] table with from/to in the lock")
            samples["trace"] = trace_stratum(g, lock.trace_from, lock.trace_to)
        union = sorted(set().union(*samples.values()))
        rows = run_oracle(root, g, union, workspace_paths(root, aliases), args.typescript)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.rows:
        args.rows.write_text(json.dumps({"samples": samples}) + "\n" + "".join(json.dumps(r) + "\n" for r in rows))
    return _measure(g, samples, rows, args.misses)


def _measure(g: Any, samples: dict[str, list[str]], rows: list[dict], misses_file: Path | None) -> int:
    all_misses = {}
    for label, nodes in samples.items():
        chosen = set(nodes)
        stats, misses = compare(g, [r for r in rows if r.get("sample") in chosen])
        all_misses[label] = misses
        print(f"sample: {len(nodes)} production functions ({label})")
        print("\n".join(report(stats)))
    if misses_file:
        misses_file.write_text(json.dumps(all_misses if len(samples) > 1 else next(iter(all_misses.values())),
                                          indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
