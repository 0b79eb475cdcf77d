"""llama.cpp's server (llama-server) as a cache: its slots, how a request picks one, the host-memory prompt
cache behind them, and `--cache-reuse`.

Modelled on the server vendored in llama-cpp-python 0.3.36 (`vendor/llama.cpp/tools/server/`, read
2026-12-07); each method names the function it follows. The state is what the server's process holds, so a
restart (another server identity in the rows) empties it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from analyzer.cachemodel.model import Arrival, Held, Match, common_prefix
from analyzer.cachemodel.rules import Rule

# The names a row's `server` block may give each setting (the engine's own, then llama-server's /props).
SETTING_NAMES: dict[str, tuple[str, ...]] = {
    "slots": ("slots", "parallel", "n_parallel", "total_slots", "n_slots"),
    "kv_unified": ("kv_unified",),
    "slot_similarity": ("slot_similarity", "slot_prompt_similarity"),
    "cache_ram_mib": ("cache_ram_mib", "cache_ram"),
    "cache_reuse": ("cache_reuse", "n_cache_reuse"),
    "cache_idle_slots": ("cache_idle_slots",),
    "ctx_per_slot": ("ctx_per_slot", "n_ctx_slot", "n_ctx"),
    "ctx_size": ("ctx_size",),
    "state_bytes_per_token": ("state_bytes_per_token", "kv_bytes_per_token"),
}


@dataclass(frozen=True)
class Settings:
    """The server's cache settings; `assumed` names those no row gave (the rule file's defaults)."""

    slots: int
    kv_unified: bool
    slot_similarity: float
    cache_ram_mib: int
    cache_reuse: int
    cache_idle_slots: bool
    ctx_per_slot: int
    ctx_size: int                     # the whole context (all slots): the prompt cache's token limit
    state_bytes_per_token: float | None
    assumed: tuple[str, ...] = ()

    def describe(self) -> str:
        ram = ("off" if self.cache_ram_mib == 0 else "no limit" if self.cache_ram_mib < 0
               else f"{self.cache_ram_mib:,} MiB")
        out = (f"{self.slots} slot(s){' (unified KV)' if self.kv_unified else ''}, slot similarity "
               f"{self.slot_similarity:g}, prompt cache {ram}, cache-reuse {self.cache_reuse or 'off'}")
        if self.assumed:
            out += f"; assumed (server defaults, not in the rows): {', '.join(self.assumed)}"
        return out


def settings_from(server: dict[str, Any] | None, rule: Rule) -> Settings:
    """The settings a row's `server` block records (also inside a nested `settings`), else the defaults."""
    raw = dict(server or {})
    if isinstance(raw.get("settings"), dict):
        raw = {**raw, **raw["settings"]}
    defaults = dict(rule.params.get("defaults", {}))
    got: dict[str, Any] = {}
    assumed = []
    for name, keys in SETTING_NAMES.items():
        value = next((raw[k] for k in keys if raw.get(k) is not None), None)
        if value is None:
            slots_given = "slots" not in assumed
            if name == "kv_unified" and slots_given:
                value = False   # --parallel N given: the KV is unified only when asked (server.cpp, arg.cpp)
            elif name in ("state_bytes_per_token", "ctx_size"):
                value = None
            else:
                value = defaults.get(name)
            if name not in ("state_bytes_per_token", "ctx_size") and not (name == "kv_unified" and slots_given):
                assumed.append(name)
        got[name] = value
    slots = int(got["slots"] or 1)
    return Settings(slots=max(1, slots), kv_unified=bool(got["kv_unified"]),
                    slot_similarity=float(got["slot_similarity"] or 0.0), cache_ram_mib=int(got["cache_ram_mib"]),
                    cache_reuse=int(got["cache_reuse"] or 0), cache_idle_slots=bool(got["cache_idle_slots"]),
                    ctx_per_slot=int(got["ctx_per_slot"] or 0),
                    ctx_size=int(got["ctx_size"] or (int(got["ctx_per_slot"] or 0) *
                                                     (1 if got["kv_unified"] else max(1, slots)))),
                    state_bytes_per_token=float(got["state_bytes_per_token"])
                    if got["state_bytes_per_token"] else None, assumed=tuple(assumed))


@dataclass
class _Slot:
    id: int
    tokens: tuple[int, ...] = ()
    origin: int | None = None            # the row whose prompt (and answer) the slot holds
    prompt: int = 0                      # how many of `tokens` are that row's prompt
    last_used: float = -1.0
    busy_until: float = float("-inf")


@dataclass
class _State:
    tokens: tuple[int, ...]
    origin: int | None
    prompt: int = 0


@dataclass
class LlamaCppCache:
    """One llama-server's cache state, request by request."""

    rule: Rule
    settings: Settings
    slots: list[_Slot] = field(default_factory=list)
    states: list[_State] = field(default_factory=list)       # the prompt cache, oldest first
    fate: dict[int, tuple[str, str]] = field(default_factory=dict)   # row → (kind, what became of its state)
    _generated: itertools.count = field(default_factory=lambda: itertools.count(-1, -1))
    _clock: float = 0.0
    _restored: int | None = None                             # the row whose state the last pick restored

    def __post_init__(self) -> None:
        if not self.slots:
            self.slots = [_Slot(i) for i in range(self.settings.slots)]

    # -- the prompt cache (server-task.cpp, server_prompt_cache) -------------------------------------------

    @property
    def _limit_bytes(self) -> float:
        mib = self.settings.cache_ram_mib
        return 1024.0 * 1024.0 * mib if mib > 0 else 0.0

    def _size(self, n_tokens: int) -> float | None:
        bpt = self.settings.state_bytes_per_token
        return None if bpt is None else n_tokens * bpt

    def _save(self, slot: _Slot, now_key: int) -> None:
        """server_prompt_cache::alloc: skip a prompt an entry already holds whole, or one over the limit; drop
        entries the new prompt holds whole; make room by dropping the oldest entries."""
        if not slot.tokens or self.settings.cache_ram_mib == 0:
            return
        if any(common_prefix(s.tokens, slot.tokens) == len(slot.tokens) for s in self.states):
            return
        size_new = self._size(len(slot.tokens))
        limit = self._limit_bytes
        if limit and size_new is not None and size_new > limit:
            self._gone(slot.origin, f"its state ({len(slot.tokens):,} tokens) exceeds --cache-ram "
                                    f"{self.settings.cache_ram_mib:,} MiB, so it was not saved (row {now_key})")
            return
        self.states = [s for s in self.states if common_prefix(s.tokens, slot.tokens) != len(s.tokens)]
        if limit and size_new is not None:
            while self.states and self._total_size() + size_new > limit:
                old = self.states.pop(0)
                self._gone(old.origin, f"evicted from the prompt cache (oldest entry, --cache-ram "
                                       f"{self.settings.cache_ram_mib:,} MiB full) at row {now_key}")
        self.states.append(_State(slot.tokens, slot.origin, slot.prompt))

    def _total_size(self) -> float:
        return sum(self._size(len(s.tokens)) or 0.0 for s in self.states)

    def _load(self, slot: _Slot, task: tuple[int, ...], now_key: int) -> None:
        """server_prompt_cache::load: restore the entry that keeps more of itself and covers more of the new
        prompt than the slot does, skipping entries that would keep less than a quarter of themselves."""
        min_keep = float(self.rule.params.get("thresholds", {}).get("restore_min_keep", 0.25))
        lcp_best = common_prefix(slot.tokens, task)
        keep_best = lcp_best / len(slot.tokens) if slot.tokens else -1.0
        sim_best = lcp_best / len(task) if task else 0.0
        best = None
        for s in self.states:
            lcp = common_prefix(s.tokens, task)
            keep, sim = lcp / len(s.tokens), (lcp / len(task) if task else 0.0)
            if keep < min_keep:
                continue
            if keep_best < keep and sim_best < sim:
                keep_best, sim_best, best = keep, sim, s
        if best is not None:
            if slot.origin is not None and slot.origin != best.origin and not self._held(slot.origin, slot):
                self._gone(slot.origin, f"its slot {slot.id} took row {best.origin}'s state from the prompt cache "
                                        f"for row {now_key}", "other-slot")
            slot.tokens, slot.origin, slot.prompt = best.tokens, best.origin, best.prompt
            self.states.remove(best)
            self._restored = best.origin

    def _update(self, now_key: int) -> None:
        """server_prompt_cache::update: drop the oldest entries over the byte limit, then over the token limit
        (the server's context, raised to what the byte limit holds)."""
        limit = self._limit_bytes
        bpt = self.settings.state_bytes_per_token
        if limit and bpt is not None:
            while self.states and self._total_size() > limit:
                old = self.states.pop(0)
                self._gone(old.origin, f"evicted from the prompt cache (over --cache-ram) at row {now_key}")
        limit_tokens = self.settings.ctx_size   # server_prompt_cache(cache_ram_mib, n_ctx): n_ctx of all slots
        if limit and bpt is None:
            return   # the token limit is raised to what the byte limit holds, which needs the bytes per token
        cur = max(limit_tokens, int(limit / max(1.0, bpt or 1.0))) if limit else limit_tokens
        if limit_tokens > 0:
            while self.states and sum(len(s.tokens) for s in self.states) > cur:
                old = self.states.pop(0)
                self._gone(old.origin, f"evicted from the prompt cache (over {cur:,} tokens) at row {now_key}")

    # -- slots (server-context.cpp) ------------------------------------------------------------------------

    def _pick(self, task: tuple[int, ...], now: float, now_key: int, asked: int | None = None) -> _Slot:
        """get_available_slot: the idle slot whose prompt covers the largest fraction of the new one (above
        --slot-prompt-similarity), else the least recently used; the prompt cache is updated when the slot
        is chosen by LRU or would keep less than half of what it holds. A request that names a slot (`id_slot`)
        gets that one, waiting for it when busy."""
        save_below = float(self.rule.params.get("thresholds", {}).get("save_when_keep_below", 0.5))
        if asked is not None and 0 <= asked < len(self.slots):
            slot = self.slots[asked]
            keep = common_prefix(slot.tokens, task) / len(slot.tokens) if slot.tokens else 1.0
            if keep < save_below and self.settings.cache_ram_mib != 0:
                self._save(slot, now_key)
                self._load(slot, task, now_key)
                self._update(now_key)
            return slot
        idle = [s for s in self.slots if s.busy_until <= now]
        if not idle:   # every slot busy: the task waits for the first to finish (queue_tasks.defer)
            soonest = min(s.busy_until for s in self.slots)
            idle = [s for s in self.slots if s.busy_until <= soonest]
        ret, update = None, False
        thr = self.settings.slot_similarity
        if thr != 0.0:
            best = 0.0
            for s in idle:
                if not s.tokens:
                    continue
                sim = common_prefix(s.tokens, task) / len(task) if task else 0.0
                if sim > best and sim > thr:
                    best, ret = sim, s
            if ret is not None:
                keep = best * len(task) / len(ret.tokens)
                update = keep < save_below
        if ret is None:
            t_last = -1.0
            for s in idle:
                if ret is None or s.last_used <= t_last:
                    t_last, ret = s.last_used, s
            update = True
        assert ret is not None
        if update and self.settings.cache_ram_mib != 0:
            self._save(ret, now_key)
            self._load(ret, task, now_key)
            self._update(now_key)
        return ret

    def _reuse(self, slot: _Slot, task: tuple[int, ...], n_past: int) -> int:
        """--cache-reuse N (update_slots, "reuse chunks from the cached prompt by shifting their KV cache"):
        after the common prefix, chunks of at least N tokens found further on in the slot are shifted into
        place and count as cached."""
        n = self.settings.cache_reuse
        if n <= 0:
            return n_past
        cache = list(slot.tokens)
        head_c = head_p = n_past
        while head_c < len(cache) and head_p < len(task):
            match = 0
            while (head_c + match < len(cache) and head_p + match < len(task)
                   and cache[head_c + match] == task[head_p + match]):
                match += 1
            if match >= n:
                n_past += match
                head_c += match
                head_p += match
            else:
                head_c += 1
        return n_past

    def _answer(self, a: Arrival) -> tuple[int, ...]:
        """What the slot keeps of the answer (process_token pushes each sampled token but the last): the answer's
        ids when the rows say what it was, else as many tokens that match nothing."""
        if a.generated is not None:
            n = len(a.generated) if a.output_tokens is None else min(len(a.generated), max(0, a.output_tokens - 1))
            return a.generated[:n]
        return tuple(next(self._generated) for _ in range(max(0, (a.output_tokens or 0) - 1)))

    def _gone(self, origin: int | None, why: str, kind: str = "eviction") -> None:
        if origin is not None and origin not in self.fate:
            self.fate[origin] = (kind, why)

    def _held(self, origin: int, but: _Slot | None = None) -> bool:
        return any(s.origin == origin for s in self.slots if s is not but) or \
            any(s.origin == origin for s in self.states)

    def restart(self, why: str) -> None:
        """A new server process: every slot and the prompt cache start empty."""
        for s in self.slots:
            self._gone(s.origin, why, "restart")
        for st in self.states:
            self._gone(st.origin, why, "restart")
        self.slots = [_Slot(i) for i in range(self.settings.slots)]
        self.states = []

    def snapshot(self, task: tuple[int, ...]) -> tuple[Held, ...]:
        out = [Held(s.origin, len(s.tokens), f"slot {s.id}", common_prefix(s.tokens, task))
               for s in self.slots if s.tokens and s.origin is not None]
        out += [Held(st.origin, len(st.tokens), "prompt cache", common_prefix(st.tokens, task))
                for st in self.states if st.origin is not None]
        return tuple(out)

    def step(self, a: Arrival) -> tuple[Match, tuple[Held, ...]]:
        """Process one accepted request: pick its slot, compute what it reuses (update_slots: n_past), then
        leave the prompt and its answer in the slot."""
        task = a.tokens
        now = a.at if a.at is not None else self._clock
        held = self.snapshot(task)
        before = {s.id: s.origin for s in self.slots}
        self._restored = None
        slot = self._pick(task, now, a.key, a.slot_id)
        start = max(now, slot.busy_until)
        if a.cache_prompt:
            n_past = self._reuse(slot, task, common_prefix(slot.tokens, task))
        else:   # "if we don't cache the prompt, we have to remove all previous tokens"
            n_past = 0
        always = int(self.rule.params.get("always_evaluated", 1))
        if task and n_past >= len(task):
            n_past = max(0, len(task) - always)
        entry = slot.origin if n_past > 0 else None
        # cache_idle_slots: when a task starts, idle slots are saved to the prompt cache (and cleared with a
        # unified KV) — server-context.cpp, the SERVER_TASK_TYPE_COMPLETION case after launch_slot_with_task
        # the request ends when its answer ended (arrival + its total time, queueing included)
        end = max(start, now + a.duration) if a.duration is not None else start
        superseded = n_past + always >= slot.prompt   # the new prompt holds the old one: nothing is lost
        for previous in {before[slot.id], slot.origin} - {None, a.key}:
            if previous is not None and not superseded and not self._held(previous, slot):
                self._gone(previous, f"its slot {slot.id} was given to row {a.key}, and the prompt cache "
                                     f"{'is off' if self.settings.cache_ram_mib == 0 else 'did not keep it'}",
                           "other-slot")
        generated = self._answer(a)
        slot.tokens, slot.origin, slot.prompt = task + generated, a.key, len(task)
        slot.busy_until, slot.last_used = end, end
        if self.settings.cache_idle_slots and self.settings.cache_ram_mib != 0:
            for other in self.slots:
                if other is slot or other.busy_until > start:
                    continue
                self._save(other, a.key)
                self._update(a.key)
                if self.settings.kv_unified and other.tokens:
                    other.tokens, other.origin, other.prompt = (), None, 0
        self._clock = end + 1e-6
        restored = " (restored from the host prompt cache)" if entry is not None and entry == self._restored else ""
        basis = (f"slot {slot.id}: {n_past:,} of {len(task):,} tokens shared with row {entry}'s state{restored}"
                 if entry is not None else f"slot {slot.id}: nothing it or the prompt cache held matched")
        if n_past > 0 and n_past == len(task) - always:
            basis += " (the last prompt token is always computed again)"
        return Match(key=a.key, rule=self.rule.name, cached=n_past, entry=entry, shared=n_past, basis=basis,
                     held=held, slot=slot.id, assumed=self.settings.assumed), held
