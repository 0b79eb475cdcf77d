"""A log's requests rendered and turned into the cache model's arrivals — the one way `prefix` and the cost
what-ifs feed the cache model, so a fix's prediction and the prefix report count the same tokens, breakpoints,
block ends, server settings and fixed answers.

Why one place: when the engine cannot render a request (no `/apply-template`, its own error), every request of
every version is estimated instead — tokens of two tokenizers never compare — and the engine's error is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from analyzer.cachemodel.fromlog import LoggedRequest, answer_text, arrival
from analyzer.cachemodel.model import Arrival
from analyzer.errors import AnalyzerError
from analyzer.prefix.tokens import PlainRenderer, Rendered, Renderer, RenderError, render_request


@dataclass
class RenderedVersions:
    rendered: dict[str, dict[int, Rendered]]   # version name → row → its prompt and tokens
    renderer: Renderer                         # the renderer every version was rendered with in the end
    errors: list[str] = field(default_factory=list)   # the engine's own error, when it fell back to estimates


def render_versions(versions: Mapping[str, Sequence[LoggedRequest]], renderer: Renderer) -> RenderedVersions:
    """Every answered request of every version rendered by `renderer`; when the engine cannot render one, its
    error is kept and every request of every version is estimated instead."""
    out: dict[str, dict[int, Rendered]] = {}
    for name, entries in versions.items():
        out[name] = {}
        for e in entries:
            if not e.ok:
                continue
            try:
                out[name][e.row] = render_request(renderer, e.request, e.body)
            except RenderError as exc:
                plain = PlainRenderer()
                note = (f"row {e.row} ({e.request.shape}): the engine could not render it — {exc}; every request "
                        "is estimated instead")
                estimated = {n: {x.row: plain.render_request(x.request) for x in xs if x.ok}
                             for n, xs in versions.items()}
                return RenderedVersions(estimated, plain, [note])
            except AnalyzerError as exc:
                raise AnalyzerError(f"row {e.row}: {exc}") from None
    return RenderedVersions(out, renderer)


def log_arrivals(entries: Sequence[LoggedRequest], rendered: Mapping[int, Rendered], renderer: Renderer,
                 settings: dict[str, Any] | None = None) -> list[Arrival]:
    """The cache model's arrival of each logged request (`analyzer.cachemodel.fromlog.arrival`), with the
    server's fixed answer tokenized when the renderer is the server's own."""
    return [arrival(e, rendered.get(e.row), settings or {}, answer_ids(e.data, renderer)) for e in entries]


def answer_ids(row: dict[str, Any], renderer: Renderer) -> tuple[int, ...] | None:
    """The fixed answer's ids, from the server that renders (only an exact renderer's ids are the server's)."""
    text = answer_text(row)
    tokenize = getattr(renderer, "tokenize", None)
    if text is None or tokenize is None or not renderer.exact:
        return None
    return tuple(tokenize(text))
