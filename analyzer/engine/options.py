"""How `analyze engine start` runs llama-server: slots, context, host prompt cache, cache reuse, output cap.

Why these knobs and these defaults (read in the vendored llama.cpp, llama-cpp-python 0.3.36 sdist):
- `--parallel N` given explicitly leaves the KV cache *not* unified (common/common.h `kv_unified = false`; only
  the automatic slot count turns it on, tools/server/server.cpp "n_parallel is set to auto … kv_unified =
  true"), so the context is split: each slot gets `ctx_size / N`, padded to 256 (src/llama-context.cpp
  `n_ctx_seq = n_ctx / n_seq_max`), and then capped to the model's training context
  (tools/server/server-context.cpp `n_ctx_slot()`). The default context is therefore 32,768 tokens *per slot*
  times the slot count, so every slot holds a coding agent's 15–20k-token first request.
- `--cache-ram` (host-memory prompt cache, MiB; llama.cpp's own default 8,192) and `--cache-reuse` (minimum
  chunk reused by KV shifting; default 0 = off) keep the server's defaults unless given, and are recorded so
  the cache model can use them.
- `--cache-idle-slots` (on by default, common/common.h `cache_idle_slots = true`) saves the idle slots' prompts
  to the host cache when a task starts; it needs `--cache-ram` (server-context.cpp turns it off without one).
- `--n-predict` is only the default for a request that sets no `max_tokens`: the per-request limit wins
  (server-context.cpp "the per-request limit takes priority over the global one", `slot.n_predict_max =
  task.params.n_predict != -1 ? task.params.n_predict : params_base.n_predict`). The cap that holds whatever
  a request asks is the generated model's fixed short answer (analyzer/engine/tinymodel.py); `--n-predict` covers
  the requests that give no limit at all.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from analyzer.errors import AnalyzerError

CTX_PER_SLOT = 32768        # tokens each slot holds by default
PAD = 256                   # llama.cpp pads the context and the per-slot context to a multiple of this
CACHE_RAM_MIB = 8192        # llama.cpp's default --cache-ram (common/common.h cache_ram_mib)
CACHE_REUSE = 0             # llama.cpp's default --cache-reuse (common/common.h n_cache_reuse)
N_PREDICT = 16              # default output tokens for a request that sets no max_tokens
SLOT_PROMPT_SIMILARITY = 0.1  # llama.cpp's default --slot-prompt-similarity; not changed by `engine start`


@dataclass(frozen=True)
class EngineOptions:
    """The server options one `engine start` used; `ctx_size` None means CTX_PER_SLOT × parallel."""

    parallel: int = 1
    ctx_size: int | None = None
    cache_ram_mib: int = CACHE_RAM_MIB
    cache_reuse: int = CACHE_REUSE
    n_predict: int = N_PREDICT
    kv_unified: bool = False
    cache_idle_slots: bool = True

    @property
    def total_ctx(self) -> int:
        """The --ctx-size passed to the server (all slots together)."""
        return self.ctx_size if self.ctx_size is not None else CTX_PER_SLOT * self.parallel

    def ctx_per_slot(self, ctx_train: int) -> int:
        """What llama.cpp gives each slot: the whole context when unified, else its share padded to 256,
        never more than the model's training context."""
        total = -(-self.total_ctx // PAD) * PAD
        share = total if self.kv_unified else -(-(total // self.parallel) // PAD) * PAD
        return min(share, ctx_train)

    def check(self, ctx_train: int) -> None:
        """Refuse options llama-server would reject or silently shrink, with what to give instead."""
        if self.parallel < 1:
            raise AnalyzerError(f"--parallel {self.parallel}: give at least 1 slot")
        if self.ctx_size is not None and self.ctx_size < PAD * self.parallel:
            raise AnalyzerError(f"--ctx-size {self.ctx_size:,} leaves under {PAD} tokens per slot for "
                                f"{self.parallel} slot(s); give at least {PAD * self.parallel:,}")
        per_slot = self.total_ctx if self.kv_unified else self.total_ctx // self.parallel
        if per_slot > ctx_train:
            raise AnalyzerError(f"--ctx-size {self.total_ctx:,} gives each slot {per_slot:,} tokens, more than the "
                                f"generated model's training context ({ctx_train:,}), and llama-server would cap "
                                f"it; give at most {ctx_train * (1 if self.kv_unified else self.parallel):,}")
        if self.cache_ram_mib < -1:
            raise AnalyzerError(f"--cache-ram {self.cache_ram_mib}: give MiB, 0 to turn the host prompt cache off "
                                "or -1 for no limit")
        if self.cache_reuse < 0:
            raise AnalyzerError(f"--cache-reuse {self.cache_reuse}: give a chunk size in tokens, 0 to turn it off")
        if self.n_predict < 1:
            raise AnalyzerError(f"--n-predict {self.n_predict}: give at least 1 (the default output length for "
                                "requests that set no max_tokens)")

    def server_args(self) -> list[str]:
        args = ["--ctx-size", str(self.total_ctx), "--parallel", str(self.parallel),
                "--cache-ram", str(self.cache_ram_mib), "--cache-reuse", str(self.cache_reuse),
                "--n-predict", str(self.n_predict)]
        args.append("--kv-unified" if self.kv_unified else "--no-kv-unified")
        args.append("--cache-idle-slots" if self.cache_idle_slots else "--no-cache-idle-slots")
        return args

    def as_dict(self) -> dict:
        """What the state and launch records keep (with the derived total context)."""
        return {**asdict(self), "ctx_size": self.total_ctx, "slot_prompt_similarity": SLOT_PROMPT_SIMILARITY,
                # what the server runs with: it turns idle-slot saving off when there is no host cache
                "cache_idle_slots": self.cache_idle_slots and self.cache_ram_mib != 0}


DEFAULT_OPTIONS = EngineOptions()
