"""The tool's own sentences, one data file per feature per language, so translations live in one place.

Why data files: a record's wording is reviewed by people who read Chinese, not Python; keeping every sentence
in `sentences/<feature>.<lang>.toml` lets them check a language side by side with the other, and lets a test
prove both languages have the same keys and the same placeholders.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from analyzer.errors import AnalyzerError

LANGS = ("en", "zh")
DEFAULT_LANG = "en"
DATA_DIR = Path(__file__).resolve().parent / "sentences"


class MissingSentence(AnalyzerError):
    """A sentence key (or one of its placeholders) is not in the data file: a bug in analyzer, named exactly."""

    exit_code = 70


def check_lang(lang: str) -> str:
    """`lang` if it is one of `LANGS`, else a one-line error that lists them."""
    if lang not in LANGS:
        raise AnalyzerError(f"unknown record language {lang!r}; use one of: {', '.join(LANGS)}")
    return lang


def features() -> list[str]:
    """Features that ship sentences (any language)."""
    return sorted({p.name.split(".")[0] for p in DATA_DIR.glob("*.toml")})


class Sentences(Mapping[str, str]):
    """One feature's sentences in one language; unknown keys fail loudly instead of printing nothing."""

    def __init__(self, feature: str, lang: str, table: dict[str, str], path: Path) -> None:
        self.feature = feature
        self.lang = lang
        self.path = path
        self._table = table

    def __getitem__(self, key: str) -> str:
        try:
            return self._table[key]
        except KeyError:
            raise MissingSentence(f"no sentence {key!r} in {self.path.name}; add it to every "
                                  f"{self.feature}.<lang>.toml under {DATA_DIR}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def format(self, key: str, /, **values: Any) -> str:
        """The sentence `key` with `values` filled in (str.format); a placeholder without a value is an error."""
        try:
            return self[key].format(**values)
        except KeyError as exc:
            raise MissingSentence(f"sentence {key!r} in {self.path.name} needs a value for {exc.args[0]!r}") from None

    def placeholders(self, key: str) -> set[str]:
        """The field names a sentence uses (for the cross-language test)."""
        return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(self[key]) if name}


@cache
def _load(feature: str, lang: str) -> Sentences:
    path = DATA_DIR / f"{feature}.{lang}.toml"
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MissingSentence(f"no sentences for {feature!r} in {lang!r}: {path} is missing") from None
    bad = [k for k, v in table.items() if not isinstance(v, str)]
    if bad:
        raise MissingSentence(f"{path.name}: every entry must be a string (not: {', '.join(bad)})")
    return Sentences(feature, lang, table, path)


def sentences(feature: str, lang: str) -> Sentences:
    """The sentences of `feature` in `lang` (cached; files ship with the package)."""
    return _load(feature, check_lang(lang))
