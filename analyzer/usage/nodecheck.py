"""Differential check: run the same located functions in Node and compare with the evaluator.

Only used by tests (the tool itself never runs upstream code in Node). For one interpreter that has run,
the modules and top-level declarations it touched are re-emitted as type-stripped `.mjs` files (in source
order, with the imports it followed), plus the entry functions; a driver calls them on JSON inputs and
prints `JSON.stringify` of each result, which must equal `values.json_stringify` of the evaluator's result.
"""

from __future__ import annotations

import json
import posixpath
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analyzer.usage.evaluator import Interpreter
from analyzer.usage.locate import LocatedFunction
from analyzer.usage.striptypes import strip_types


@dataclass(frozen=True)
class NodeCall:
    """One call to replay: the entry key, its arguments as JSON text, and the evaluator's result as JSON text."""

    entry: str
    args_json: str
    result_json: str | None


def node_binary() -> str | None:
    return shutil.which("node")


def _mjs(path: str) -> str:
    return path + ".mjs"


def _rel(from_path: str, to_path: str) -> str:
    rel = posixpath.relpath(to_path, posixpath.dirname(from_path) or ".")
    return rel if rel.startswith(".") else "./" + rel


def write_bundle(interp: Interpreter, entries: Mapping[str, LocatedFunction], out_dir: Path) -> Path:
    """Emit the touched code as .mjs files under `out_dir`; returns the driver script path."""
    locator = interp.locator
    paths = set(interp.touched) | {e.module.path for e in entries.values()}
    entry_by_path: dict[str, dict[str, LocatedFunction]] = {}
    for key, located in entries.items():
        entry_by_path.setdefault(located.module.path, {})[key] = located
    for path in sorted(paths):
        mod = locator.module(path)
        lines: list[str] = []
        exports: list[str] = []
        for (src_path, local), (target, target_local) in sorted(interp.import_links.items()):
            if src_path != path:
                continue
            if target_local == "":
                dest = out_dir / target
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(json.dumps(locator.json_data(target)), encoding="utf-8")
                lines.append(f'import {local} from "{_rel(path, target)}" with {{ type: "json" }};')
            else:
                lines.append(f'import {{ {target_local} as {local} }} from "{_rel(path, _mjs(target))}";')
        decls = sorted(interp.touched.get(path, {}).items(), key=lambda kv: kv[1].start_byte)
        for name, decl in decls:
            text = strip_types(mod, decl)
            lines.append(f"const {text};" if decl.type == "variable_declarator" else text)
            exports.append(name)
        for key, located in entry_by_path.get(path, {}).items():
            if located.declaration is located.node and located.node.type == "function_declaration":
                name = mod.text(located.node.child_by_field_name("name"))
                if name not in exports:
                    lines.append(strip_types(mod, located.node))
                    exports.append(name)
                lines.append(f"export const __entry_{key} = {name};")
            elif located.node.type == "method_definition":
                method = mod.text(located.node.child_by_field_name("name"))
                lines.append(f"export const __entry_{key} = ({{ {strip_types(mod, located.node)} }}).{method};")
            else:
                lines.append(f"export const __entry_{key} = ({strip_types(mod, located.node)});")
        if exports:
            lines.append(f"export {{ {', '.join(exports)} }};")
        dest = out_dir / _mjs(path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    driver = out_dir / "__driver.mjs"
    imports = "\n".join(f'import {{ __entry_{k} }} from "./{_mjs(e.module.path)}";' for k, e in entries.items())
    table = ", ".join(f"{json.dumps(k)}: __entry_{k}" for k in entries)
    driver.write_text(
        f"{imports}\nimport {{ readFileSync }} from 'node:fs';\nconst entries = {{ {table} }};\n"
        "const calls = JSON.parse(readFileSync(process.argv[2], 'utf8'));\n"
        "const out = calls.map(c => { const r = entries[c.entry](...JSON.parse(c.args));"
        " const s = JSON.stringify(r); return s === undefined ? null : s; });\n"
        "process.stdout.write(JSON.stringify(out));\n", encoding="utf-8")
    return driver


def run_in_node(driver: Path, calls: Sequence[NodeCall], timeout: float = 60.0) -> list[str | None]:
    """Run the calls in Node; returns each result's `JSON.stringify` text (None for undefined)."""
    node = node_binary()
    if node is None:
        raise RuntimeError("node is not on PATH")
    calls_file = driver.parent / "__calls.json"
    calls_file.write_text(json.dumps([{"entry": c.entry, "args": c.args_json} for c in calls]), encoding="utf-8")
    proc = subprocess.run([node, str(driver), str(calls_file)], capture_output=True, text=True, timeout=timeout,
                          check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"node failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    result: list[Any] = json.loads(proc.stdout)
    return result
