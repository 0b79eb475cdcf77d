"""Component registries: `ctx.slots.register(spec, Component)` mounts Component with props nobody writes.

A slot registry assembles a registered component's props itself, so no JSX element or call passes them:
- the spec's `inject` function returns the registrant's face; its members are props as they are, and each
  member `x` of its `hooks` compartment becomes the hook prop `useX`, bound by the renderer;
- the renderer hands every entry standard seats (`useSession`, `renderSlot`, …) made by its own functions;
- `renderSlot(name, owner)` gives the owner object's members to the entries registered under `name`.
Which call registers, which argument is the spec and which the component, which spec keys matter and which
renderer functions make the seats are framework conventions: they live in the `registry` tables of the
`function_value` rule (`analyzer/rules/structural.toml`); this module only indexes the calls they describe.
The values pass (`analyzer.resolve.functionvalues`) follows what each prop holds from here.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from analyzer.index.model import Arg, Call, ObjectLiteral
from analyzer.resolve.modules import ModuleRef
from analyzer.resolve.program import CALLABLE_KINDS, DefRef, Program


@dataclass(frozen=True)
class RegistryRule:
    """One registry convention, read from a `[[function_value.registry]]` table."""

    name: str
    register_calls: tuple[str, ...]  # dotted callee suffixes: "slots.register" matches `ctx.slots.register(…)`
    spec_arg: int = 0
    component_arg: int = 1
    inject_key: str = "inject"
    hooks_key: str | None = "hooks"
    hook_prefix: str = "use"
    hook_binders: tuple[str, ...] = ()
    slot_name_key: str | None = "name"
    render_calls: tuple[str, ...] = ()
    standard: dict[str, tuple[str, ...]] = field(default_factory=dict)
    store_key: str | None = None  # spec key: the call making the entry's store
    store_actions_prop: str | None = None  # the prop holding the store's bound actions
    store_factories: tuple[str, ...] = ()  # `defineStore({ actions: {…} })` inside the store's factory
    store_actions_key: str = "actions"
    store_actions_types: tuple[str, ...] = ()  # an inject parameter typed so holds the bound actions

    @staticmethod
    def from_table(table: dict) -> RegistryRule:
        return RegistryRule(
            name=str(table.get("name", "registry")),
            register_calls=tuple(table.get("register_calls", [])),
            spec_arg=int(table.get("spec_arg", 0)), component_arg=int(table.get("component_arg", 1)),
            inject_key=str(table.get("inject_key", "inject")), hooks_key=table.get("hooks_key"),
            hook_prefix=str(table.get("hook_prefix", "use")), hook_binders=tuple(table.get("hook_binders", [])),
            slot_name_key=table.get("slot_name_key"), render_calls=tuple(table.get("render_calls", [])),
            standard={k: tuple(v) for k, v in (table.get("standard") or {}).items()},
            store_key=table.get("store_key"), store_actions_prop=table.get("store_actions_prop"),
            store_factories=tuple(table.get("store_factories", [])),
            store_actions_key=str(table.get("store_actions_key", "actions")),
            store_actions_types=tuple(table.get("store_actions_types", [])))

    def hook_source(self, prop: str) -> str | None:
        """`useDuration` → `duration`: the hooks-compartment member a hook prop is bound from."""
        p = self.hook_prefix
        if not self.hooks_key or not prop.startswith(p) or len(prop) <= len(p) or not prop[len(p)].isupper():
            return None
        rest = prop[len(p):]
        return rest[0].lower() + rest[1:]


@dataclass(frozen=True)
class Registration:
    """One registering call: the component it mounts and the spec literal it gives."""

    rule: RegistryRule
    mod: ModuleRef
    call: Call
    spec: ObjectLiteral


def _matches(call: Call, suffixes: tuple[str, ...]) -> bool:
    dotted = ".".join(call.callee)
    return any(dotted == s or dotted.endswith("." + s) for s in suffixes)


class Registries:
    """Registering and rendering calls of every registry rule, indexed once per program."""

    def __init__(self, program: Program, tables: list[dict]) -> None:
        self.p = program
        self.rules = [RegistryRule.from_table(t) for t in tables]
        self._by_component: dict[str, list[Registration]] = defaultdict(list)
        self._renders: dict[str, list[tuple[ModuleRef, Call, Arg]]] = defaultdict(list)  # slot name → owners
        self._returns: dict[ModuleRef, dict[str, list[ObjectLiteral]]] = {}
        self._by_inject: dict[str, list[Registration]] | None = None
        self._suffixes = {s.rsplit(".", 1)[-1] for r in self.rules for s in (*r.register_calls, *r.render_calls)}

    def wants(self, call: Call) -> bool:
        """Cheap pre-check for the indexing loop: could this call register or render?"""
        return bool(self.rules) and call.callee[-1] in self._suffixes

    def index_call(self, mod: ModuleRef, call: Call, component: DefRef | None) -> None:
        """Record a registering call (its component already resolved by the caller) or a render call."""
        for rule in self.rules:
            if _matches(call, rule.register_calls) and component is not None:
                spec = self._spec(mod, call, rule)
                if spec is not None:
                    self._by_component[component.node_id].append(Registration(rule, mod, call, spec))
            elif _matches(call, rule.render_calls) and len(call.args) >= 2 and call.args[0].kind == "string":
                self._renders[f"{rule.name}:{call.args[0].text}"].append((mod, call, call.args[1]))

    def component_arg(self, call: Call) -> Arg | None:
        """The argument naming the component, when `call` is a registering call."""
        for rule in self.rules:
            if _matches(call, rule.register_calls) and rule.component_arg < len(call.args):
                arg = call.args[rule.component_arg]
                return arg if arg.kind == "identifier" else None
        return None

    def _spec(self, mod: ModuleRef, call: Call, rule: RegistryRule) -> ObjectLiteral | None:
        if rule.spec_arg >= len(call.args):
            return None
        arg = call.args[rule.spec_arg]
        if arg.kind != "object" or not arg.object_id:
            return None
        return self.p.object_literal(mod, arg.object_id)

    def registrations(self, component: DefRef) -> list[Registration]:
        return self._by_component.get(component.node_id, [])

    def injecting(self, fn: DefRef) -> list[Registration]:
        """The registrations whose spec's inject is the closure `fn` (`inject: (id, actions) => …`)."""
        if self._by_inject is None:
            self._by_inject = defaultdict(list)
            for regs in self._by_component.values():
                for reg in regs:
                    prop = next((p for p in reg.spec.properties if p.key == reg.rule.inject_key and p.value_def), None)
                    if prop is not None and prop.value_def:
                        self._by_inject[DefRef(reg.mod.repo, reg.mod.path, prop.value_def).node_id].append(reg)
        return self._by_inject.get(fn.node_id, [])

    def owners(self, reg: Registration) -> list[tuple[ModuleRef, Call, Arg]]:
        """`renderSlot(name, owner)` calls for the slot name the registration's spec declares."""
        key = reg.rule.slot_name_key
        name = next((p.value_text for p in reg.spec.properties if key and p.key == key and p.value_kind == "string"),
                    None)
        return self._renders.get(f"{reg.rule.name}:{name}", []) if name is not None else []

    def binders(self, names: tuple[str, ...], near: ModuleRef) -> list[DefRef]:
        """The renderer functions a rule names, in the component's repo (a seat is made where it is mounted)."""
        return [ref for n in names for ref in self.p.by_name.get(n, []) if ref.repo == near.repo
                and (d := self.p.defs.get(ref)) is not None and d.kind in CALLABLE_KINDS and d.parent is None]

    def returned_literals(self, mod: ModuleRef, qual: str) -> list[ObjectLiteral]:
        """Object literals a function returns from its own body (`return {…}`, `() => ({…})`)."""
        index = self._returns.get(mod)
        if index is None:
            index = self._returns[mod] = defaultdict(list)
            for obj in self.p.objects(mod):
                if obj.holder == "return" and obj.nested == 0 and obj.scope is not None:
                    index[obj.scope].append(obj)
        return index.get(qual, [])
