"""Query-side adaptation (issue 26, item 3): a linear map on the frozen query vectors,
q' = normalize(q + A q), trained so that requests land nearer their tools' vectors, judged
leave-one-source-out.

  python bench/experiments/query_adapter.py DUMP [--lambda L] [--epochs N] [--rank R] [--tau T]
      [--width W] [--lr LR] [--tag TAG] [--group SOURCE,SOURCE]

DUMP is fusion_dump's folder with vec/ from `clause_vectors MODEL DATA DUMP/vec --product`.
Training: per query, a softmax over the lexical top W − 8 (W 40) plus its gold tools of
cos(q', t) / tau (the gold tools the targets, uniformly), each source weighted equally (as the
macro is), L2 on A, full-batch Adam for a fixed number of epochs from A = 0 (deterministic).
A is full (384 x 384) or, with --rank R, U V^T. The whole query's vector and each clause's
are mapped. Writes DUMP/adapter-insample/ (A trained on all seven) and DUMP/adapter-loso/ (each
query's cosines from the A trained without its source), each a signals.jsonl with the cosines
replaced, for `node bench/experiments/fusion.mjs --dump DIR --fixed`.
Needs numpy only.
"""
import json
import os
import sys

import numpy as np

DIM = 384


def load(dump):
    raw = np.fromfile(os.path.join(dump, "tools.qvec"), dtype=np.uint8).reshape(-1, 4 + DIM)
    scale = raw[:, :4].copy().view(np.float32)[:, 0]
    tools = raw[:, 4:].view(np.int8).astype(np.float32) * scale[:, None]
    whole = np.fromfile(os.path.join(dump, "vec", "queries-joint.f32"), dtype=np.float32).reshape(-1, DIM)
    clauses = np.fromfile(os.path.join(dump, "vec", "clauses-joint.f32"), dtype=np.float32).reshape(-1, DIM)
    index = json.load(open(os.path.join(dump, "vec", "clauses-joint.json")))
    rows = [json.loads(l) for l in open(os.path.join(dump, "signals.jsonl")) if l.strip()]
    return tools, whole, clauses, index, rows


def pools(rows, width):
    """Per query: the lexical top list plus the gold tools, padded to `width`; mask; targets."""
    n = len(rows)
    idx = np.zeros((n, width), dtype=np.int64)
    mask = np.zeros((n, width), dtype=bool)
    target = np.zeros((n, width), dtype=np.float32)
    for q, r in enumerate(rows):
        members = list(dict.fromkeys(r["lexTop"][: width - 8] + r["gold"]))[:width]
        idx[q, : len(members)] = members
        mask[q, : len(members)] = True
        gold = set(r["gold"])
        hits = [i for i, o in enumerate(members) if o in gold]
        for i in hits:
            target[q, i] = 1.0 / len(hits)
    return idx, mask, target


def train(tools, whole, idx, mask, target, weights, lam, epochs, rank, tau, lr=1e-3):
    active = weights > 0
    Q = whole[active]
    P = tools[idx[active]].astype(np.float32)  # n x width x DIM
    M = mask[active]
    Y = target[active]
    w = weights[active][:, None]
    rng = np.random.default_rng(26)
    if rank:
        U = np.zeros((DIM, rank), dtype=np.float64)
        V = rng.normal(0, 0.01, (DIM, rank))
        params = [U, V]
    else:
        params = [np.zeros((DIM, DIM), dtype=np.float64)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t in range(1, epochs + 1):
        A = params[0] @ params[1].T if rank else params[0]
        Qp = (Q + Q @ A.T).astype(np.float32)
        logits = np.matmul(P, Qp[:, :, None])[:, :, 0] / tau
        logits = np.where(M, logits, -1e9)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits) * M
        p /= p.sum(axis=1, keepdims=True)
        G = np.matmul(((p - Y) * w)[:, None, :], P)[:, 0, :] / tau  # dL/dq'
        dA = G.T @ Q + 2 * lam * A
        grads = [dA @ params[1], dA.T @ params[0]] if rank else [dA]
        for k, g in enumerate(grads):
            m[k] = 0.9 * m[k] + 0.1 * g
            v[k] = 0.999 * v[k] + 0.001 * g * g
            params[k] -= lr * (m[k] / (1 - 0.9**t)) / (np.sqrt(v[k] / (1 - 0.999**t)) + 1e-8)
    return params[0] @ params[1].T if rank else params[0]


def mapped(vectors, A):
    out = vectors + vectors @ A.T
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def rewrite(rows, tools, whole, clauses, index, A_of, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "signals.jsonl"), "w") as f:
        for q, r in enumerate(rows):
            A = A_of(r["set"])
            w = mapped(whole[q : q + 1], A)[0]
            first, count = index[q]
            cs = mapped(clauses[first : first + count], A) if count else np.zeros((0, DIM))
            pool = []
            for item in r["pool"]:
                t = tools[item[0]]
                item = list(item)
                item[5] = round(float(t @ w), 4)
                item[6] = [round(float(t @ c), 4) for c in cs]
                pool.append(item)
            r = dict(r, pool=pool)
            f.write(json.dumps(r) + "\n")
    for name in ("tool-ids.json",):
        src = os.path.join(os.path.dirname(out_dir), name)
        dst = os.path.join(out_dir, name)
        if not os.path.exists(dst):
            os.symlink(src, dst)


def main():
    dump = sys.argv[1]
    opt = lambda name, d: type(d)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else d
    lam, epochs, rank, tau = opt("--lambda", 0.01), opt("--epochs", 60), opt("--rank", 0), opt("--tau", 0.05)
    lr = opt("--lr", 3e-3)
    tag = opt("--tag", "")
    tools, whole, clauses, index, rows = load(dump)
    sets = [r["set"] for r in rows]
    sources = sorted(set(sets))
    counts = {s: sets.count(s) for s in sources}
    idx, mask, target = pools(rows, opt("--width", 40))

    # --group a,b: sources that share a catalog (metatool and metatool-multi rank the same 199
    # plugins with queries from one generator) are held out together, or the map learns the
    # held-out source's tools from its sibling.
    group = set(opt("--group", "").split(",")) - {""}

    def weights_without(held):
        out = {held} | (group if held in group else set())
        kept = [s for s in sources if s not in out]
        return np.array([0.0 if s in out else 1.0 / counts[s] / len(kept) for s in sets])

    A_all = train(tools, whole, idx, mask, target, weights_without(None), lam, epochs, rank, tau, lr)
    print(f"all seven: |A| = {np.linalg.norm(A_all):.3f}", file=sys.stderr)
    rewrite(rows, tools, whole, clauses, index, lambda s: A_all, os.path.join(dump, f"adapter{tag}-insample"))
    folds = {}
    for held in sources:
        folds[held] = train(tools, whole, idx, mask, target, weights_without(held), lam, epochs, rank, tau, lr)
        print(f"without {held}: |A| = {np.linalg.norm(folds[held]):.3f}", file=sys.stderr)
    rewrite(rows, tools, whole, clauses, index, lambda s: folds[s], os.path.join(dump, f"adapter{tag}-loso"))


if __name__ == "__main__":
    main()
