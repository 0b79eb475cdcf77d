"""Generate a tiny random-weight llama model with a real tokenizer, for observing prompt caching.

The weights are noise (the output is gibberish), but the tokenizer is DeepSeek LLM's, copied at run time
from `models/ggml-vocab-deepseek-llm.gguf` in the cached sdist (never committed), so token counts and
cache hits are those of real text. Seeded, so every machine generates the same file.
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
    """Shape of the generated model; small enough to load in a second and prefill 4k tokens quickly."""

    name: str = "analyzer-tiny-deepseek-vocab"
    layers: int = 2
    embedding: int = 64
    heads: int = 4
    kv_heads: int = 4
    feed_forward: int = 128
    context: int = 8192
    seed: int = 12
    vocab_member: str = VOCAB_MEMBER

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


def _copy_tokenizer(writer, vocab: Path) -> int:
    """Copy every `tokenizer.*` key from the vocab-only GGUF; returns the vocabulary size."""
    import gguf

    reader = gguf.GGUFReader(str(vocab))
    size = 0
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        value = field.contents()
        main = field.types[0]
        sub = field.types[-1] if main == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, value, main, sub_type=sub)
        if key == "tokenizer.ggml.tokens":
            size = len(value)
    if not size:
        raise ValueError(f"{vocab} has no tokenizer.ggml.tokens")
    return size


def write_model(path: Path, vocab: Path, spec: ModelSpec) -> None:
    """Write the GGUF: llama hyper-parameters, the copied tokenizer, a chat template, seeded float32 weights.

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
    n_vocab = _copy_tokenizer(writer, vocab)
    writer.add_vocab_size(n_vocab)
    writer.add_chat_template(chat_template())

    rng = np.random.default_rng(spec.seed)

    def weight(*shape: int) -> np.ndarray:
        scale = np.float64(1.0 / np.sqrt(shape[-1]))
        return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float32)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    e, kv = spec.embedding, spec.kv_heads * head_dim
    writer.add_tensor("token_embd.weight", weight(n_vocab, e))
    for i in range(spec.layers):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", ones(e))
        writer.add_tensor(f"blk.{i}.attn_q.weight", weight(e, e))
        writer.add_tensor(f"blk.{i}.attn_k.weight", weight(kv, e))
        writer.add_tensor(f"blk.{i}.attn_v.weight", weight(kv, e))
        writer.add_tensor(f"blk.{i}.attn_output.weight", weight(e, e))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", ones(e))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weight(spec.feed_forward, e))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weight(spec.feed_forward, e))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weight(e, spec.feed_forward))
    writer.add_tensor("output_norm.weight", ones(e))
    writer.add_tensor("output.weight", weight(n_vocab, e))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
