"""Test stand-ins for the engine's renderer, so prefix and cost tests know every token position by hand."""

from __future__ import annotations

from typing import Any

from analyzer.prefix.tokens import PlainRenderer, Rendered


class CharServer:
    """An exact stand-in for a llama.cpp server: one token per character, and `tokenize` for the answer."""

    exact = True
    describe = "one token per character (test stand-in for the server's own tokenizer)"

    def render(self, body: dict[str, Any]) -> Rendered:
        prompt = PlainRenderer().render(body).prompt
        return Rendered(prompt, [ord(c) for c in prompt], list(prompt))

    def tokenize(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def model(self) -> str | None:
        return None
