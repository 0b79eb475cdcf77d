"""The model input a request becomes: its rendered prompt and token ids.

For a llama.cpp server the server itself answers (`POST /apply-template` renders the chat with the model's
own template and the request's tools; `POST /tokenize` with `add_special` and `with_pieces` gives the ids
and their text, as the completion path tokenizes), so the counts are exact for that model. Without such a
server the prompt is rendered by a stated plain template and cut into stated approximate tokens, and every
figure says it is an estimate.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from analyzer.errors import AnalyzerError

APPROX_TOKEN = re.compile(r"\s+|\w{1,4}|[^\w\s]")
REQUEST_KEYS = ("messages", "tools", "tool_choice", "chat_template_kwargs", "reasoning_effort",
                "parallel_tool_calls", "response_format")


@dataclass(frozen=True)
class Rendered:
    prompt: str
    tokens: list[int]
    pieces: list[str]


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
            prompt = self._post("/apply-template", request)["prompt"]
            data = self._post("/tokenize", {"content": prompt, "add_special": True, "with_pieces": True})
            tokens = [int(t["id"]) for t in data["tokens"]]
            pieces = [t["piece"] if isinstance(t["piece"], str) else bytes(t["piece"]).decode("utf-8", "replace")
                      for t in data["tokens"]]
            self._cache[key] = Rendered(prompt, tokens, pieces)
        return self._cache[key]

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self._client.post(self.root + path, json=payload)
        except httpx.HTTPError as exc:
            raise AnalyzerError(f"cannot reach {self.root}{path} ({type(exc).__name__}); start the engine "
                                "(`analyze engine start`) and pass its URL with --engine-url, or drop --engine-url "
                                "for estimated tokens") from None
        if response.status_code != 200:
            raise AnalyzerError(f"{self.root}{path} answered HTTP {response.status_code}; --engine-url must be a "
                                "llama.cpp server (llama-server) that offers /apply-template and /tokenize")
        data = response.json()
        if not isinstance(data, dict):
            raise AnalyzerError(f"{self.root}{path} did not answer with a JSON object; is it a llama.cpp server?")
        return data

    def close(self) -> None:
        self._client.close()


class PlainRenderer:
    """No server to ask: system, then the tools as JSON, then `<role>content` per message; approximate tokens
    (runs of up to 4 word characters, single punctuation marks, whitespace runs)."""

    exact = False
    describe = ("assumed: a plain template (system, tools as JSON, then <role>content per message) and an "
                "approximate tokenizer (≤4 word characters, punctuation, whitespace runs); not the endpoint's")

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


def _text(content: Any) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, separators=(",", ":"))
