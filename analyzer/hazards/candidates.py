"""Where a hazard may start or end, read from the index's facts: no source text is searched.

The scan parses only the functions that matter. Which ones hold a source expression (`Date.now()`,
`process.env.HOME`, `import.meta.url`, `for (… of this.registry)`), a sink (`.section(…)`,
`this.systemPrompt = …`) or a structural rewrite (`messages.splice(…)`, `history[i] = …`) is asked of the
per-file facts: call sites (their callee chains and argument counts), definitions (a function named like a
rule's call or registration method) and `Value` facts (member reads, module-wrapper names, assignment
targets, updates, iterated values). The answers are (path, line) pairs at the pinned commits; every
candidate is confirmed on the function's syntax tree by the flow analysis or the structural check, so a
candidate may be loose but never missing: a name matches as a suffix (`_randomBytes` for `randomBytes`, an
import renamed), a member prefix anywhere in a chain.
"""

from __future__ import annotations

from collections.abc import Iterator

from analyzer.hazards.rules import HazardRules, glob_match
from analyzer.index.model import FileFacts, ObjectLiteral, Value
from analyzer.index.testcode import is_test_path

Site = tuple[str, int]  # (path, line)


def _contains(chain: list[str], part: list[str], after_root: bool) -> bool:
    """`part` is a run of `chain`'s segments (after its first with `after_root`: `*.mtime`)."""
    n = len(part)
    return any(chain[i:i + n] == part for i in range(int(after_root), len(chain) - n + 1))


def _ends_with_any(name: str, names: tuple[str, ...]) -> bool:
    return bool(name) and name.endswith(names)


class Candidates:
    """The candidate lines of one pin set's indexed files (repo → facts), test code left out unless asked."""

    def __init__(self, facts: dict[str, list[FileFacts]], rules: HazardRules, include_tests: bool = False) -> None:
        self.rules = rules
        self.files = {repo: [f for f in files if not f.declaration_only and (include_tests or not is_test_path(f.path))]
                      for repo, files in facts.items()}
        self._sources: dict[str, list[Site]] = {}

    # ---- sources -----------------------------------------------------------------------------------
    def sources(self, repo: str) -> list[Site]:
        """Lines that may hold a source expression of a rule (calls, `new`, members, names, iteration, updates)."""
        if repo not in self._sources:
            self._sources[repo] = list(self._source_sites(repo))
        return self._sources[repo]

    def _source_sites(self, repo: str) -> Iterator[Site]:
        rules = self.rules.sources
        last: set[str] = set()  # `*.name` and bare names: the callee's last segment ends with one
        dotted = []  # `Date.now`: the callee chain ends with these segments
        for s in rules:
            for c in s.calls:
                if c.call.startswith("*.") or "." not in c.call:
                    last.add(c.call.rsplit(".", 1)[-1])
                else:
                    dotted.append(c.call.split("."))
        news = [n.split(".") for s in rules for n in s.new]
        last_names = tuple(sorted(last))
        members = [(m[2:].split("."), True) if m.startswith("*.") else (m.split("."), False)
                   for s in rules for m in s.members]
        names = {i for s in rules for i in s.identifiers}
        iterators = {i for s in rules for i in s.iterators}
        updates = any(s.updates for s in rules)
        typed = {t for s in rules for t in s.typed_fields}  # fields read as a typed source (`agent.id`)
        id_types = tuple(t for s in rules for t in s.field_types)
        # …or a record type with such a field (`GenerateOptions.sessionId: Branded<'SessionId'>`): a file that
        # names it reads the id through it without naming the id's type
        id_records = self._id_records(repo, typed, id_types) if typed else set()
        for f in self.files.get(repo, []):
            path = f.path
            # a typed field read counts only in a file that names one of those types (imports or declares it)
            reads_typed = bool(typed) and any(glob_match(n, id_types) or n in id_records for n in (
                *(i.local for i in f.imports), *(d.name for d in f.definitions)))
            for call in f.calls:
                chain = call.callee
                name = chain[-1] if chain else ""
                if call.kind == "new" and not call.args and any(chain[-len(n):] == n for n in news):
                    yield path, call.line
                elif _ends_with_any(name, last_names) or any(chain[-len(d):] == d for d in dotted) \
                        or (name in iterators and len(chain) > 1 and not call.args) \
                        or any(_contains(chain, m, after_root) for m, after_root in members):
                    yield path, call.line
            # a function of a call's name (`homedir() { … }`): read as one of its own sources
            yield from ((path, d.line) for d in f.definitions if _ends_with_any(d.name, last_names))
            for v in f.values:
                kind = v.kind
                if kind == "member" or kind == "assign":  # `process.env.X = …` writes the environment
                    chain = v.text.split(".")
                    if any(_contains(chain, m, after_root) for m, after_root in members) \
                            or (reads_typed and kind == "member" and len(chain) > 1 and chain[-1] in typed):
                        yield path, v.line
                elif kind == "ident":
                    if v.text in names:
                        yield path, v.line
                elif kind == "iterate":
                    if iterators and v.text.startswith("this."):  # a container field (see flow's _is_container)
                        yield path, v.line
                elif kind == "update" and updates:
                    yield path, v.line

    def _id_records(self, repo: str, fields: set[str], id_types: tuple[str, ...]) -> set[str]:
        """Names of the repo's types that declare one of `fields` with a per-session id type."""
        from analyzer.hazards.records import id_type_names

        return {fld.owner.rsplit(".", 1)[-1] for f in self.files.get(repo, []) for fld in f.fields
                if fld.name in fields and fld.type and any(glob_match(n, id_types) for n in id_type_names(fld.type))}

    # ---- names a file exports -----------------------------------------------------------------------
    def exported_names(self) -> dict[tuple[str, str], set[str]]:
        """(repo, path) → the local names its export lists export (`export { renderPrompt }`): such a
        function is shared even though it is not declared with `export` (localnames.py)."""
        return {(repo, f.path): {e.local for e in f.exports if e.local and not e.specifier}
                for repo, files in self.files.items() for f in files if f.exports}

    def typed_objects(self, repo: str) -> list[tuple[str, ObjectLiteral]]:
        """(path, object literal) of the repo's object literals written with a declared type (`const h:
        Header = {…}`, `satisfies`, a function's return type): the candidates for a record's writers."""
        return [(f.path, o) for f in self.files.get(repo, []) for o in f.objects if o.holder_type]

    def field_assignments(self, repo: str) -> list[tuple[str, Value]]:
        """(path, fact) of every `a.b = …` of the repo: the candidates for a record field's writers by
        assignment (`header.cwd = …`)."""
        return [(f.path, v) for f in self.files.get(repo, []) for v in f.values
                if v.kind == "assign" and "." in v.text and not v.text.rsplit(".", 1)[-1].startswith("[")]

    # ---- volatile tests ----------------------------------------------------------------------------
    def control_calls(self, repo: str) -> list[Site]:
        """Lines holding a call a control rule tests (`fetch(…)` whose catch picks a fallback, a machine probe
        such as `existsSync(…)`): the functions holding one are roots, like those holding a source."""
        names: set[str] = set()  # `fetch`, `*.fetch`, `fs.existsSync`: the callee's last segment ends with it
        namespaces: set[str] = set()  # `axios.*`: any function of that namespace
        for pattern in (p for c in self.rules.controls for p in (*c.catch_calls, *c.probe_calls)):
            head, _, last = pattern.rpartition(".")
            if last == "*":
                namespaces.add(head)
            else:
                names.add(last)
        ends = tuple(sorted(names))
        out = []
        for f in self.files.get(repo, []):
            out += [(f.path, c.line) for c in f.calls if c.callee and
                    (_ends_with_any(c.callee[-1], ends) or any(n in c.callee[:-1] for n in namespaces))]
        return out

    # ---- sinks and structural shapes ---------------------------------------------------------------
    def sinks(self, repo: str) -> list[Site]:
        """Lines that may hold a registration-call or assignment sink (`.section(`, `.systemPrompt =`)."""
        methods = tuple(sorted({s.method for s in self.rules.sinks if s.kind == "call_argument"}))
        properties = {p for s in self.rules.sinks if s.kind == "assignment" for p in s.properties}
        # keys that are a sink in any function (`{ 'x-<app>-session-id': id }`, in_functions = ["*"])
        anywhere = tuple(k for s in self.rules.sinks if s.kind == "property" and "*" in s.functions for k in s.keys)
        out = []
        for f in self.files.get(repo, []):
            if anywhere:
                out += [(f.path, p.line) for o in f.objects for p in o.properties
                        if glob_match(p.key.strip("'\"`"), anywhere)]
            out += [(f.path, c.line) for c in f.calls if c.callee and _ends_with_any(c.callee[-1], methods)]
            # the registration method itself (`section(s) { … }`, `get tools()`): where the value is kept
            out += [(f.path, d.line) for d in f.definitions if _ends_with_any(d.name, methods)]
            out += [(f.path, v.line) for v in f.values
                    if v.kind == "assign" and v.text.rsplit(".", 1)[-1] in properties]
        return out

    def structural(self, repo: str) -> list[Site]:
        """Lines that may rewrite a history in place: a rule's method called on a receiver, or (with
        `index_assignment`) a write to an element or an element's property (`list[i] = …`, `list[i].text = …`)."""
        methods = {m for s in self.rules.structural for m in s.methods}
        elements = any(s.index_assignment for s in self.rules.structural)
        out = []
        for f in self.files.get(repo, []):
            out += [(f.path, c.line) for c in f.calls if len(c.callee) > 1 and c.callee[-1] in methods]
            if elements:
                for v in f.values:
                    if v.kind == "assign":
                        chain = v.text.split(".")
                        if chain[-1].startswith("[") or (len(chain) > 2 and chain[-2].startswith("[")):
                            out.append((f.path, v.line))
        return sorted(set(out))
