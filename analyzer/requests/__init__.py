"""One request model for every API shape a recorded request can have (chat completions, Responses, Anthropic
Messages): `Request` (segments in rendering order, cache control beside them) and `Usage` (token buckets).

`parse_request(body, path=…, headers=…)` turns a decoded body into a `Request` (None for anything else),
`detect_shape` says which shape it is, `read_usage` reads any shape's usage, `request_parts` digests a request
for a row. The order and equivalences each parser follows are data: `analyzer/rules/requests/render.toml`.
"""

from analyzer.requests.detect import detect_shape, parse_request
from analyzer.requests.model import SHAPES, Block, Breakpoint, CacheControl, Request, Segment, Shape, Usage
from analyzer.requests.parts import request_parts
from analyzer.requests.usage import read_usage

__all__ = ["SHAPES", "Block", "Breakpoint", "CacheControl", "Request", "Segment", "Shape", "Usage", "detect_shape",
           "parse_request", "read_usage", "request_parts"]
