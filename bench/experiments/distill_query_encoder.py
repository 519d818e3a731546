"""A half-depth query encoder distilled from all-MiniLM-L6-v2 (issue 24, item 5), offline.

Item 5 asks for a new query's vector in <= 1.5 ms median on one core. The int8 dense layers of
the six-layer model already run near this core's peak and take about 1.3 ms of a median query
(README, "The encoder's attention and quantization"), so the only way down is fewer products per
query: a three-layer student for queries only, trained to land where the six-layer teacher puts
the same text, so that the catalog's tool vectors (the teacher's) stay as they are.

  python bench/experiments/distill_query_encoder.py MODEL_DIR DATA_DIR [--holdout SET,SET]
      [--layers 0,2,5] [--epochs 3] [--lr 3e-4] [--token 1.0] [--bs 32] [--out FILE]

MODEL_DIR: npm/model-minilm/model. DATA_DIR: bench/data/retrieval-dev.
The student starts from the teacher's embeddings (frozen, so a shipped student would share them)
and the teacher layers named by --layers. It trains on texts the dev data holds, never on its
labels: each tool's embedded text (name words + description, 32 pieces, as the engine embeds it)
and each query. The loss is 1 - cos(student, teacher) of the mean-pooled, normalized vectors plus
--token times the mean squared difference of the last hidden states, token by token.
--holdout leaves sets out of training: their queries, and the tools of the servers their gold
tools belong to; the score lines report those sets apart ("held").
Scored here: dense-only nDCG@10 per set, each query against all 13,163 teacher tool vectors
(f32, PyTorch), the student's query vector against the teacher's; the lines print the change.
Needs torch and transformers (pip); 4.5 to 6.5 minutes of 2-core CPU an epoch. Nothing here ships.
"""
import argparse
import copy
import json
import math
import random
import time

import torch
from transformers import BertModel, BertTokenizerFast

from common import tool_text

ap = argparse.ArgumentParser()
ap.add_argument("model_dir")
ap.add_argument("data_dir")
ap.add_argument("--holdout", default="")
ap.add_argument("--layers", default="0,2,5")
ap.add_argument("--epochs", type=int, default=3)
ap.add_argument("--lr", type=float, default=3e-4)
ap.add_argument("--token", type=float, default=1.0)
ap.add_argument("--bs", type=int, default=32)
ap.add_argument("--out", default="")
args = ap.parse_args()
random.seed(0)
torch.manual_seed(0)
tok = BertTokenizerFast(f"{args.model_dir}/vocab.txt", do_lower_case=True)


def mean_pool(h, mask):
    m = mask.unsqueeze(-1).float()
    return torch.nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1), dim=-1)


def pooled(model, texts, max_len, bs=128):
    model.eval()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = [None] * len(texts)
    with torch.no_grad():
        for s in range(0, len(order), bs):
            idx = order[s : s + bs]
            enc = tok([texts[i] for i in idx], padding=True, truncation=True, max_length=max_len, return_tensors="pt")
            v = mean_pool(model(**enc).last_hidden_state, enc["attention_mask"])
            for j, i in enumerate(idx):
                out[i] = v[j]
    return torch.stack(out)


def ndcg_at10(qv, tv, queries, ids):
    pos = {t: i for i, t in enumerate(ids)}
    top = (qv @ tv.T).topk(10, dim=1).indices.tolist()
    per = {}
    for qi, q in enumerate(queries):
        gold = {pos[g] for g in q["gold"] if g in pos}
        dcg = sum(1 / math.log2(r + 2) for r, t in enumerate(top[qi]) if t in gold)
        idcg = sum(1 / math.log2(r + 2) for r in range(min(len(gold), 10)))
        per.setdefault(q["set"], []).append(dcg / idcg if idcg else 0)
    return {k: 100 * sum(v) / len(v) for k, v in per.items()}


tools = [json.loads(line) for line in open(f"{args.data_dir}/catalog.jsonl")]
queries = [json.loads(line) for line in open(f"{args.data_dir}/queries.jsonl")]
ids = [t["id"] for t in tools]
teacher = BertModel.from_pretrained(args.model_dir)
teacher_tools = pooled(teacher, [tool_text(t) for t in tools], 32)
teacher_queries = pooled(teacher, [q["query"] for q in queries], 256)
base = ndcg_at10(teacher_queries, teacher_tools, queries, ids)
print("teacher", {k: round(v, 2) for k, v in base.items()}, "macro %.2f" % (sum(base.values()) / len(base)), flush=True)

hold = {s for s in args.holdout.split(",") if s}
server = lambda i: ":".join(i.split(":")[:2])
held_servers = {server(g) for q in queries if q["set"] in hold for g in q["gold"]}
texts = [(tool_text(t), 32, teacher_tools[i]) for i, t in enumerate(tools) if server(t["id"]) not in held_servers]
texts += [(q["query"], 256, teacher_queries[i]) for i, q in enumerate(queries) if q["set"] not in hold]
print("training texts", len(texts), "held out", sorted(hold), flush=True)

keep = [int(x) for x in args.layers.split(",")]
config = copy.deepcopy(teacher.config)
config.num_hidden_layers = len(keep)
student = BertModel(config, add_pooling_layer=False)
student.embeddings.load_state_dict(teacher.embeddings.state_dict())
for j, layer in enumerate(keep):
    student.encoder.layer[j].load_state_dict(teacher.encoder.layer[layer].state_dict())
for p in student.embeddings.parameters():
    p.requires_grad = False


def report(tag):
    qv = pooled(student, [q["query"] for q in queries], 256)
    r = ndcg_at10(qv, teacher_tools, queries, ids)
    cos = (qv * teacher_queries).sum(-1)
    delta = {k: round(r[k] - base[k], 2) for k in r}
    held = sum(r[k] - base[k] for k in hold) / max(1, len(hold))
    macro = sum(r.values()) / len(r) - sum(base.values()) / len(base)
    print(tag, "cos mean %.4f p5 %.4f" % (cos.mean(), cos.quantile(0.05)), delta, "macro Δ %.2f held Δ %.2f" % (macro, held), flush=True)


report("start")
optimizer = torch.optim.AdamW([p for p in student.parameters() if p.requires_grad], lr=args.lr, weight_decay=0.01)
order = sorted(range(len(texts)), key=lambda i: len(texts[i][0]))
batches = [order[s : s + args.bs] for s in range(0, len(order), args.bs)]
steps = args.epochs * len(batches)
# 100 steps of warm-up, then linear decay to zero.
schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1, (s + 1) / 100) * max(0.0, 1 - s / steps))
for epoch in range(args.epochs):
    random.shuffle(batches)
    student.train()
    started, total = time.time(), 0.0
    for b in batches:
        enc = tok([texts[i][0] for i in b], padding=True, truncation=True, max_length=max(texts[i][1] for i in b), return_tensors="pt")
        h = student(**enc).last_hidden_state
        v = mean_pool(h, enc["attention_mask"])
        loss = (1 - (v * torch.stack([texts[i][2] for i in b])).sum(-1)).mean()
        if args.token > 0:
            with torch.no_grad():
                th = teacher(**enc).last_hidden_state
            m = enc["attention_mask"].unsqueeze(-1).float()
            loss = loss + args.token * (((h - th) ** 2) * m).sum() / (m.sum() * h.shape[-1])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        total += loss.item()
    print("epoch", epoch, "loss %.4f" % (total / len(batches)), "%.0f s" % (time.time() - started), flush=True)
    report(f"epoch {epoch}")
if args.out:
    torch.save(student.state_dict(), args.out)
