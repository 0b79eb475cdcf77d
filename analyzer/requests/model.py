"""The request model: one recorded request of any API shape as what the endpoint renders, in its order.

Why one model: the proxy, `prefix`, `observe`, `cost`, `reconcile --from-log` and attribution must all agree on
what a request *is* — which text precedes which in the rendered prompt, and what is cache control rather than
prompt. Each shape's parser (`chat.py`, `responses.py`, `anthropic.py`) turns a JSON body into a `Request`:

- `segments`: system blocks, tool definitions, then messages, in the order the endpoint renders them, each
  with its role and content blocks. Comparison works on these, never on the raw JSON, so a string and one
  text block that render the same compare equal (the rule that says so is data: `rules/requests/render.toml`).
- `control`: cache control kept beside the segments — `cache_control` breakpoints (with their TTL),
  `prompt_cache_key`, `previous_response_id`, session-affinity headers. Moving a marker is not a prompt change.
- `params`: generation settings (max tokens, stream, temperature…) — neither prompt nor cache control.

Usage of every shape is read into `Usage` (`usage.py`): "not reported" stays `None`, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Shape = Literal["chat", "responses", "anthropic"]
SegmentKind = Literal["system", "tool", "message"]
SHAPES: tuple[Shape, ...] = ("chat", "responses", "anthropic")


@dataclass(frozen=True)
class Block:
    """One content block as it renders: `type` (text, image, tool_use, tool_result, function_call, reasoning…)
    and `text`, its canonical text (a text block's string; any other block's compact JSON, cache control
    removed, keys in the order the shape's render rule says renders — kept for every shape today)."""

    type: str
    text: str


@dataclass(frozen=True)
class Segment:
    """A unit of the rendered prompt: one system block/message, one tool definition or one message."""

    kind: SegmentKind
    path: str                      # in the body: "system[0]", "instructions", "tools[2]", "messages[3]", "input[4]"
    role: str | None               # messages: user | assistant | tool …; system: system | developer; tools: None
    blocks: tuple[Block, ...]
    name: str | None = None        # a tool's name (tools) or a message's name/tool_call_id when it has one

    def text(self) -> str:
        """The blocks' texts joined: what is compared character by character."""
        return "\n".join(b.text for b in self.blocks)


@dataclass(frozen=True)
class Breakpoint:
    """A `cache_control` marker: after which segment (and block) the provider caches, and for how long."""

    segment: int                   # index into Request.segments
    block: int | None              # index into that segment's blocks; None: the segment as a whole
    type: str = "ephemeral"
    ttl: str | None = None         # "5m", "1h" as sent; None: the provider's default


@dataclass(frozen=True)
class CacheControl:
    """What decides *which* cache a request reaches and what is written, as opposed to the prompt itself."""

    breakpoints: tuple[Breakpoint, ...] = ()
    automatic: bool = False        # a top-level cache_control (Anthropic's automatic mode)
    automatic_ttl: str | None = None   # the ttl of that top-level cache_control, as sent
    prompt_cache_key: str | None = None
    prompt_cache_retention: str | None = None
    previous_response_id: str | None = None
    user: str | None = None
    affinity: tuple[tuple[str, str], ...] = ()   # session-affinity headers (name, value); never credentials


@dataclass(frozen=True)
class Request:
    shape: Shape
    endpoint: str | None           # the path it was sent to, e.g. "/v1/messages"; None when unknown
    model: str | None
    segments: tuple[Segment, ...]
    control: CacheControl = CacheControl()
    params: dict[str, Any] = field(default_factory=dict)   # max_tokens/max_output_tokens, stream, temperature…

    def of_kind(self, kind: SegmentKind) -> tuple[Segment, ...]:
        return tuple(s for s in self.segments if s.kind == kind)

    @property
    def system_text(self) -> str:
        return "\n".join(s.text() for s in self.of_kind("system"))

    @property
    def tool_names(self) -> tuple[str | None, ...]:
        return tuple(s.name for s in self.of_kind("tool"))


@dataclass(frozen=True)
class Usage:
    """Token buckets of one response, as the server reported them; None = not reported (never 0 for unknown).

    `prompt` is every input token (uncached + read + written); `uncached` what was computed and not written.
    The `*_field` strings name the field each number came from, so a printed figure is traceable."""

    prompt: int | None = None
    cached: int | None = None              # read from the cache
    cache_write: int | None = None         # written to the cache (Anthropic; OpenAI's newer models)
    cache_write_by_ttl: tuple[tuple[str, int], ...] = ()   # ("5m", n), ("1h", n) where the provider splits it
    uncached: int | None = None
    output: int | None = None
    reasoning: int | None = None
    prompt_field: str | None = None
    cached_field: str | None = None
    output_field: str | None = None

    @property
    def reported(self) -> bool:
        return self.cached is not None
