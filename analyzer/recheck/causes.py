"""Why an edge of the old path is missing at the new pins: the first cause the two graphs can prove.

Each cause is plain data with a `kind` and a one-line `text` that cites what it rests on (a file:line, an
import specifier, a rule name, a commit). The checks run from the most specific to the most general:

- `symbol-removed`: the caller or callee is gone; the closest candidate is a definition with the same body
  (a rename) or, failing that, the most similar name in the same repo.
- `import-unresolved`: a cross-repo call whose import (named in the old edge's evidence) now resolves to
  no locked repo; says what it resolved to before, what the package folder is published as now, and — when
  the package was renamed — the `aliases` line of the lock that maps the old name back.
- `call-removed`: the caller no longer contains the call text of the old call site.
- `dispatch-rule`: the call is still written, but the dispatch rule that made the edge no longer does
  (with its match counts when it now matches nothing at all).
- `call-unresolved`: the call is still written there, but resolution gives it no target (with the reason).
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
from typing import Any

from analyzer.graph.protocol import CallGraph
from analyzer.report.source import SourceReader

# `src/agent.ts:2: import {send} from '@fx/lib' (package of locked repo lib … → src/index.ts)`
IMPORT_EVIDENCE_RE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): import .* from '(?P<spec>[^']+)' \((?P<how>.*)\)$")


def first_cause(check: dict[str, Any], g_old: CallGraph, g_new: CallGraph, reader: SourceReader,
                old_pins: dict[str, Any], new_pins: dict[str, Any], aliases: dict[str, list[str]],
                rules_stopped: list[dict[str, Any]]) -> dict[str, Any]:
    """The cause of one failed edge check (see `compare._edge_checks`), never raising."""
    if check["why"] in ("caller-gone", "callee-gone"):
        node = check["source"] if check["why"] == "caller-gone" else check["target"]
        return symbol_removed(g_old, g_new, node)
    edge = check["attrs"]
    source, target = check["source"], check["target"]
    if g_old.nodes[source]["repo"] != g_old.nodes[target]["repo"]:
        found = import_unresolved(edge, g_old, g_new, source, target, reader, old_pins, new_pins, aliases)
        if found is not None:
            return found
    site = call_site(check, g_new, reader, new_pins)
    if site["kind"] == "call-removed":
        return site
    if edge.get("kind") == "dispatch" and edge.get("rule"):  # the call is still written: the rule let go of it
        stopped = next((r for r in rules_stopped if r["rule"] == edge["rule"]), None)
        matches = f" ({stopped['old_matches']} matches → 0)" if stopped else ""
        return {"kind": "dispatch-rule", "rule": edge["rule"], "call": check["call"],
                "text": f"dispatch rule {edge['rule']} no longer connects {check['source_symbol']} to "
                        f"{check['target_symbol']}{matches}; the call at {check['call']} is still written"}
    return site


def symbol_removed(g_old: CallGraph, g_new: CallGraph, node: str) -> dict[str, Any]:
    a = g_old.nodes[node]
    was = f"{a['repo']}:{a['path']}:{a['line']}"
    candidate = closest_candidate(g_new, a)
    out: dict[str, Any] = {"kind": "symbol-removed", "symbol": a["qualname"], "repo": a["repo"], "was": was,
                           "candidate": candidate}
    if candidate is None:
        out["text"] = f"{a['repo']}:{a['qualname']} was removed (was {was}); nothing similar is defined at the new pins"
    elif candidate["same_body"]:
        out["text"] = (f"{a['repo']}:{a['qualname']} was renamed to {candidate['symbol']} (same body; was {was}, now "
                       f"{candidate['where']})")
    else:
        out["text"] = (f"{a['repo']}:{a['qualname']} was removed (was {was}); closest candidate: "
                       f"{candidate['symbol']} at {candidate['where']}")
    return out


def closest_candidate(g: CallGraph, old: dict[str, Any]) -> dict[str, Any] | None:
    """A definition in the same repo with the same body (a rename), else the most similar name of the same
    kind (ties: same file first)."""
    same_repo = [(n, d) for n, d in g.nodes(data=True) if d.get("repo") == old["repo"]]
    body = old.get("body_hash")
    renamed = sorted(n for n, d in same_repo
                     if body and d.get("body_hash") == body and d["qualname"] != old["qualname"])
    if renamed:
        return _candidate(g, renamed[0], same_body=True)
    names = {d["qualname"]: n for n, d in sorted(same_repo, key=lambda x: (x[1]["path"] != old["path"], x[0]))
             if d.get("kind") == old.get("kind") and d["qualname"] != old["qualname"]}
    # a candidate shares a word of the name (parseUsage ~ readUsage, not encode ~ send), then ranks by likeness
    words = _words(old["qualname"])
    sharing = [q for q in names if words & _words(q)]
    ranked = sorted(sharing, key=lambda q: (-difflib.SequenceMatcher(a=old["qualname"], b=q).ratio(), q))
    return _candidate(g, names[ranked[0]], same_body=False) if ranked else None


def _words(name: str) -> set[str]:
    """The words of a camelCase / dotted name, 3 letters or longer, lower-cased."""
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name) if len(w) >= 3}


def _candidate(g: CallGraph, node: str, *, same_body: bool) -> dict[str, Any]:
    d = g.nodes[node]
    return {"node": node, "symbol": d["qualname"], "where": f"{d['repo']}:{d['path']}:{d['line']}",
            "same_body": same_body}


def import_unresolved(edge: dict[str, Any], g_old: CallGraph, g_new: CallGraph, source: str,
                      target: str, reader: SourceReader, old_pins: dict[str, Any], new_pins: dict[str, Any],
                      aliases: dict[str, list[str]]) -> dict[str, Any] | None:
    """The old edge's import, when it no longer resolves into the callee's repo at the new pins."""
    imported = next((m for ev in edge.get("evidence", []) if (m := IMPORT_EVIDENCE_RE.match(ev))), None)
    if imported is None:
        return None
    repo = g_old.nodes[source]["repo"]
    target_repo = g_old.nodes[target]["repo"]
    spec, path = imported["spec"], imported["path"]
    now = next((u for u in g_new.graph.get("unresolved_imports", [])
                if u.get("specifier") == spec and str(u.get("file", "")).startswith(f"{repo}:{path}:")), None)
    if now is None:
        return None
    package = _package_of(reader, target_repo, g_old.nodes[target]["path"], old_pins, new_pins)
    out: dict[str, Any] = {"kind": "import-unresolved", "specifier": spec,
                           "import": f"{repo}:{path}:{imported['line']}",
                           "before": imported["how"], "now": now.get("how") or "unresolved",
                           "repo": target_repo, "package": package, "aliases_fix": None,
                           "fix_restores_edge": True}
    text = (f"the import of '{spec}' at {repo}:{path}:{imported['line']} no longer resolves to {target_repo} "
            f"(before: {imported['how']}; now: {out['now']})")
    named = _package_name(spec)
    if package and package["new_name"] and package["new_name"] != named:
        text += f"; {target_repo} now publishes {package['folder'] or 'its root'} as {package['new_name']}"
        if package["old_name"] == named:
            fix = [*aliases.get(target_repo, []), named]
            out["aliases_fix"] = f"aliases = {json.dumps(fix)}"
            text += f" (it was {named}): add the old name to [repos.{target_repo}] in the lock: {out['aliases_fix']}"
    out["text"] = text
    return out


def _package_name(spec: str) -> str:
    parts = spec.split("/")
    return "/".join(parts[:2]) if spec.startswith("@") else parts[0]


def _package_of(reader: SourceReader, repo: str, path: str, old_pins: dict[str, Any],
                new_pins: dict[str, Any]) -> dict[str, Any] | None:
    """The nearest package.json above `path`, read at both commits: {folder, old_name, new_name}."""
    folder = posixpath.dirname(path)
    while True:
        manifest = posixpath.join(folder, "package.json") if folder else "package.json"
        old_text = reader.text(repo, old_pins[repo]["commit"], manifest)
        if old_text is not None:
            new_text = reader.text(repo, new_pins[repo]["commit"], manifest)
            return {"folder": folder, "old_name": _manifest_name(old_text), "new_name": _manifest_name(new_text)}
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def _manifest_name(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        name = json.loads(text).get("name")
    except (ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def call_site(check: dict[str, Any], g_new: CallGraph, reader: SourceReader,
              new_pins: dict[str, Any]) -> dict[str, Any]:
    """Is the call still written in the caller at the new pins? If not, the call site was removed."""
    call_text = (check["attrs"].get("call_text") or "").rpartition(".")[2]
    u = check["source_new"]
    d = g_new.nodes[u]
    body = reader.lines(d["repo"], new_pins[d["repo"]]["commit"], d["path"], d["line"], d["end_line"])
    if call_text and body is not None and not any(re.search(rf"\b{re.escape(call_text)}\s*\(", ln) for ln in body):
        return {"kind": "call-removed", "call": check["call"],
                "text": f"the call {check['attrs'].get('call_text')}(…) at {check['call']} is gone: "
                        f"{d['qualname']} ({d['repo']}:{d['path']}:{d['line']}) no longer calls "
                        f"{call_text} at the new pins"}
    reasons = sorted({r for caller, _line, text, r in g_new.graph.get("unresolved", [])
                      if caller == u and str(text).rpartition(".")[2] == call_text})
    why = f": {'; '.join(reasons)}" if reasons else ""
    still = "still written" if body is not None else "perhaps still written (source unavailable)"
    return {"kind": "call-unresolved", "call": check["call"], "reasons": reasons,
            "text": f"the call {check['attrs'].get('call_text') or check['target_symbol']}(…) is {still} in "
                    f"{d['qualname']} ({d['repo']}:{d['path']}) but no longer resolves to "
                    f"{check['target_symbol']}{why}"}


def unresolved_package_import(g: CallGraph, reader: SourceReader, pins: dict[str, Any], to_repo: str,
                              to_path: str, aliases: dict[str, list[str]], where: str) -> dict[str, Any] | None:
    """With no path at all to compare edge by edge: an import elsewhere that names TO's package under another
    scope (`@old/pi-ai` while the folder is published as `@new/pi-ai`) and so resolves to no locked repo.
    `where` says which pins `g` is ("new", "old")."""
    package = _package_of(reader, to_repo, to_path, pins, pins)
    if not package or not package["new_name"]:
        return None
    published = package["new_name"]
    bare = published.rpartition("/")[2]
    hits = sorted((str(u.get("file", "")), str(u["specifier"])) for u in g.graph.get("unresolved_imports", [])
                  if u.get("specifier") and not str(u.get("file", "")).startswith(f"{to_repo}:")
                  and _package_name(str(u["specifier"])) != published
                  and _package_name(str(u["specifier"])).rpartition("/")[2] == bare)
    if not hits:
        return None
    first_file, spec = hits[0]
    named = _package_name(spec)
    files = sorted({f.rsplit(":", 1)[0] for f, s in hits if _package_name(s) == named})
    fix = f"aliases = {json.dumps([*aliases.get(to_repo, []), named])}"
    more = f" (and {len(files) - 1} more file(s))" if len(files) > 1 else ""
    return {"kind": "import-unresolved", "specifier": spec, "import": first_file, "before": None,
            "now": "third-party package", "repo": to_repo, "package": package, "aliases_fix": fix, "pins": where,
            "fix_restores_edge": False,
            "text": f"at the {where} pins the import of '{spec}' at {first_file}{more} resolves to no locked repo, "
                    f"while {to_repo} publishes {package['folder'] or 'its root'} as {published}; {fix} in "
                    f"[repos.{to_repo}] lets it resolve (whether a path then exists is not proven: re-check)"}
