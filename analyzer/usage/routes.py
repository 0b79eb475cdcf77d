"""The usage routes as data: hops, routes, the meter, the registry, read from `analyzer/rules/usage/*.toml`.

Which upstream function a replay runs, in which repo and folder, and what it reads and writes are facts
about the upstreams, so they live in the rule file; the ledger (`analyzer.usage.ledger`) only executes a
route's hops in order. A malformed file is one `error:` line naming it and the entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.rules.files import RuleFile, read_rule_files

PACKAGE = "analyzer.rules.usage"
START_VALUES = ("provider-usage", "model")  # what a request's hops start from
ROUTE_OUTPUT = "token-usage"  # what every route's request hops must produce: the value the meter folds
ROUTE_OUTPUT_RECORD = "dsh_usage"  # the ledger field listing it
ALL_ROUTES = "both"  # the choice that replays every route and compares them


@dataclass(frozen=True)
class HopSpec:
    """One upstream function the replay runs, where in its repo to look for it, and its data flow."""

    key: str
    repo: str
    qualname: str
    search_under: tuple[str, ...]
    role: str
    reads: tuple[str, ...] = ()
    writes: str = ""
    record: str | None = None  # ledger field listing the written value's fields
    dropped_value: str | None = None  # whose unread fields are listed …
    dropped_label: str | None = None  # … under this label
    layer: str | None = None  # heading of the written value in the text ledger


@dataclass(frozen=True)
class MeterSpec:
    """The hops of the shared token meter and stats line, by key."""

    init: str
    apply: str
    view: str
    hit: str
    event: str
    dropped: str

    @property
    def hops(self) -> tuple[str, ...]:
        return (self.init, self.apply, self.view)


@dataclass(frozen=True)
class RegistrySpec:
    repo: str
    path: str
    table: str


@dataclass(frozen=True)
class Route:
    """One way dsh reaches the provider: that adapter's request hops, then the shared meter and stats line."""

    name: str
    title: str
    usage_hops: tuple[str, ...]
    reader: str
    read_flag: str | None
    book: RouteBook = field(compare=False, repr=False)

    @property
    def hops(self) -> tuple[HopSpec, ...]:
        m = self.book.meter
        return tuple(self.book.hop(k) for k in (*self.usage_hops, *m.hops, m.hit))

    @property
    def repos(self) -> list[str]:
        return sorted({h.repo for h in self.hops})

    def layers(self) -> list[tuple[str, str]]:
        """(heading, ledger field) of each value the route's usage hops write, in order, for the text ledger."""
        out = []
        for key in self.usage_hops:
            hop = self.book.hop(key)
            record = hop.record or (ROUTE_OUTPUT_RECORD if hop.writes == ROUTE_OUTPUT else None)
            if record is not None:
                out.append((hop.layer or hop.role, record))
        return out

    @property
    def takes_model(self) -> bool:
        return any("model" in self.book.hop(k).reads for k in self.usage_hops)


@dataclass(frozen=True)
class CompareSpec:
    cache_numbers: tuple[str, ...]
    reasoning: str


@dataclass
class RouteBook:
    """Everything the rule files say about usage routes; `source` names the files for provenance."""

    hops: dict[str, HopSpec]
    routes: dict[str, Route]
    meter: MeterSpec
    registry: RegistrySpec
    recheck_route: str
    compare: CompareSpec
    source: str
    text_hash: str

    def hop(self, key: str) -> HopSpec:
        return self.hops[key]


def route_choices(book: RouteBook | None = None) -> tuple[str, ...]:
    """What `--route` accepts: every route of the rule file(s), in order, then ALL_ROUTES."""
    return (*(book or load_routes()).routes, ALL_ROUTES)


@lru_cache(maxsize=8)
def load_routes(extra: tuple[Path, ...] = ()) -> RouteBook:
    """The shipped route file(s), then `extra` (a later file's entry of the same key replaces the earlier)."""
    files, digest = read_rule_files(PACKAGE, extra, what="usage route file")
    return _book(files, digest)


def _book(files: Iterable[RuleFile], digest: str) -> RouteBook:
    hops: dict[str, HopSpec] = {}
    route_rows: dict[str, tuple[str, dict[str, Any]]] = {}
    tables: dict[str, tuple[str, dict[str, Any]]] = {}
    names = []
    for f in files:
        names.append(f.name)
        for row in _rows(f, "hop"):
            hop = _hop(f.name, row)
            hops[hop.key] = hop
        for row in _rows(f, "route"):
            route_rows[_text(f.name, "route", row, "name")] = (f.name, row)
        for table in ("meter", "registry", "recheck", "compare"):
            if table in f.data:
                if not isinstance(f.data[table], dict):
                    raise AnalyzerError(f"{f.name}: [{table}] must be a table")
                tables[table] = (f.name, f.data[table])
    for table in ("meter", "registry", "recheck", "compare"):
        if table not in tables:
            raise AnalyzerError(f"usage route files ({', '.join(names)}) have no [{table}] table; restore it")
    meter_file, meter = tables["meter"]
    reg_file, reg = tables["registry"]
    cmp_file, cmp = tables["compare"]
    book = RouteBook(
        hops=hops, routes={},
        meter=MeterSpec(*(_text(meter_file, "meter", meter, k) for k in ("init", "apply", "view", "hit", "event",
                                                                          "dropped"))),
        registry=RegistrySpec(*(_text(reg_file, "registry", reg, k) for k in ("repo", "path", "table"))),
        recheck_route=_text(tables["recheck"][0], "recheck", tables["recheck"][1], "route"),
        compare=CompareSpec(tuple(_texts(cmp_file, "compare", cmp, "cache_numbers")),
                            _text(cmp_file, "compare", cmp, "reasoning")),
        source=", ".join(names), text_hash=digest)
    for key in book.meter.hops + (book.meter.hit,):
        if key not in hops:
            raise AnalyzerError(f"{meter_file}: [meter] names hop {key!r}, which no [[hop]] defines")
    for name, (fname, row) in route_rows.items():
        book.routes[name] = _route(fname, row, book)
    if book.recheck_route not in book.routes:
        raise AnalyzerError(f"{tables['recheck'][0]}: [recheck] route {book.recheck_route!r} is not a [[route]]")
    return book


def _rows(f: RuleFile, table: str) -> list[dict[str, Any]]:
    rows = f.data.get(table, [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise AnalyzerError(f"{f.name}: [[{table}]] entries must be tables")
    return rows


def _text(fname: str, where: str, row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value:
        label = f"{where} {row['key']!r}" if isinstance(row.get("key"), str) else where
        raise AnalyzerError(f"{fname}: {label} needs `{key}` (a non-empty string)")
    return value


def _texts(fname: str, where: str, row: dict[str, Any], key: str) -> list[str]:
    value = row.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AnalyzerError(f"{fname}: {where} `{key}` must be a list of strings")
    return value


def _hop(fname: str, row: dict[str, Any]) -> HopSpec:
    key = _text(fname, "hop", row, "key")
    where = f"hop {key!r}"
    dropped = row.get("dropped")
    if dropped is not None and not isinstance(dropped, dict):
        raise AnalyzerError(f"{fname}: {where} `dropped` must be {{ value = …, label = … }}")
    record, layer = row.get("record"), row.get("layer")
    if record is not None and not isinstance(record, str):
        raise AnalyzerError(f"{fname}: {where} `record` must be a string")
    if layer is not None and not isinstance(layer, str):
        raise AnalyzerError(f"{fname}: {where} `layer` must be a string")
    return HopSpec(
        key=key, repo=_text(fname, "hop", row, "repo"), qualname=_text(fname, "hop", row, "function"),
        search_under=tuple(_texts(fname, where, row, "under")), role=_text(fname, "hop", row, "role"),
        reads=tuple(_texts(fname, where, row, "reads")), writes=_text(fname, "hop", row, "writes"), record=record,
        dropped_value=_text(fname, where, dropped, "value") if dropped else None,
        dropped_label=_text(fname, where, dropped, "label") if dropped else None, layer=layer)


def _route(fname: str, row: dict[str, Any], book: RouteBook) -> Route:
    name = row["name"]
    where = f"route {name!r}"
    usage = tuple(_texts(fname, where, row, "usage"))
    available = set(START_VALUES)
    for key in usage:
        hop = book.hops.get(key)
        if hop is None:
            raise AnalyzerError(f"{fname}: {where} names hop {key!r}, which no [[hop]] defines")
        missing = [v for v in hop.reads if v not in available]
        if missing:
            raise AnalyzerError(f"{fname}: {where}: hop {key!r} reads {', '.join(missing)}, which no earlier hop "
                                f"of the route writes (a request starts with {', '.join(START_VALUES)})")
        available.add(hop.writes)
    if not usage or book.hops[usage[-1]].writes != ROUTE_OUTPUT:
        raise AnalyzerError(f"{fname}: {where}: its last usage hop must write {ROUTE_OUTPUT} (what the meter folds)")
    read_flag = row.get("read_flag")
    return Route(name, _text(fname, where, row, "title"), usage, _text(fname, where, row, "reader"),
                 read_flag if isinstance(read_flag, str) else None, book)
