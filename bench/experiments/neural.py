"""all-MiniLM-L6-v2 as a ranking signal, offline (see README.md).

usage: python3 neural.py MODEL_DIR DUMP.jsonl [full|static]
MODEL_DIR: the unpacked model (config.json, model.safetensors, tokenizer.json).
DUMP.jsonl: the quality example's `--dump 200` output for bench/data/retrieval-dev.
"""
import json, math, re, struct, sys
from pathlib import Path

import numpy as np
import scipy.special
from tokenizers import Tokenizer

from common import evaluate, fused, load

model_dir, dump_path = Path(sys.argv[1]), sys.argv[2]
kind = sys.argv[3] if len(sys.argv) > 3 else "full"


def load_weights():
    raw = (model_dir / "model.safetensors").read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    weights = {}
    for key, meta in header.items():
        if key == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        dtype = {"F32": np.float32, "I64": np.int64}[meta["dtype"]]
        weights[key] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dtype).reshape(meta["shape"])
    return weights


W = load_weights()


def layer_norm(x, p):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-12) * W[p + ".weight"] + W[p + ".bias"]


def linear(x, p):
    return x @ W[p + ".weight"].T + W[p + ".bias"]


def encode(ids, mask):
    """BERT forward pass (6 layers, 12 heads of 32), then mean pooling over the mask."""
    b, t = ids.shape
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:t][None] \
        + W["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, "embeddings.LayerNorm")
    neg = (1 - mask[:, None, None, :]) * -1e9
    for layer in range(6):
        p = f"encoder.layer.{layer}."
        heads = lambda name: linear(x, p + name).reshape(b, t, 12, 32).transpose(0, 2, 1, 3)
        q, k, v = heads("attention.self.query"), heads("attention.self.key"), heads("attention.self.value")
        a = q @ k.transpose(0, 1, 3, 2) / math.sqrt(32) + neg
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        c = (a @ v).transpose(0, 2, 1, 3).reshape(b, t, 384)
        x = layer_norm(x + linear(c, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + scipy.special.erf(h / math.sqrt(2)))
        x = layer_norm(x + linear(h, p + "output.dense"), p + "output.LayerNorm")
    return (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)


tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
tokenizer.no_padding()
tokenizer.enable_truncation(128)

# The model card's example: expect 0.666 / 0.105 / 0.141.
check = [tokenizer.encode(s).ids for s in ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]]
vecs = np.array([encode(np.array([ids]), np.ones((1, len(ids)), np.float32))[0] for ids in check])
vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
print("model card check:", np.round(vecs @ vecs.T, 3)[0, 1:], np.round(vecs @ vecs.T, 3)[1, 2])

tools, queries, dump = load(dump_path)


def tool_text(t):
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", t["name"]).replace("_", " ").replace("-", " ")
    return name + ": " + t.get("description", "")


def embed_full(texts):
    enc = [tokenizer.encode(t).ids for t in texts]
    order = np.argsort([len(e) for e in enc])
    out = np.zeros((len(texts), 384), np.float32)
    for s in range(0, len(texts), 64):
        idx = order[s:s + 64]
        width = max(len(enc[i]) for i in idx)
        ids = np.array([enc[i] + [0] * (width - len(enc[i])) for i in idx])
        mask = np.array([[1] * len(enc[i]) + [0] * (width - len(enc[i])) for i in idx], np.float32)
        v = encode(ids, mask)
        out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def embed_static(texts_tools, texts_queries, dims=256):
    vocab = W["embeddings.word_embeddings.weight"].shape[0]
    raw = np.zeros((vocab, 384), np.float32)
    for s in range(0, vocab, 2048):
        ids = np.array([[101, i, 102] for i in range(s, min(vocab, s + 2048))])
        raw[s:s + len(ids)] = encode(ids, np.ones(ids.shape, np.float32))
    centered = raw - raw.mean(0)
    _, _, vt = np.linalg.svd(centered[::3], full_matrices=False)
    z = centered @ vt[:dims].T
    tool_ids = [tokenizer.encode(t).ids[1:-1] for t in texts_tools]
    df = np.zeros(vocab)
    for ids in tool_ids:
        for i in set(ids):
            df[i] += 1
    idf = np.log((len(tool_ids) + 1) / (df + 1)) + 1

    def mean(ids):
        if not ids:
            return np.zeros(dims, np.float32)
        v = (z[ids] * idf[ids][:, None]).sum(0)
        return v / (np.linalg.norm(v) or 1)

    return np.array([mean(i) for i in tool_ids]), np.array([mean(tokenizer.encode(q).ids[1:-1]) for q in texts_queries])


if kind == "full":
    tool_vecs, query_vecs = embed_full([tool_text(t) for t in tools]), embed_full(queries)
else:
    tool_vecs, query_vecs = embed_static([tool_text(t) for t in tools], queries)
sims = query_vecs @ tool_vecs.T
print("engine", evaluate(dump, lambda i, r: [o for o, _ in r["hits"]]))
print(kind, "alone", evaluate(dump, lambda i, r: list(np.argsort(-sims[i])[:10])))
for lam in (0.3, 0.5, 1.0, 2.0):
    print(kind, "fused", lam, evaluate(dump, fused(dump, sims, lam)))
