"""The model input a request becomes: its rendered prompt and token ids.

For a llama.cpp server the server itself answers (`POST /apply-template` renders the chat with the model's
own template and the request's tools; `POST /tokenize` with `add_special` and `with_pieces` gives the ids
and their text, as the completion path tokenizes), so the counts are exact for that model. Without such a
server the prompt is rendered by a stated plain template and cut into stated approximate tokens, and every
figure says it is an estimate.
"""

from __future__ import annotations

import bisect
import json
import re
import zlib
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from analyzer.errors import AnalyzerError
from analyzer.requests.model import Request

APPROX_TOKEN = re.compile(r"\s+|\w{1,4}|[^\w\s]")
GENERATION_PROMPT = "<message:assistant>"
REQUEST_KEYS = ("messages", "tools", "tool_choice", "chat_template_kwargs", "reasoning_effort",
                "parallel_tool_calls", "response_format")


@dataclass(frozen=True)
class Rendered:
    prompt: str
    tokens: list[int]
    pieces: list[str]
    block_ends: tuple[int, ...] = ()   # token offset where each content block of the request ends, in order


class RenderError(AnalyzerError):
    """The engine answered, but could not render this request (its own error is the message)."""


class Renderer(Protocol):
    describe: str      # which template and tokenizer, in a phrase (printed with every result)
    exact: bool

    def render(self, body: dict[str, Any]) -> Rendered: ...


class LlamaServerRenderer:
    """The llama.cpp server's own template and tokenizer (`/apply-template`, `/tokenize`)."""

    exact = True

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout_s: float = 60.0) -> None:
        root = base_url.rstrip("/")
        self.root = root[:-3] if root.endswith("/v1") else root
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers, trust_env=False)
        self.describe = f"the server's own chat template and tokenizer ({self.root}/apply-template, /tokenize)"
        self._cache: dict[str, Rendered] = {}

    def render(self, body: dict[str, Any]) -> Rendered:
        request = {k: body[k] for k in REQUEST_KEYS if k in body}
        key = json.dumps(request, sort_keys=True, ensure_ascii=False)
        if key not in self._cache:
            answer = self._post("/apply-template", request)
            prompt = answer.get("prompt")
            if not isinstance(prompt, str):
                raise RenderError(f"{self.root}/apply-template answered without a \"prompt\" ({_said(answer)}); "
                                  "--engine-url must be a llama.cpp server (llama-server)")
            data = self._post("/tokenize", {"content": prompt, "add_special": True, "with_pieces": True})
            tokens, pieces = [], []
            for t in _token_list(data, self.root):
                if not isinstance(t, dict) or not isinstance(t.get("id"), int) or "piece" not in t:
                    raise RenderError(f"{self.root}/tokenize answered a token without an id and piece ({t!r:.80}); "
                                      "--engine-url must be a llama.cpp server (llama-server)")
                piece = t["piece"]
                tokens.append(int(t["id"]))
                pieces.append(piece if isinstance(piece, str) else bytes(piece).decode("utf-8", "replace"))
            self._cache[key] = Rendered(prompt, tokens, pieces)
        return self._cache[key]

    def model(self) -> str | None:
        """The file name of the model the server runs (/props model_path), to check it is the log's."""
        try:
            response = self._client.get(self.root + "/props")
            data = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        path = data.get("model_path") if isinstance(data, dict) else None
        return path.replace("\\", "/").rsplit("/", 1)[-1] if isinstance(path, str) and path else None

    def tokenize(self, text: str) -> list[int]:
        """The ids of `text` alone (no special tokens): what the model emits when it writes that text."""
        data = self._post("/tokenize", {"content": text, "add_special": False})
        out = []
        for t in _token_list(data, self.root):
            value = t.get("id") if isinstance(t, dict) else t
            if not isinstance(value, int):
                raise RenderError(f"{self.root}/tokenize answered a token that is not an id ({t!r:.80})")
            out.append(value)
        return out

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self._client.post(self.root + path, json=payload)
        except httpx.HTTPError as exc:
            raise AnalyzerError(f"cannot reach {self.root}{path} ({type(exc).__name__}); start the engine "
                                "(`analyze engine start`) and pass its URL with --engine-url, or drop --engine-url "
                                "for estimated tokens") from None
        # a server that answers but cannot render (no such endpoint, another kind of server, its own error) is a
        # RenderError: `prefix` and `cost` quote it and fall back to estimated tokens
        if response.status_code == 404:
            raise RenderError(f"{self.root}{path} answered HTTP 404: {_server_error(response)}; --engine-url must be "
                              "a llama.cpp server (llama-server) that offers /apply-template and /tokenize")
        if response.status_code != 200:
            raise RenderError(f"{self.root}{path} answered HTTP {response.status_code}: {_server_error(response)}")
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise RenderError(f"{self.root}{path} did not answer with a JSON object ({response.text[:80]!r}); "
                              "--engine-url must be a llama.cpp server (llama-server)")
        return data

    def close(self) -> None:
        self._client.close()


class PlainRenderer:
    """No server to ask: the request model's segments in their order, `<kind:role>` then each block's text;
    approximate tokens (runs of up to 4 word characters, single punctuation marks, whitespace runs)."""

    exact = False
    describe = ("assumed: a plain template (the request's segments in the endpoint's order, <kind:role> then each "
                "block's text, then <message:assistant>) and an approximate tokenizer (≤4 word characters, "
                "punctuation, whitespace runs); not the endpoint's")

    def render_request(self, request: Request) -> Rendered:
        prompt, pieces, ends = "", [], []
        for seg in request.segments:
            for i, block in enumerate(seg.blocks):
                head = f"<{seg.kind}:{seg.role or seg.name or ''}>" if i == 0 else "\n"
                part = head + block.text
                prompt += part
                pieces += APPROX_TOKEN.findall(part)
                ends.append(len(pieces))
        prompt += GENERATION_PROMPT   # as the assistant turn that answers it will render: a later turn extends it
        pieces += APPROX_TOKEN.findall(GENERATION_PROMPT)
        return Rendered(prompt, [zlib.crc32(p.encode("utf-8")) for p in pieces], pieces, tuple(ends))

    def render(self, body: dict[str, Any]) -> Rendered:
        parts = []
        for m in body.get("messages") or []:
            if isinstance(m, dict) and m.get("role") in ("system", "developer"):
                parts.append(f"<{m['role']}>{_text(m.get('content'))}")
        if body.get("tools"):
            parts.append("<tools>" + json.dumps(body["tools"], ensure_ascii=False, separators=(",", ":")))
        for m in body.get("messages") or []:
            if isinstance(m, dict) and m.get("role") not in ("system", "developer"):
                rest = {k: v for k, v in m.items() if k not in ("role", "content")}
                extra = json.dumps(rest, ensure_ascii=False, separators=(",", ":")) if rest else ""
                parts.append(f"<{m.get('role')}>{_text(m.get('content'))}{extra}")
        prompt = "".join(parts) + "<assistant>"
        pieces = APPROX_TOKEN.findall(prompt)
        return Rendered(prompt, [zlib.crc32(p.encode("utf-8")) for p in pieces], pieces)  # equal text, equal id


def render_request(renderer: Renderer, request: Request, body: dict[str, Any]) -> Rendered:
    """`request` as `renderer` renders it: the plain renderer reads the segments; a server renders the chat
    body the engine would render (llama.cpp converts Anthropic and Responses bodies to chat internally,
    `analyzer.requests.llamacpp_chat.to_chat_body` does the same here). Block ends are located in the
    prompt so breakpoints and block counts map to token positions."""
    if isinstance(renderer, PlainRenderer):
        return renderer.render_request(request)
    chat = body if request.shape == "chat" else _to_chat(body, request)
    out = renderer.render(chat)
    return Rendered(out.prompt, out.tokens, out.pieces, block_token_ends(request, out))


def _to_chat(body: dict[str, Any], request: Request) -> dict[str, Any]:
    from analyzer.requests.llamacpp_chat import to_chat_body

    try:
        return to_chat_body(body, request.shape)
    except AnalyzerError as exc:   # the server would refuse it the same way (ConversionError: its own message)
        raise RenderError(f"the engine's {request.shape} → chat conversion refuses it: {exc}") from None


def block_token_ends(request: Request, rendered: Rendered) -> tuple[int, ...]:
    """Token offset after each content block: the block's text found in the prompt after the previous one
    (a block the template rewrote is placed where the previous one ended)."""
    starts, pos = [], 0
    for piece in rendered.pieces:
        starts.append(pos)
        pos += len(piece)
    out, cursor = [], 0
    for seg in request.segments:
        for block in seg.blocks:
            text = block.text.strip()
            at = rendered.prompt.find(text, cursor) if text else -1
            if at >= 0:
                cursor = at + len(text)
            out.append(bisect.bisect_left(starts, cursor))
    return tuple(out)


def _token_list(data: dict[str, Any], root: str) -> list[Any]:
    tokens = data.get("tokens")
    if not isinstance(tokens, list):
        raise RenderError(f"{root}/tokenize answered without a \"tokens\" list ({_said(data)}); --engine-url must "
                          "be a llama.cpp server (llama-server)")
    return tokens


def _said(data: dict[str, Any]) -> str:
    """What a server answered instead: its own error message when it gave one, else the answer's keys."""
    err = data.get("error")
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return f"its error: {err['message']}"
    if isinstance(err, str):
        return f"its error: {err}"
    return "it answered the keys " + (", ".join(sorted(map(str, data))[:8]) or "none")


def _server_error(response: httpx.Response) -> str:
    """The server's own error message (llama-server: {"error": {"message": …}})."""
    try:
        data = response.json()
    except ValueError:
        return response.text[:300] or "(no body)"
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return err["message"]
    if isinstance(err, str):
        return err
    return json.dumps(data)[:300]


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, separators=(",", ":"))
