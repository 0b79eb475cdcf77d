"""Research records in the route's 8-field template, shared by every round (attention, reconcile, observe).

Public API (kept stable; other features build on it):
- `LANGS` (``("en", "zh")``), `DEFAULT_LANG`, `check_lang(lang)`.
- `sentences(feature, lang) -> Sentences`: the tool's own sentences for one feature in one language, read from
  `analyzer/records/sentences/<feature>.<lang>.toml`. ``s["key"]`` is the template text,
  ``s.format("key", **values)`` fills it (str.format syntax, e.g. ``{hits:,}``); a missing key or placeholder
  raises `MissingSentence` naming the file. `features()` lists the features that ship sentences.
- `Record` (title + the 8 fields; each a string or a list of strings) and
  `render_markdown(records, lang, title)` → Markdown with the headings of that language.
- `FIELD_KEYS`: the 8 fields in template order (问题 / 来源与版本 / 输入与配置 / 本次只改变 / 直接观察 /
  我的解释 / 尚未排除 / 下一次只验证).

Numbers, identifiers and upstream names are inserted as values, so they are the same in every language.
"""

from analyzer.records.i18n import (
    DEFAULT_LANG,
    LANGS,
    MissingSentence,
    Sentences,
    check_lang,
    features,
    sentences,
)
from analyzer.records.template import FIELD_KEYS, Record, render_markdown

__all__ = ["DEFAULT_LANG", "FIELD_KEYS", "LANGS", "MissingSentence", "Record", "Sentences", "check_lang",
           "features", "render_markdown", "sentences"]
