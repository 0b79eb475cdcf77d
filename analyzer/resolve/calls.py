"""Call resolution: turn each extracted call site into edges of a known kind, or an honest
`Unresolved` record. Order of preference: bound identifiers (`direct`), typed receivers (`method`,
then `interface` fan-out to implementations), then data-driven dispatch rules, and only when the
receiver type is unknown a last-resort unique-name guess (`name`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from analyzer.index.model import Call
from analyzer.resolve.edges import Edge, Unresolved
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import CALLABLE_KINDS, MODULE_QUALNAME, DefRef, Program
from analyzer.resolve.receivers import Types
from analyzer.resolve.symbols import SymbolResolver
from analyzer.resolve.typed import NamedType, NamespaceType, Typed, TypeExpr

ABSTRACT_OWNER_KINDS = ("interface", "type_alias")
UNKNOWN_RECEIVER = "no static type for receiver"
EdgeRule = Callable[[ModuleRef, Call], list[Edge]]


@dataclass
class FileResult:
    edges: list[Edge] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    external_calls: Counter[str] = field(default_factory=Counter)  # npm package → calls into it


def node_id_for_scope(mod: ModuleRef, scope: str | None) -> str:
    return f"{mod.repo}:{mod.path}:{scope or MODULE_QUALNAME}"


class CallResolver:
    def __init__(self, program: Program, symbols: SymbolResolver, types: Types,
                 no_guess: set[str] | None = None, global_receivers: set[str] | None = None) -> None:
        self.p = program
        self.symbols = symbols
        self.types = types
        self._method_names: dict[str, list[DefRef]] | None = None
        self._impl_targets: dict[tuple[DefRef, str], list[tuple[DefRef, tuple[str, ...]]]] = {}
        self._receivers: dict[tuple[ModuleRef, str | None, tuple[str, ...], int], list[Typed]] = {}
        # builtin method names never guessed (rules: name_guess.skip_methods)
        self.no_guess: set[str] = no_guess if no_guess is not None else set()
        # JavaScript globals (rules: name_guess.skip_receivers)
        self.global_receivers: set[str] = global_receivers if global_receivers is not None else set()

    def resolve_file(self, mod: ModuleRef, rules_fallback: EdgeRule | None = None,
                     rules_first: EdgeRule | None = None) -> FileResult:
        """Edges for every call of a file. `rules_first` claims calls that a dispatch rule describes better
        than types do (service injection); `rules_fallback` handles calls types could not bind."""
        out = FileResult()
        facts = self.p.files[mod]
        for call in facts.calls:
            seam_edges = rules_first(mod, call) if rules_first is not None else []
            if seam_edges:
                out.edges.extend(seam_edges)
                continue
            edges, why, external = self.resolve_call(mod, call)
            if not edges and rules_fallback is not None and why is not None:
                edges = rules_fallback(mod, call)
                if edges:
                    why = None
            if not edges and why is not None and why.startswith(UNKNOWN_RECEIVER) and not external:
                edges = self._name_guess(mod, call)
            out.edges.extend(edges)
            if external:
                out.external_calls[external] += 1
            elif not edges and why is not None:
                out.unresolved.append(Unresolved(node_id_for_scope(mod, call.scope), call.line, mod.path,
                                                 call.text or ".".join(call.callee), why))
        return out

    def receiver_types(self, mod: ModuleRef, scope: str | None, chain: list[str], line: int) -> list[Typed]:
        """`types.exprs.chain_types`, memoised for the passes that ask it about call sites (this one, the dispatch
        rules' context check, the function-value pass: 300,000 questions, 1 in 3 repeated). Exact because
        they ask only from outside the typing code: no typing step is in progress (its cycle guards are
        all released), so a repeated question gets the answer the first one got. Do not mutate the list.
        A `this.…` chain is typed without its line (only a named root's binding depends on where it is
        read), so all of a scope's `this.a.b` calls share one answer."""
        key = (mod, scope, tuple(chain), -1 if chain and chain[0] == "this" else line)
        found = self._receivers.get(key)
        if found is None:
            found = self._receivers[key] = self.types.exprs.chain_types(mod, scope, chain, line)
        return found

    # --- one call ------------------------------------------------------------------------------
    def resolve_call(self, mod: ModuleRef, call: Call) -> tuple[list[Edge], str | None, str | None]:
        """(edges, reason when unresolved, the npm package when the callee belongs to a third-party one)."""
        if call.kind == "super":
            return self._super_call(mod, call), "no indexed superclass", None
        if len(call.callee) == 1 or call.kind == "new":
            return self._named_call(mod, call)
        return self._member_call(mod, call)

    def make_edge(self, mod: ModuleRef, call: Call, target: DefRef, kind: str, evidence: Iterable[str],
              possible: bool = False, seam: str | None = None, rule: str | None = None) -> Edge:
        text = call.text or ".".join(call.callee)
        # positional, in Edge's field order (source, target, kind, line, path, repo, evidence, rule, possible,
        # nested, column, call_text, seam): 220,000 edges, and keywords cost a third more per construction
        return Edge(f"{mod.repo}:{mod.path}:{call.scope or MODULE_QUALNAME}", target.node_id, kind, call.line,
                    mod.path, mod.repo, [f"{mod.path}:{call.line}: {text}(…)", *evidence], rule, possible,
                    call.nested, call.column, text, seam)

    def _named_call(self, mod: ModuleRef, call: Call) -> tuple[list[Edge], str | None, str | None]:
        chain = call.callee
        if len(chain) == 1:
            local = self.p.local_function(mod, call.scope, chain[0])
            if local is not None:
                ref = DefRef(mod.repo, mod.path, local.qualname)
                why = f"{mod.path}:{local.line}: local function"
                return [self.make_edge(mod, call, ref, "direct", [why])], None, None
            sym = self.symbols.resolve_name(mod, chain[0])
        else:
            targets = self.types.exprs.chain_types(mod, call.scope, chain[:-1], call.line)
            sym = None
            for t in targets:
                if isinstance(t, NamespaceType):
                    sym = self.symbols.resolve_export(t.module, chain[-1])
                    if sym is not None:
                        sym = type(sym)(sym.definition, sym.namespace, sym.binding, sym.external,
                                        (*t.evidence, *sym.evidence), sym.type_only)
                    break
            if sym is None:
                return [], f"cannot resolve {'.'.join(chain)}", None
        if sym is None:
            if _is_bound_locally(self.p, mod, call.scope, chain[0], call.line):
                return [], f"{chain[0]} is a local variable or parameter (a function value)", None
            return [], f"{chain[0]} is not defined or imported here (a global?)", None
        if sym.external is not None:
            return [], None, sym.external
        if sym.definition is None:
            return [], f"{chain[-1]} is a variable, not a function", None
        target = sym.definition
        d = self.p.defs[target]
        extra: list[Edge] = []
        if d.kind == "class":
            ctor = next((c for c in self.p.children(target) if c.kind == "constructor"), None)
            if ctor is not None:
                target = DefRef(target.repo, target.path, ctor.qualname)
            else:  # `new WebError(…)` without a constructor of its own runs the inherited one
                inherited = self.types.decls.constructor_of(target)
                if inherited != target:
                    extra.append(self.make_edge(mod, call, inherited, "direct", (
                        *sym.evidence, f"{target.path}:{d.line}: {d.name} has no constructor; it inherits "
                                       f"{inherited.qualname}")))
        elif d.kind not in CALLABLE_KINDS:
            return [], f"{chain[-1]} is a {d.kind}, not callable", None
        return [self.make_edge(mod, call, target, "direct", sym.evidence), *extra], None, None

    def _super_call(self, mod: ModuleRef, call: Call) -> list[Edge]:
        if call.scope is None:
            return []
        cls = self.p.enclosing_class(DefRef(mod.repo, mod.path, call.scope))
        if cls is None:
            return []
        d = self.p.defs[cls]
        edges = []
        for text in d.extends:
            for sup in self.types.decls.resolve_text(cls.module, text, f"{mod.path}:{d.line}: extends {text}"):
                if len(call.callee) == 1:
                    members = [c for c in self.p.children(sup.ref) if c.kind == "constructor"]
                    owner = sup.ref
                    if not members and self.p.defs[sup.ref].kind == "class":
                        # no explicit constructor: super(…) runs the base's field initialisers (owned by
                        # the class node) and its own implicit super(…) (see resolve/construct.py)
                        edges.append(self.make_edge(mod, call, sup.ref, "direct",
                                                    (*sup.evidence, f"{sup.ref.path}:{self.p.defs[sup.ref].line}: "
                                                     f"{sup.ref.qualname} has no explicit constructor")))
                else:
                    found = self.types.decls.find_member(sup.ref, call.callee[-1])
                    members = [m.definition for m in found if m.definition is not None]
                    owner = found[0].owner if found else sup.ref
                for m in members:
                    # `super(…)`/`super.m()` name exactly one definition: a static binding, like a direct call
                    edges.append(self.make_edge(mod, call, DefRef(owner.repo, owner.path, m.qualname), "direct",
                                            sup.evidence))
        return edges

    def _member_call(self, mod: ModuleRef, call: Call) -> tuple[list[Edge], str | None, str | None]:
        chain, method = call.callee[:-1], call.callee[-1]
        if chain and chain[0] == "super":
            return self._super_call(mod, call), "no indexed superclass", None
        receivers = self.receiver_types(mod, call.scope, chain, call.line)
        if not receivers:
            root = self.symbols.resolve_name(mod, chain[0]) if chain and chain[0] not in ("this", "<expr>") else None
            if root is not None and root.external is not None and not _is_bound_locally(
                    self.p, mod, call.scope, chain[0], call.line):
                return [], None, root.external
            return [], f"{UNKNOWN_RECEIVER} {'.'.join(chain)}", None
        edges: list[Edge] = []
        typed_known = False
        for recv in receivers:
            if isinstance(recv, NamespaceType):
                sym = self.symbols.resolve_export(recv.module, method)
                if sym is not None and sym.definition is not None:
                    edges.append(self.make_edge(mod, call, sym.definition, "direct", (*recv.evidence, *sym.evidence)))
                elif sym is not None and sym.external is not None:
                    return [], None, sym.external
                continue
            if isinstance(recv, TypeExpr):
                known, having = self.types.decls.types_having(recv.mod, recv.text, recv.evidence, method)
            else:
                known, having = True, [recv] if self.types.decls.find_member(recv.ref, method) else []
            typed_known = typed_known or known
            for nt in having:
                edges.extend(self._method_edges(mod, call, nt, method))
        if edges:
            return _dedupe(edges), None, None
        if typed_known:
            return [], f"no member {method!r} on the receiver's known type", None
        return [], f"receiver type of {'.'.join(chain)} not indexed (external or untyped)", None

    def _method_edges(self, mod: ModuleRef, call: Call, nt: NamedType, method: str) -> list[Edge]:
        edges: list[Edge] = []
        members = self.types.decls.find_member(nt.ref, method)
        if not members:  # most receiver types (augmentations of a shared interface) lack the member
            return edges
        seam = f"{mod.repo}:{mod.path}:{call.line}:{call.column}"
        for m in members:
            owner_def = self.p.defs[m.owner]
            abstract_owner = owner_def.kind in ABSTRACT_OWNER_KINDS
            if m.definition is not None:
                target = DefRef(m.owner.repo, m.owner.path, m.definition.qualname)
                is_abstract = abstract_owner or "abstract" in m.definition.modifiers or m.definition.kind == "method" \
                    and owner_def.kind == "interface"
                if not is_abstract and m.definition.kind in CALLABLE_KINDS:
                    if m.mixin:  # `interface C extends Pick<Fiber, 'effect'>`: mixed in at run time, not inherited
                        edges.append(self.make_edge(mod, call, target, "interface", (*nt.evidence, m.mixin),
                                                    possible=True, seam=seam))
                        continue
                    edges.append(self.make_edge(mod, call, target, "method", nt.evidence))
            elif m.field is not None and (indexed := self.types.decls.indexed_member(m.owner, m.field)) is not None:
                # `declare readonly register: SlotCore['register']`: calling it calls SlotCore's member
                # — only the type is declared, so the target is possible, not proven (`interface`, not `method`)
                owners, name = indexed
                for other in owners:
                    if other.ref != nt.ref:
                        via = NamedType(other.ref, (*nt.evidence, *other.evidence))
                        for e in self._method_edges(mod, call, via, name):
                            if e.kind == "method":
                                e.kind, e.possible, e.seam = "interface", True, seam
                            edges.append(e)
                continue
            elif not abstract_owner:
                continue  # a function-valued class field: its value is not tracked
            edges.extend(self._implementation_edges(mod, call, m.owner, method, nt.evidence, seam))
        return edges

    def _implementation_edges(self, mod: ModuleRef, call: Call, owner: DefRef, method: str,
                              evidence: tuple[str, ...], seam: str) -> list[Edge]:
        return [self.make_edge(mod, call, target, "interface", (*evidence, *why), possible=True, seam=seam)
                for target, why in self._implementation_targets(owner, method)]

    def _implementation_targets(self, owner: DefRef, method: str) -> list[tuple[DefRef, tuple[str, ...]]]:
        """(target, evidence after the receiver's) of every implementation of `owner.method`. Memoised: it
        depends only on the owner and the name, and an interface call site asks it once per receiver type."""
        key = (owner, method)
        found = self._impl_targets.get(key)
        if found is not None:
            return found
        out: list[tuple[DefRef, tuple[str, ...]]] = []
        for impl, why in self.types.hierarchy.implementations(owner):
            for child in self.p.children(impl):
                if child.name == method and child.kind in CALLABLE_KINDS and "abstract" not in child.modifiers:
                    out.append((DefRef(impl.repo, impl.path, child.qualname), (why,)))
        for omod, object_id, why in self.types.literals.object_implementations(owner):
            obj = self.p.object_literal(omod, object_id)
            if obj is None:
                continue
            for prop in obj.properties:
                if prop.key != method:
                    continue
                if prop.value_def:
                    out.append((DefRef(omod.repo, omod.path, prop.value_def), (why,)))
                elif prop.value_kind == "identifier":
                    local = self.p.local_function(omod, obj.scope, prop.value_text)
                    if local is not None:  # `{ onPayload }` where `const onPayload = (…) => …` is local
                        out.append((DefRef(omod.repo, omod.path, local.qualname),
                                    (why, f"{omod.path}:{local.line}: local function")))
                        continue
                    sym = self.symbols.resolve_name(omod, prop.value_text)
                    if sym is not None and sym.definition is not None:
                        out.append((sym.definition, (why, *sym.evidence)))
        self._impl_targets[key] = out
        return out

    def _name_guess(self, mod: ModuleRef, call: Call) -> list[Edge]:
        """Last resort: a method name defined exactly once across all indexed classes, in the caller's own
        repo. Never for a literal or a JavaScript global receiver (`Math.max`, `Buffer.from`, `` `…`.normalize()``):
        those are the builtins', and a same-named method elsewhere is a coincidence."""
        if self._method_names is None:
            index: dict[str, list[DefRef]] = {}
            for ref, d in self.p.defs.items():
                if d.kind in ("method", "getter") and "abstract" not in d.modifiers:
                    index.setdefault(d.name, []).append(ref)
            self._method_names = index
        if call.callee[-1] in self.no_guess or self._is_global_receiver(mod, call):
            return []
        candidates = self._method_names.get(call.callee[-1], [])
        if len(candidates) != 1 or candidates[0].repo != mod.repo or not self.p.defs[candidates[0]].has_body:
            return []
        return [self.make_edge(mod, call, candidates[0], "name",
                           ["guessed: the only indexed method with this name; receiver type unknown"])]

    def _is_global_receiver(self, mod: ModuleRef, call: Call) -> bool:
        root = call.callee[0]
        if root == "<literal>":
            return True
        if root not in self.global_receivers:
            return False
        return self.symbols.resolve_name(mod, root) is None and not _is_bound_locally(
            self.p, mod, call.scope, root, call.line)


def _is_bound_locally(p: Program, mod: ModuleRef, scope: str | None, name: str, line: int) -> bool:
    for sc in p.scope_chain(mod, scope):
        if sc is None:
            break
        if any(b.name == name for b in p.bindings(mod, sc)):
            return True
        d = p.defs.get(DefRef(mod.repo, mod.path, sc))
        if d is not None and any(prm.name == name for prm in d.params):
            return True
    return False


def _dedupe(edges: list[Edge]) -> list[Edge]:
    seen: dict[tuple[str, str, int, str], Edge] = {}
    for e in edges:
        key = (e.source, e.target, e.line, e.kind)
        seen.setdefault(key, e)
    # a `method` edge to a target beats an `interface` edge to the same target from the same call
    best: dict[tuple[str, str, int], Edge] = {}
    for e in seen.values():
        k = (e.source, e.target, e.line)
        if k not in best or e.confidence > best[k].confidence:
            best[k] = e
    return list(best.values())
