"""`attention`: the NumPy KV-cache experiments (append, edit, prefix, window, quantize, evict, offload).

Each experiment returns its own typed result (`analyzer.attention.*`); this runs the chosen ones in
order on one seeded model and gathers their JSON and research records, so a notebook gets the numbers
the command line prints without parsing them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analyzer.errors import AnalyzerError
from analyzer.records.i18n import DEFAULT_LANG

if TYPE_CHECKING:
    from analyzer.attention.append import AppendResult
    from analyzer.attention.config import ModelConfig
    from analyzer.attention.edit import EditResult
    from analyzer.attention.evict import EvictResult
    from analyzer.attention.offload import OffloadResult
    from analyzer.attention.prefix import PrefixResult
    from analyzer.attention.quantize import QuantizeResult
    from analyzer.attention.window import WindowResult
    from analyzer.records.template import Record

EXPERIMENTS = ("append", "edit", "prefix", "window", "quantize", "evict", "offload")
OFFLOAD_DEFAULT_MODEL = "Llama-3-8B"


@dataclass(frozen=True)
class AttentionOptions:
    """Which experiments (`experiments`, in this order; default all) and their sizes, as `analyze attention`'s
    options: `length` cached tokens, `edit_pos` (default length // 2), prefix `block_sizes` (default 16 and 64)
    run through the model up to `verify_max` tokens, the capacity experiments' `window`, `generate`,
    `budgets`, `sinks` and the kv-size preset `offload_model` at `offload_context` tokens. `qk_curve` also
    measures the append experiment's QK products per length (what the plot draws)."""

    experiments: tuple[str, ...] = EXPERIMENTS
    length: int = 32
    edit_pos: int | None = None
    block_sizes: tuple[int, ...] | None = None
    verify_max: int = 2048
    window: int = 8
    generate: int = 8
    budgets: tuple[int, ...] | None = None
    sinks: int = 4
    offload_model: str = OFFLOAD_DEFAULT_MODEL
    offload_context: int = 32_768
    lang: str = DEFAULT_LANG
    qk_curve: bool = False


@dataclass
class AttentionResult:
    """One result per experiment run (None for those not run) and the research records, in run order."""

    config: ModelConfig
    append: AppendResult | None = None
    edit: list[EditResult] | None = None
    prefix: list[PrefixResult] | None = None
    window: WindowResult | None = None
    quantize: QuantizeResult | None = None
    evict: EvictResult | None = None
    offload: OffloadResult | None = None
    records: list[Record] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    lang: str = DEFAULT_LANG

    def result(self, name: str) -> Any:
        """The result of experiment `name` (as the renderers take it)."""
        return getattr(self, name)

    def to_dict(self) -> dict[str, Any]:
        """`attention --json` before the files written are added: the config, then each experiment run."""
        payload: dict[str, Any] = {"config": self.config.to_dict()}
        for name in self.ran:
            value = self.result(name)
            payload[name] = [item.to_dict() for item in value] if isinstance(value, list) else value.to_dict()
        return payload

    def markdown(self) -> str:
        """The research records of every experiment run, as one Markdown document."""
        from analyzer.attention.record import render_records

        return render_records(self.records, self.lang)


def attention(config: ModelConfig, options: AttentionOptions = AttentionOptions()) -> AttentionResult:
    """Run each chosen experiment on the model `config` describes (bad sizes raise `AnalyzerError`)."""
    from analyzer.attention import record as rec
    from analyzer.attention import record_capacity as cap
    from analyzer.attention.append import run_append
    from analyzer.attention.edit import run_edit_contrast
    from analyzer.attention.evict import run_evict
    from analyzer.attention.kvsize import find_preset
    from analyzer.attention.offload import run_offload, toy_layout
    from analyzer.attention.prefix import DEFAULT_BLOCK_SIZES, run_prefix
    from analyzer.attention.quantize import run_quantize
    from analyzer.attention.window import run_window

    if options.verify_max < 0:
        raise AnalyzerError("--verify-max must be 0 or more tokens")
    unknown = [name for name in options.experiments if name not in EXPERIMENTS]
    if unknown:
        raise AnalyzerError(f"unknown experiment {unknown[0]!r}; choose from {', '.join(EXPERIMENTS)}")
    out = AttentionResult(config, lang=options.lang)
    length, lang = options.length, options.lang
    for name in options.experiments:
        if name == "append":
            out.append = run_append(config, length, curve_max=min(length + 1, 64) if options.qk_curve else 0)
            record = rec.append_record(out.append, lang)
        elif name == "edit":
            out.edit = run_edit_contrast(config, length, options.edit_pos if options.edit_pos is not None
                                         else length // 2)
            record = rec.edit_record(out.edit, lang)
        elif name == "prefix":
            out.prefix = run_prefix(config, options.block_sizes or DEFAULT_BLOCK_SIZES, verify_max=options.verify_max)
            record = rec.prefix_record(config, out.prefix, options.verify_max, lang)
        elif name == "window":
            out.window = run_window(config, length, options.window)
            record = cap.window_record(out.window, lang)
        elif name == "quantize":
            out.quantize = run_quantize(config, length, options.generate)
            record = cap.quantize_record(out.quantize, lang)
        elif name == "evict":
            out.evict = run_evict(config, length, options.budgets, options.sinks)
            record = cap.evict_record(out.evict, lang)
        else:
            if options.offload_context < 1:
                raise AnalyzerError("--offload-context must be at least 1 token")
            out.offload = run_offload(toy_layout(config.layers, config.kv_heads, config.head_dim), length,
                                      find_preset(options.offload_model), options.offload_context)
            record = cap.offload_record(out.offload, lang)
        out.ran.append(name)
        out.records.append(record)
    return out
