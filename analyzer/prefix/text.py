"""The prefix report as plain text lines: one table row per request, then a block per divergence."""

from __future__ import annotations

from typing import Any

from analyzer.prefix.run import PrefixReport, RequestReport
from analyzer.prefix.structure import visible


def _n(v: Any) -> str:
    return "–" if v is None else f"{v:,}" if isinstance(v, int) else str(v)


def _where(r: RequestReport) -> str:
    s = r.structure
    if s is None:
        return "–"
    if s.kind == "identical":
        return "identical request"
    if s.kind == "appended":
        return f"appended from {s.path}"
    role = f" ({s.role})" if s.role and s.part == "messages" else ""
    at = f"{s.path}{role} char {s.offset:,}" if s.kind == "changed" and s.old_path is None else f"{s.path}{role}"
    return at if s.kind == "changed" else f"{at} {s.kind}"


def summary_line(r: RequestReport) -> str | None:
    """'request 5 lost 1,922 of 1,935 tokens at system char 15 (…)': the sentence the issue asks for."""
    s = r.structure
    if s is None or s.kind in ("identical",) or r.lost is None:
        return None
    if s.kind == "appended":
        shared = r.prompt_tokens - r.lost
        return (f"request {r.row} extends row {r.baseline_row}: {shared:,} of {r.prompt_tokens:,} tokens shared, "
                f"{r.lost:,} appended from {s.path}")
    where = _where(r)
    a = r.attribution
    written = []
    if a is not None and a.literal is not None:
        lit = a.literal
        what = {"before": "the text before it", "new": "the new text"}.get(lit.side, "the baseline's text")
        written.append(f"{what} written by {lit.repo} {lit.place()} @ {lit.commit[:12]}")
    if a is not None and a.hazard is not None:
        written.append(f"hazard {a.hazard['id']}")
    tail = f" ({'; '.join(written)})" if written else ""
    return f"request {r.row} lost {r.lost:,} of {r.prompt_tokens:,} tokens at {where}{tail}"


def report_lines(rep: PrefixReport) -> list[str]:
    lines = []
    if rep.log:
        lines.append(f"log: {rep.log}")
    lines.append(f"rule: {rep.rule} ({rep.rule_why})")
    lines.append(f"prompts and tokens: {rep.renderer}")
    lines.append("")
    lines.append(f"{'row':>4} {'series':<10} {'#':>2} {'vs':>4}  {'first difference':<44} {'tokens':>7} "
                 f"{'at tok':>6} {'pred':>6} {'rep':>6} {'diff':>5}")
    for r in rep.requests:
        pred = r.prediction.cached if r.prediction else None
        lines.append(f"{r.row:>4} {r.series:<10.10} {r.index:>2} {_n(r.baseline_row):>4}  {_where(r)[:44]:<44} "
                     f"{r.prompt_tokens:>7,} {_n(r.token_index):>6} {_n(pred):>6} {_n(r.reported):>6} "
                     f"{_n(r.difference):>5}")
    for r in rep.requests:
        block = _detail(r)
        if block:
            lines.append("")
            lines.extend(block)
    if rep.caveats:
        lines.append("")
        lines.append(f"the {rep.rule} rule does not model:")
        lines.extend(f"  - {c}" for c in rep.caveats)
    if rep.attribution_note:
        lines.append(f"attribution: {rep.attribution_note}")
    if rep.skipped:
        lines.append(f"skipped {len(rep.skipped)} row(s) without a chat request body")
    return lines


def _detail(r: RequestReport) -> list[str]:
    s = r.structure
    out: list[str] = []
    if s is not None and s.kind not in ("identical", "appended"):
        out.append(f"row {r.row} ({r.series} {r.index}) vs row {r.baseline_row} ({r.baseline}):")
        if s.old_path:
            out.append(f"  request: {s.path} where the baseline has {s.old_path}: "
                       f"old «{_v(s.old)}» new «{_v(s.new)}»")
        else:
            out.append(f"  request: {_where(r)}: …«{_v(s.before)}» then old «{_v(s.old)}» / new «{_v(s.new)}»")
        if r.prompt_offset is not None:
            c = r.prompt_context
            out.append(f"  prompt:  char {r.prompt_offset:,}: …«{c['before']}» then old «{c['old']}» / "
                       f"new «{c['new']}»")
        if r.token_index is not None:
            t = r.token_context
            out.append(f"  tokens:  token {r.token_index:,} of {r.prompt_tokens:,}: …{_pieces(t['before'])} then "
                       f"old {_pieces(t['old'])} / new {_pieces(t['new'])}")
        a = r.attribution
        if a is not None:
            out += a.source_lines()  # the literal, and the ranked writers when several hold the text
            if a.hazard is not None:
                src = a.hazard.get("source") or {}
                sink = a.hazard.get("sink") or {}
                more = f"; {a.other_hazards} other finding(s) fit too" if a.other_hazards else ""
                out.append(f"  hazard:  {a.hazard['id']} — {src.get('text')} ({src.get('repo')} {src.get('path')}:"
                           f"{src.get('line')}) reaches the {sink.get('part')} at {sink.get('path')}:"
                           f"{sink.get('line')}; {a.hazard_why}{more}")
            else:
                out.append(f"  hazard:  none matched ({a.hazard_why})")
    if r.prediction is not None and (out or r.findings):
        if not out:
            out.append(f"row {r.row} ({r.series} {r.index}):")
        p = r.prediction
        out.append(f"  cached:  predicted {p.cached:,} ({p.rule}: {p.basis}); reported {_n(r.reported)}"
                   f"{f' ({r.reported_field})' if r.reported_field else ''}; difference {_n(r.difference)}")
    for f in r.findings:
        out.append(f"  finding: {f}")
    line = summary_line(r)
    if line and out:
        out.append(f"  → {line}")
    return out


def _v(text: str) -> str:
    return visible(text)


def _pieces(pieces: list[str]) -> str:
    return "[" + " ".join(f"«{p}»" for p in pieces) + "]"
