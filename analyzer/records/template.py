"""The route's research-record template (8 fields) and its Markdown form in either language.

Every value in a record is built by the feature from its results, so a record cannot claim more than the run
showed; this module only decides layout and headings.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.records.i18n import sentences

FIELD_KEYS = ("question", "sources", "inputs", "changed", "observations", "interpretation", "not_ruled_out",
              "next_check")


@dataclass
class Record:
    """One research record: a title and the 8 fields (a string, or a list of strings shown as bullets)."""

    title: str
    question: str | list[str]
    sources: str | list[str]
    inputs: str | list[str]
    changed: str | list[str]
    observations: str | list[str]
    interpretation: str | list[str]
    not_ruled_out: str | list[str]
    next_check: str | list[str]

    def to_markdown(self, lang: str = "en") -> str:
        heads = sentences("record", lang)
        lines = [f"## {self.title}", ""]
        for key in FIELD_KEYS:
            value = getattr(self, key)
            label = heads[f"field.{key}"]
            if isinstance(value, list):
                lines += [f"**{label}:**", ""]
                lines += [f"- {item}" for item in value]
            else:
                lines.append(f"**{label}:** {value}")
            lines.append("")
        return "\n".join(lines)


def render_markdown(records: list[Record], lang: str, title: str) -> str:
    """A document: `# title`, then each record."""
    head = [f"# {title}", ""]
    return "\n".join(head + [r.to_markdown(lang) for r in records]).rstrip() + "\n"
