"""An independent check: recompute the forward pass from the *exported* parameters with plain Python loops.

Nothing here calls analyzer.attention's math; it reads the `.npz` the library exports (what `analyze attention
--export-params` writes, tests/test_attention_cli.py) and follows the contract in
`analyzer/attention/params.py` (RMSNorm eps 1e-6, RoPE pairs (2p, 2p+1) with base 10000, query head h reads KV
head h // (heads // kv_heads), SiLU MLP, no biases).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from analyzer.attention import AttentionModel, ModelConfig

Vec = list[float]
Mat = list[list[float]]


def matvec(x: Vec, w: Mat) -> Vec:
    return [sum(x[i] * w[i][j] for i in range(len(x))) for j in range(len(w[0]))]


def rms(x: Vec, g: Vec) -> Vec:
    scale = math.sqrt(sum(v * v for v in x) / len(x) + 1e-6)
    return [x[i] / scale * g[i] for i in range(len(x))]


def rotate(vec: Vec, t: int) -> Vec:
    out = list(vec)
    hd = len(vec)
    for p in range(hd // 2):
        theta = t * 10000.0 ** (-2.0 * p / hd)
        c, s = math.cos(theta), math.sin(theta)
        out[2 * p] = vec[2 * p] * c - vec[2 * p + 1] * s
        out[2 * p + 1] = vec[2 * p] * s + vec[2 * p + 1] * c
    return out


def plain_forward(params: dict[str, Mat | Vec], cfg: dict, tokens: list[int],
                  window: int = 0) -> tuple[list[Vec], list[list]]:
    """Returns per-position logits and, per layer, the K vectors [position][kv_head] after RoPE. With a window W
    the query at t reads positions t-W+1..t (W keys, itself included)."""
    heads, kv_heads, hd = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    group = heads // kv_heads
    xs = [list(params["embed"][tok]) for tok in tokens]
    keys_by_layer = []
    for i in range(cfg["layers"]):
        qs, ks, vs = [], [], []
        for t, x in enumerate(xs):
            a = rms(x, params[f"layers.{i}.attn_norm"])
            q, k, v = (matvec(a, params[f"layers.{i}.{w}"]) for w in ("wq", "wk", "wv"))
            qs.append([rotate(q[h * hd:(h + 1) * hd], t) for h in range(heads)])
            ks.append([rotate(k[h * hd:(h + 1) * hd], t) for h in range(kv_heads)])
            vs.append([v[h * hd:(h + 1) * hd] for h in range(kv_heads)])
        keys_by_layer.append(ks)
        new = []
        for t, x in enumerate(xs):
            concat: Vec = []
            for h in range(heads):
                g = h // group
                keys = range(max(0, t - window + 1) if window else 0, t + 1)
                scores = [sum(qs[t][h][d] * ks[j][g][d] for d in range(hd)) / math.sqrt(hd) for j in keys]
                top = max(scores)
                e = [math.exp(s - top) for s in scores]
                z = sum(e)
                concat += [sum(e[i] / z * vs[j][g][d] for i, j in enumerate(keys)) for d in range(hd)]
            attn = matvec(concat, params[f"layers.{i}.wo"])
            x1 = [x[c] + attn[c] for c in range(len(x))]
            up = matvec(rms(x1, params[f"layers.{i}.mlp_norm"]), params[f"layers.{i}.w1"])
            down = matvec([z / (1.0 + math.exp(-z)) for z in up], params[f"layers.{i}.w2"])
            new.append([x1[c] + down[c] for c in range(len(x1))])
        xs = new
    logits = [matvec(rms(x, params["final_norm"]), params["unembed"]) for x in xs]
    return logits, keys_by_layer


def _export(path: Path, **sizes: int) -> None:
    """The parameters of the model these sizes describe (seeded like the experiments), written to `path`."""
    from analyzer.attention.params import export_params, init_params

    config = ModelConfig(**sizes)  # type: ignore[arg-type]
    export_params(config, init_params(config), path)


def _load(path: Path) -> tuple[dict, dict]:
    with np.load(path) as data:
        cfg = json.loads(str(data["__config__"]))
        params = {k: data[k].tolist() for k in data.files if k != "__config__"}
    return cfg, params


@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_exported_params_recomputed_by_plain_loops_agree(tmp_path: Path, kv_heads: int) -> None:
    path = tmp_path / "params.npz"
    _export(path, layers=2, d_model=16, heads=4, kv_heads=kv_heads, head_dim=4, d_ff=24, vocab=20, seed=5)
    cfg, params = _load(path)
    assert cfg["kv_heads"] == kv_heads and len(params["layers.0.wk"][0]) == kv_heads * 4
    tokens = [3, 17, 0, 9, 9, 12, 4]
    logits, keys = plain_forward(params, cfg, tokens)

    model = AttentionModel(ModelConfig(**cfg))
    cached = model.forward(tokens[:4])
    step = model.forward(tokens[4:], cached.cache)
    full = model.recompute(tokens)
    assert np.abs(full.logits - np.array(logits)).max() < 1e-10
    assert np.abs(step.logits - np.array(logits[4:])).max() < 1e-10
    for i, layer_keys in enumerate(keys):
        mine = np.array(layer_keys).transpose(1, 0, 2)  # (kv_heads, positions, head_dim)
        assert np.abs(step.cache.k[i] - mine).max() < 1e-10


def test_plain_loop_reference_is_sensitive_to_the_weights(tmp_path: Path) -> None:
    """Guard against a vacuous check: perturbing one exported weight must move the plain-loop logits."""
    path = tmp_path / "params.npz"
    _export(path, d_model=8, heads=2, kv_heads=1, head_dim=4, d_ff=8, vocab=10)
    cfg, params = _load(path)
    before, _ = plain_forward(params, cfg, [1, 2, 3])
    params["layers.1.wk"][0][0] += 0.5
    after, _ = plain_forward(params, cfg, [1, 2, 3])
    assert before[0] == after[0]  # position 0 attends only to itself: softmax of one score is 1 whatever K is
    assert max(abs(a - b) for a, b in zip(before[2], after[2], strict=True)) > 1e-6


@pytest.mark.parametrize("window", [1, 2, 3])
def test_windowed_model_agrees_with_plain_loops(tmp_path: Path, window: int) -> None:
    """The windowed mask, recomputed from the exported weights by loops that know nothing of the module."""
    path = tmp_path / "params.npz"
    _export(path, d_model=16, heads=4, kv_heads=2, head_dim=4, d_ff=24, vocab=20, seed=3)
    cfg, params = _load(path)
    tokens = [3, 17, 0, 9, 9, 12, 4]
    logits, _ = plain_forward(params, cfg, tokens, window)
    cfg["window"] = window
    model = AttentionModel(ModelConfig(**cfg))
    assert np.abs(model.recompute(tokens).logits - np.array(logits)).max() < 1e-10
    full, _ = plain_forward(params, cfg, tokens)
    assert max(abs(a - b) for a, b in zip(full[-1], logits[-1], strict=True)) > 1e-6  # the window matters here
