"""Options several commands share, declared once so they read and behave the same everywhere."""

from __future__ import annotations

from typing import Any

RECORD_STDOUT = "-"


def add_record_option(parser: Any, what: str) -> None:
    """`--record [FILE]`: the Markdown record to FILE, or to stdout with `-` or no FILE. In JSON the
    document carries `record_file` (the path written) or `record` (the Markdown itself)."""
    parser.add_argument("--record", nargs="?", const=RECORD_STDOUT, default=None, metavar="FILE",
                        help=f"write {what} as Markdown to FILE ('-' or no FILE: stdout)")


def record_file(value: str | None) -> str | None:
    """The path `--record` names, or None (not asked, or stdout)."""
    return value if value not in (None, RECORD_STDOUT) else None
