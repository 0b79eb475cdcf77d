"""One request model for every API shape a recorded request can have (chat completions, Responses, Anthropic
Messages): `Request` (segments in rendering order, cache control beside them) and `Usage` (token buckets)."""

from analyzer.requests.model import SHAPES, Block, Breakpoint, CacheControl, Request, Segment, Shape, Usage

__all__ = ["SHAPES", "Block", "Breakpoint", "CacheControl", "Request", "Segment", "Shape", "Usage"]
