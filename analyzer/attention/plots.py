"""PNG figures for the experiments, drawn with matplotlib's Agg canvas (no display, no pyplot global state)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from analyzer.atomic import write_bytes_atomic
from analyzer.attention.edit import EditResult


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def qk_plot(curve: list[tuple[int, int, int]], title: str) -> bytes:
    """QK products to produce the token at each length, measured with and without the cache."""
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    lengths = [n for n, _, _ in curve]
    ax.plot(lengths, [a for _, a, _ in curve], marker=".", label="with KV cache (≈ length)")
    ax.plot(lengths, [b for _, _, b in curve], marker=".", label="recompute all (≈ length²/2)")
    ax.set_xlabel("sequence length after the new token")
    ax.set_ylabel("QK dot products (all layers and query heads)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    return _png(fig)


def edit_heatmap(results: list[EditResult]) -> bytes:
    """Layer × position map of max |Δ| K/V after an edit, one panel per model depth."""
    fig = Figure(figsize=(7.0, 1.6 + 1.1 * sum(r.config.layers for r in results)), layout="constrained")
    axes = fig.subplots(len(results), 1, squeeze=False)[:, 0]
    logs = [np.where(r.changed, np.log10(np.maximum(r.delta, 1e-16)), np.nan) for r in results]
    finite = np.concatenate([x[np.isfinite(x)] for x in logs]) if any(np.isfinite(x).any() for x in logs) else None
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite is not None else (-16.0, 0.0)
    for ax, r, shown in zip(axes, results, logs, strict=True):
        image = ax.imshow(shown, aspect="auto", cmap="magma", interpolation="nearest", vmin=vmin, vmax=vmax,
                          extent=(-0.5, r.length - 0.5, r.config.layers + 0.5, 0.5))
        ax.axvline(r.position - 0.5, color="tab:blue", linewidth=1)
        ax.set_yticks(range(1, r.config.layers + 1))
        ax.set_ylabel("layer")
        ax.set_title(f"{r.config.layers}-layer model: K/V changed after editing position {r.position} "
                     "(blank = unchanged)", fontsize=9)
        fig.colorbar(image, ax=ax, label="log10 max |ΔK/V|")
    axes[-1].set_xlabel("position")
    return _png(fig)


def write_plots(directory: str | Path, curve: list[tuple[int, int, int]] | None,
                edits: list[EditResult] | None, title: str = "") -> list[Path]:
    """Write the available figures into `directory` atomically; returns the paths written."""
    out = Path(directory)
    written = []
    if curve:
        path = out / "qk_vs_length.png"
        write_bytes_atomic(path, qk_plot(curve, title or "QK products per generated token"))
        written.append(path)
    if edits:
        path = out / "edit_kv_changes.png"
        write_bytes_atomic(path, edit_heatmap(edits))
        written.append(path)
    return written
