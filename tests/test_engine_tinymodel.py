"""The generated engine model: reproducible, float32 only, tokenizer copied from the vocab file."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import gguf
import numpy as np
import pytest

from analyzer.engine.tinymodel import ModelSpec, chat_template, write_model

TOKENS = ["<s>", "</s>", "a", "b", "ab", "Hello", " world"]


@pytest.fixture
def vocab(tmp_path: Path) -> Path:
    """A vocab-only GGUF shaped like llama.cpp's models/ggml-vocab-*.gguf (no tensors, tokenizer.* keys)."""
    path = tmp_path / "ggml-vocab-fixture.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(TOKENS)
    w.add_token_types([gguf.TokenType.CONTROL, gguf.TokenType.CONTROL] + [gguf.TokenType.NORMAL] * 5)
    w.add_token_merges(["a b"])
    w.add_bos_token_id(0)
    w.add_eos_token_id(1)
    w.add_add_bos_token(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_model_is_reproducible_float32_with_the_copied_tokenizer(tmp_path: Path, vocab: Path) -> None:
    spec = ModelSpec(layers=2, embedding=32, heads=4, kv_heads=2, feed_forward=48, context=512,
                     answer=("Hello", " world"))
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    write_model(a, vocab, spec)
    write_model(b, vocab, spec)
    assert sha(a) == sha(b), "same spec and seed must give the same bytes"
    c = tmp_path / "c.gguf"
    write_model(c, vocab, replace(spec, seed=spec.seed + 1))
    assert sha(c) != sha(a)

    reader = gguf.GGUFReader(str(a))
    assert {t.tensor_type for t in reader.tensors} == {gguf.GGMLQuantizationType.F32}
    assert all(np.asarray(t.data).dtype == np.float32 for t in reader.tensors)
    names = {t.name for t in reader.tensors}
    assert {"token_embd.weight", "output.weight", "blk.1.ffn_down.weight"} <= names and "blk.2.attn_q.weight" \
        not in names
    shapes = {t.name: [int(x) for x in t.shape] for t in reader.tensors}
    assert shapes["token_embd.weight"] == [32, len(TOKENS)]  # ggml order: [n_embd, n_vocab]
    assert shapes["blk.0.attn_k.weight"] == [32, 16]  # 2 kv heads × head_dim 8
    f = reader.fields
    assert f["tokenizer.ggml.tokens"].contents() == TOKENS
    assert f["tokenizer.ggml.merges"].contents() == ["a b"]
    assert f["tokenizer.ggml.bos_token_id"].contents() == 0
    assert f["llama.block_count"].contents() == 2 and f["llama.vocab_size"].contents() == len(TOKENS)
    assert f["tokenizer.chat_template"].contents() == chat_template()


def test_chat_template_puts_tools_between_system_and_conversation() -> None:
    from jinja2 import Environment

    env = Environment()
    env.filters["tojson"] = lambda v: __import__("json").dumps(v, sort_keys=True)
    text = env.from_string(chat_template()).render(
        messages=[{"role": "system", "content": "SYS"}, {"role": "user", "content": "Q1"}],
        tools=[{"type": "function", "function": {"name": "grep_tool"}}], add_generation_prompt=True)
    assert text.index("SYS") < text.index("grep_tool") < text.index("Q1")
    assert text.endswith("Assistant:")


def next_token_table(path: Path) -> np.ndarray:
    """What the model predicts after each token, computed from its tensors: with the layers' outputs zero, the
    last hidden state is the token's embedding, RMS-normed (norm weights are ones), times the output matrix."""
    reader = gguf.GGUFReader(str(path))
    tensors = {t.name: np.asarray(t.data, dtype=np.float64) for t in reader.tensors}
    assert not tensors["blk.0.attn_output.weight"].any() and not tensors["blk.1.ffn_down.weight"].any()
    embd, output = tensors["token_embd.weight"], tensors["output.weight"]
    normed = embd / np.sqrt((embd ** 2).mean(axis=1, keepdims=True) + 1e-6)
    logits = normed @ output.T
    top = np.sort(logits, axis=1)
    margin = top[:, -1] - top[:, -2]
    assert margin.min() > 40, "the intended next token must win at any sampling temperature an app sends"
    return logits.argmax(axis=1)


def test_every_answer_is_the_fixed_chain_then_end_of_sequence(tmp_path: Path, vocab: Path) -> None:
    spec = ModelSpec(layers=2, embedding=32, heads=4, kv_heads=2, feed_forward=48, context=512,
                     answer=("Hello", " world"))
    path = tmp_path / "m.gguf"
    write_model(path, vocab, spec)
    nxt = next_token_table(path)
    hello, world, eos = TOKENS.index("Hello"), TOKENS.index(" world"), 1
    for token in range(len(TOKENS)):  # whatever the prompt ends with, the reply is "Hello world" then EOS
        if token not in (hello, world):
            assert nxt[token] == hello, TOKENS[token]
    assert nxt[hello] == world and nxt[world] == eos
    assert spec.answer_tokens == 3


def test_answer_tokens_must_be_in_the_vocabulary_and_distinct(tmp_path: Path, vocab: Path) -> None:
    for answer in (("Hello", "missing"), ("a", "a"), ()):
        with pytest.raises(ValueError):
            write_model(tmp_path / "x.gguf", vocab, ModelSpec(embedding=32, heads=4, kv_heads=2, feed_forward=48,
                                                              context=512, answer=answer))


def test_default_spec_holds_a_coding_agents_prompt_per_slot() -> None:
    spec = ModelSpec()
    assert spec.context >= 65536, "the server caps each slot to the model's training context"
    assert spec.kv_bytes_per_token == 512  # 2 layers × (K + V) × 4 KV heads × 16 dims × 2 bytes (f16)
