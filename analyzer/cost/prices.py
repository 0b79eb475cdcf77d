"""Provider prices as data: load `analyzer/rules/prices/*.toml` (or a user's `--prices FILE`), validate every
entry, and answer "what did this model cost per token at this moment" with the source of the answer.

Why data and not constants: prices change (DeepSeek changed its rates and its peak rule three times in 2026),
so every entry carries the dates it is in force, the URL it was read at and the date it was checked; a request
is priced by the entry in force at its own recorded start time, and by its own time-of-day period where the
provider bills one (a [[calendar]] in the file). The schema is described in docs/cost.md.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from analyzer.errors import AnalyzerError

BUCKET_KEYS = ("uncached_input", "cache_read", "output")
PERIODS = ("peak", "off_peak")


@dataclass(frozen=True)
class Rates:
    """Money per `per_tokens` tokens of each bucket. `cache_write` by TTL ("5m", "1h"); empty: no write charge
    (the provider bills written tokens as uncached input, or bills nothing extra)."""

    uncached_input: float
    cache_read: float
    output: float
    cache_write: tuple[tuple[str, float], ...] = ()

    def write_rate(self, ttl: str | None) -> tuple[float, str]:
        """(rate, why) for tokens written to the cache with `ttl` (None: the provider's default, the first listed)."""
        if not self.cache_write:
            return self.uncached_input, "no separate cache-write price: billed as uncached input"
        table = dict(self.cache_write)
        if ttl is not None and ttl in table:
            return table[ttl], f"cache write ({ttl})"
        first = self.cache_write[0]
        why = f"cache write ({first[0]})" if ttl is None else f"cache write: TTL {ttl} not priced, {first[0]} used"
        return first[1], why

    def as_json(self) -> dict[str, Any]:
        return {"uncached_input": self.uncached_input, "cache_read": self.cache_read, "output": self.output,
                "cache_write": dict(self.cache_write)}


@dataclass(frozen=True)
class Calendar:
    """One version of a provider's peak rule: windows (local minutes from midnight) on ISO weekdays in a fixed
    UTC offset, minus listed holidays (local dates)."""

    name: str
    start: _dt.datetime | None
    end: _dt.datetime | None
    offset: _dt.timedelta
    windows: tuple[tuple[int, int], ...]
    days: frozenset[int]
    holidays: frozenset[_dt.date]
    holiday_years: frozenset[int]
    source: str
    checked: str

    def in_force(self, at: _dt.datetime) -> bool:
        return (self.start is None or at >= self.start) and (self.end is None or at < self.end)

    def period(self, at: _dt.datetime) -> tuple[str, str | None]:
        """("peak" | "off_peak", a caveat or None) for a request that started at `at` (aware)."""
        local = at.astimezone(_dt.timezone(self.offset))
        minute = local.hour * 60 + local.minute
        caveat = None
        if self.holidays and local.year not in self.holiday_years:
            caveat = (f"no holiday list for {local.year} in the price file: a public holiday that year is billed "
                      "as an ordinary day here")
        if local.isoweekday() not in self.days or local.date() in self.holidays:
            return "off_peak", caveat
        if any(lo <= minute < hi for lo, hi in self.windows):
            return "peak", caveat
        return "off_peak", caveat


@dataclass(frozen=True)
class PriceEntry:
    start: _dt.datetime | None
    end: _dt.datetime | None
    flat: Rates | None
    by_period: tuple[tuple[str, Rates], ...]
    source: str
    checked: str
    via: str | None = None
    official_page_read: bool = True
    note: str | None = None
    date_source: str | None = None

    def in_force(self, at: _dt.datetime) -> bool:
        return (self.start is None or at >= self.start) and (self.end is None or at < self.end)


@dataclass(frozen=True)
class ModelPrices:
    family: str
    describe: str
    patterns: tuple[str, ...]
    entries: tuple[PriceEntry, ...]

    def matches(self, model: str) -> bool:
        return any(fnmatch.fnmatchcase(model.lower(), p.lower()) for p in self.patterns)


@dataclass(frozen=True)
class ProviderPrices:
    provider: str
    describe: str
    currency: str
    per_tokens: int
    file: str
    url_contains: tuple[str, ...] = ()
    usage_fields: tuple[str, ...] = ()
    model_prefixes: tuple[str, ...] = ()
    calendars: tuple[Calendar, ...] = ()
    models: tuple[ModelPrices, ...] = ()

    def family(self, model: str) -> ModelPrices | None:
        return next((m for m in self.models if m.matches(model)), None)


@dataclass(frozen=True)
class Quote:
    """The price of one request's tokens: which entry, which period, from where."""

    provider: str
    family: str
    rates: Rates
    per_tokens: int
    currency: str
    period: str | None            # "peak" / "off_peak" where the provider bills by time of day
    source: str
    checked: str
    via: str | None
    official_page_read: bool
    caveats: tuple[str, ...] = ()

    def cite(self) -> str:
        """'<url> (checked 2026-12-07)', with the secondary source when the official page was not read."""
        text = f"{self.source} (checked {self.checked})"
        if not self.official_page_read:
            text += f", via a secondary source: {self.via}" if self.via else ", via a secondary source"
        return text

    def as_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "family": self.family, "period": self.period, "currency": self.currency,
                "per_tokens": self.per_tokens, "rates": self.rates.as_json(), "source": self.source,
                "checked": self.checked, "via": self.via, "official_page_read": self.official_page_read,
                "caveats": list(self.caveats)}


@dataclass(frozen=True)
class PriceBook:
    providers: tuple[ProviderPrices, ...]
    files: tuple[str, ...] = field(default=())

    def provider(self, name: str) -> ProviderPrices | None:
        return next((p for p in self.providers if p.provider == name), None)

    def names(self) -> list[str]:
        return sorted({p.provider for p in self.providers})

    def quote(self, provider: str, model: str, at: _dt.datetime) -> Quote:
        """The price of `model` at `provider` for a request that started at `at` (timezone-aware)."""
        prov = self.provider(provider)
        if prov is None:
            raise AnalyzerError(f"no prices for provider {provider!r}; known: {', '.join(self.names())} "
                                "(pass your own with --prices FILE)")
        fam = prov.family(model)
        if fam is None:
            known = ", ".join(m.family for m in prov.models)
            raise AnalyzerError(f"no {provider} price matches model {model!r} (families: {known}); pass --model "
                                "with a priced model or your own prices with --prices FILE")
        entry = next((e for e in fam.entries if e.in_force(at)), None)
        if entry is None:
            raise AnalyzerError(f"no {provider} {fam.family} price is in force at {at.isoformat()} (the price "
                                f"file {prov.file} has none for that date); pass --prices FILE with one")
        caveats: list[str] = []
        period = None
        if entry.flat is not None:
            rates = entry.flat
        else:
            cal = next((c for c in prov.calendars if c.in_force(at)), None)
            if cal is None:
                raise AnalyzerError(f"{prov.file}: {fam.family} is priced by period at {at.isoformat()} but no "
                                    "[[calendar]] is in force then; add one")
            period, caveat = cal.period(at)
            if caveat:
                caveats.append(caveat)
            rates = dict(entry.by_period)[period]
        if entry.date_source:
            caveats.append(f"when this price took effect: {entry.date_source}")
        return Quote(prov.provider, fam.family, rates, prov.per_tokens, prov.currency, period, entry.source,
                     entry.checked, entry.via, entry.official_page_read, tuple(caveats))


# ---- loading and validation ----

def _when(value: Any, where: str) -> _dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise AnalyzerError(f"{where}: {value} has no UTC offset; write it as 2026-08-16T16:00:00Z")
        return value
    if isinstance(value, _dt.date):
        return _dt.datetime(value.year, value.month, value.day, tzinfo=_dt.UTC)
    raise AnalyzerError(f"{where}: expected a TOML date-time such as 2026-08-16T16:00:00Z, got {value!r}")


def _number(table: dict[str, Any], key: str, where: str) -> float:
    value = table.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise AnalyzerError(f"{where}: '{key}' must be a number ≥ 0 (money per per_tokens tokens), got {value!r}")
    return float(value)


def _rates(table: Any, where: str) -> Rates:
    if not isinstance(table, dict):
        raise AnalyzerError(f"{where}: expected a table of rates ({', '.join(BUCKET_KEYS)}, cache_write)")
    unknown = set(table) - set(BUCKET_KEYS) - {"cache_write"}
    if unknown:
        raise AnalyzerError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; a rate table has "
                            f"{', '.join(BUCKET_KEYS)} and optionally cache_write")
    writes = table.get("cache_write", {})
    if not isinstance(writes, dict):
        raise AnalyzerError(f"{where}: 'cache_write' must be a table by TTL, e.g. {{ \"5m\" = 3.75, \"1h\" = 6.0 }}")
    return Rates(_number(table, "uncached_input", where), _number(table, "cache_read", where),
                 _number(table, "output", where),
                 cache_write=tuple((str(k), _number(writes, k, f"{where}.cache_write")) for k in writes))


def _text(table: dict[str, Any], key: str, where: str, default: Any = None) -> str:
    value = table.get(key, default)
    if value is None:
        raise AnalyzerError(f"{where}: '{key}' is missing (every price needs its source URL and the date checked)")
    return str(value)


def _entry(raw: Any, defaults: dict[str, Any], where: str) -> PriceEntry:
    if not isinstance(raw, dict):
        raise AnalyzerError(f"{where}: expected a [[model.price]] table")
    merged = {**defaults, **raw}
    start, end = _when(merged.get("from"), f"{where}.from"), _when(merged.get("until"), f"{where}.until")
    if start and end and end <= start:
        raise AnalyzerError(f"{where}: 'until' ({end.isoformat()}) is not after 'from' ({start.isoformat()})")
    has_flat = any(k in raw for k in BUCKET_KEYS)
    has_period = any(p in raw for p in PERIODS)
    if has_flat == has_period:
        raise AnalyzerError(f"{where}: give either the rates ({', '.join(BUCKET_KEYS)}) or [peak] and [off_peak] "
                            "tables, not both and not neither")
    flat = _rates({k: raw[k] for k in (*BUCKET_KEYS, "cache_write") if k in raw}, where) if has_flat else None
    by_period = tuple((p, _rates(raw.get(p), f"{where}.{p}")) for p in PERIODS) if has_period else ()
    return PriceEntry(start, end, flat, by_period, _text(merged, "source", where),
                      _text(merged, "checked", where), merged.get("via"),
                      bool(merged.get("official_page_read", True)), merged.get("note"), merged.get("date_source"))


def _minutes(text: str, where: str) -> int:
    try:
        h, m = text.split(":")
        value = int(h) * 60 + int(m)
    except ValueError:
        raise AnalyzerError(f"{where}: {text!r} is not a time of day HH:MM") from None
    if not 0 <= value <= 24 * 60:
        raise AnalyzerError(f"{where}: {text!r} is not a time of day HH:MM")
    return value


def _dates(items: list[Any], where: str) -> frozenset[_dt.date]:
    out: set[_dt.date] = set()
    for item in items:
        try:
            first, _, last = str(item).partition("..")
            lo = _dt.date.fromisoformat(first)
            hi = _dt.date.fromisoformat(last) if last else lo
        except ValueError:
            raise AnalyzerError(f"{where}: {item!r} is not a date or a range YYYY-MM-DD..YYYY-MM-DD") from None
        while lo <= hi:
            out.add(lo)
            lo += _dt.timedelta(days=1)
    return frozenset(out)


def _calendar(raw: Any, where: str) -> Calendar:
    if not isinstance(raw, dict):
        raise AnalyzerError(f"{where}: expected a [[calendar]] table")
    tz = str(raw.get("timezone", "+00:00"))
    try:
        offset = _dt.datetime.strptime(tz.replace("Z", "+00:00"), "%z").utcoffset() or _dt.timedelta()
    except ValueError:
        raise AnalyzerError(f"{where}: timezone {tz!r} must be a UTC offset such as +08:00") from None
    windows = []
    for w in raw.get("windows", []):
        lo, _, hi = str(w).partition("-")
        a, b = _minutes(lo, f"{where}.windows"), _minutes(hi, f"{where}.windows")
        if b <= a:
            raise AnalyzerError(f"{where}: window {w!r} must end after it starts (split one that spans midnight)")
        windows.append((a, b))
    days = raw.get("days", [1, 2, 3, 4, 5, 6, 7])
    if not isinstance(days, list) or not all(isinstance(d, int) and 1 <= d <= 7 for d in days):
        raise AnalyzerError(f"{where}: 'days' must list ISO weekdays 1 (Monday) … 7 (Sunday)")
    holidays = _dates(list(raw.get("holidays", [])), f"{where}.holidays")
    years = frozenset(int(y) for y in raw.get("holiday_years", sorted({d.year for d in holidays})))
    return Calendar(str(raw.get("name", "peak")), _when(raw.get("from"), f"{where}.from"),
                    _when(raw.get("until"), f"{where}.until"), offset, tuple(windows), frozenset(days), holidays,
                    years, _text(raw, "source", where), _text(raw, "checked", where))


def parse_prices(data: dict[str, Any], file: str) -> ProviderPrices:
    """One provider's prices from a parsed TOML document; every problem is one `error:` line naming the place."""
    for key in ("provider", "currency", "per_tokens"):
        if key not in data:
            raise AnalyzerError(f"{file}: '{key}' is missing (see docs/cost.md for the price file format)")
    per = data["per_tokens"]
    if isinstance(per, bool) or not isinstance(per, int) or per <= 0:
        raise AnalyzerError(f"{file}: 'per_tokens' must be a positive whole number (1000000 for per-million prices)")
    defaults = data.get("defaults", {})
    models = []
    raw_models = data.get("model", [])
    if not isinstance(raw_models, list) or not raw_models:
        raise AnalyzerError(f"{file}: no [[model]] entries; add at least one with 'family', 'match' and prices")
    for i, m in enumerate(raw_models):
        where = f"{file}: model[{i}]"
        if not isinstance(m, dict) or "family" not in m or not m.get("match"):
            raise AnalyzerError(f"{where}: needs 'family' and a 'match' list of model-name globs")
        entries = tuple(_entry(e, defaults, f"{where} ({m['family']}).price[{j}]")
                        for j, e in enumerate(m.get("price", [])))
        if not entries:
            raise AnalyzerError(f"{where} ({m['family']}): no [[model.price]] entries")
        models.append(ModelPrices(str(m["family"]), str(m.get("describe", m["family"])),
                                  tuple(str(p) for p in m["match"]), entries))
    calendars = tuple(_calendar(c, f"{file}: calendar[{i}]") for i, c in enumerate(data.get("calendar", [])))
    needs_calendar = any(e.flat is None for m in models for e in m.entries)
    if needs_calendar and not calendars:
        raise AnalyzerError(f"{file}: prices given by [peak]/[off_peak] need a [[calendar]] saying when peak is")
    detect = data.get("detect", {})
    return ProviderPrices(str(data["provider"]), str(data.get("describe", data["provider"])), str(data["currency"]),
                          per, file, tuple(detect.get("url_contains", ())), tuple(detect.get("usage_fields", ())),
                          tuple(detect.get("model_prefixes", ())), calendars, tuple(models))


def load_file(path: Path) -> ProviderPrices:
    """A user's price file (`--prices FILE`), validated."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AnalyzerError(f"--prices {path}: cannot read it ({exc.strerror}); pass a TOML price file "
                            "(format: docs/cost.md)") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AnalyzerError(f"--prices {path}: not valid TOML ({exc})") from None
    return parse_prices(data, str(path))


@cache
def shipped() -> tuple[ProviderPrices, ...]:
    """The price files shipped in analyzer/rules/prices/, one per provider."""
    out = []
    folder = resources.files("analyzer.rules.prices")
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".toml"):
            name = f"analyzer/rules/prices/{item.name}"
            try:
                data = tomllib.loads(item.read_text(encoding="utf-8"))
            except tomllib.TOMLDecodeError as exc:
                raise AnalyzerError(f"{name}: {exc}") from None
            out.append(parse_prices(data, name))
    return tuple(out)


def load_book(extra: Path | None = None) -> PriceBook:
    """The shipped prices, with a user's file first (its provider's entries replace the shipped ones)."""
    providers = list(shipped())
    files = [p.file for p in providers]
    if extra is not None:
        mine = load_file(extra)
        providers = [mine] + [p for p in providers if p.provider != mine.provider]
        files.insert(0, mine.file)
    return PriceBook(tuple(providers), tuple(files))
