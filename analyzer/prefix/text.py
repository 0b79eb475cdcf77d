"""The prefix report as plain text lines: the table grouped by conversation, then a block per divergence."""

from __future__ import annotations

from typing import Any

from analyzer.prefix.attribute import Attribution
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
    return f"request {r.row} lost {r.lost:,} of {r.prompt_tokens:,} tokens at {_where(r)}{_written_by(r.attribution)}"


def _written_by(a: Attribution | None, *, with_hazard: bool = True) -> str:
    """' (the text before it written by pi path:line @ sha; hazard id)', or '' when nothing wrote it."""
    written = []
    if a is not None and a.literal is not None and not a.only_later:
        lit = a.literal
        what = {"before": "the text before it", "new": "the new text"}.get(lit.side, "the baseline's text")
        written.append(f"{what} written by {lit.repo} {lit.place()} @ {lit.commit[:12]}")
    if with_hazard and a is not None and a.hazard is not None:
        written.append(f"hazard {a.hazard['id']}")
    return f" ({'; '.join(written)})" if written else ""


def report_lines(rep: PrefixReport) -> list[str]:
    lines = []
    if rep.log:
        lines.append(f"log: {rep.log}")
    lines.append(f"rule: {rep.rule} ({rep.rule_why}); source {rep.rule_source}")
    if rep.settings:
        lines.append(f"server: {rep.settings}")
    lines.append(f"prompts and tokens: {rep.renderer}")
    for note in rep.render_errors:
        lines.append(f"render: {note}")
    lines.append("")
    lines.append(f"{'row':>4} {'conv':>4} {'vs':>4} {'shape':<9} {'first difference':<40} {'tokens':>7} "
                 f"{'at tok':>6} {'pred':>6} {'rep':>6} {'diff':>5}  cause")
    by_conv: dict[int, list[RequestReport]] = {}
    for r in rep.requests:
        by_conv.setdefault(r.conversation, []).append(r)
    for conv, members in by_conv.items():
        lines.append(f"conversation {conv} ({len(members)} request(s), first row {members[0].row})")
        for r in members:
            cause = r.cause.kind if r.cause else ""
            lines.append(f"{r.row:>4} {r.conversation:>4} {_n(r.baseline_row):>4} {r.shape:<9} {_where(r)[:40]:<40} "
                         f"{r.prompt_tokens:>7,} {_n(r.token_index):>6} {_n(r.predicted):>6} {_n(r.reported):>6} "
                         f"{_n(r.difference):>5}  {cause}")
    for r in rep.requests:
        block = _detail(r)
        if block:
            lines.append("")
            lines.extend(block)
    a = rep.agreement()
    lines.append("")
    named = ", ".join(f"{k} {v}" for k, v in sorted(a["causes"].items()))
    lines.append(f"agreement: {a['reported']:,} of {a['requests']:,} successful request(s) report a cached count; "
                 f"predicted within max(8 tokens, 2%) for {a['within']:,}"
                 + (f"; causes named for the others: {named}" if named else ""))
    if rep.caveats:
        lines.append("")
        lines.append(f"the {rep.rule} model does not cover:")
        lines.extend(f"  - {c}" for c in rep.caveats)
    if rep.attribution_note:
        lines.append(f"attribution: {rep.attribution_note}")
    if rep.skipped:
        lines.append(f"skipped {len(rep.skipped)} row(s):")
        lines.extend(f"  {s}" for s in rep.skipped)
    return lines


def _detail(r: RequestReport) -> list[str]:
    s = r.structure
    out: list[str] = []
    if s is not None and s.kind not in ("identical", "appended"):
        out.append(f"row {r.row} ({r.series} {r.index}, conversation {r.conversation}) vs row {r.baseline_row} "
                   f"({r.baseline}):")
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
    if r.match is not None and (out or r.findings):
        if not out:
            out.append(f"row {r.row} ({r.series} {r.index}, conversation {r.conversation}):")
        p = r.match
        out.append(f"  cached:  predicted {p.cached:,} ({p.rule}: {p.basis}); reported {_n(r.reported)}"
                   f"{f' ({r.reported_field})' if r.reported_field else ''}; difference {_n(r.difference)}")
        if p.held:
            out.append(f"  held:    {'; '.join(h.describe() for h in p.held[:6])}"
                       f"{f' … ({len(p.held)} entries)' if len(p.held) > 6 else ''}")
    if r.closest is not None and out:
        row, shared, diff = r.closest
        where = ("this request is the same request" if diff.kind == "identical" else
                 f"this request extends it from {diff.path}" if diff.kind == "appended" else
                 f"it differs at {diff.path} char {diff.offset or 0:,}: old «{_v(diff.old)}» / new «{_v(diff.new)}»")
        out.append(f"  closest: row {row} shares {shared:,} tokens, more than the state reused; {where}"
                   f"{_written_by(r.closest_attribution, with_hazard=False)}")
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
