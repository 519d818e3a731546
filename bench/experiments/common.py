"""Shared by the offline experiments: the dev data and the quality example's metrics."""
import json, math
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "bench/data/retrieval-dev"


def load(dump_path):
    """Tools in id order (the dump's ordinals), query texts, and the dump rows."""
    tools = sorted((json.loads(l) for l in open(DATA / "catalog.jsonl")), key=lambda t: t["id"])
    queries = [json.loads(l)["query"] for l in open(DATA / "queries.jsonl")]
    dump = [json.loads(l) for l in open(dump_path)]
    return tools, queries, dump


def evaluate(dump, rank):
    """Per-set and macro nDCG@10 / Complete@10 of `rank(i, row) -> ordinals`."""
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


def fused(dump, sims, lam):
    """Max-normalized engine score plus `lam` times the similarity, as a ranking function."""
    def rank(i, row):
        score = lam * sims[i].copy()
        if row["hits"]:
            top = row["hits"][0][1]
            for o, s in row["hits"]:
                score[o] += s / top
        return list(np.argsort(-score)[:10])
    return rank


def identifier_words(s):
    """crates/embed's identifier_words: getUserProfile_v2 -> get user profile v2."""
    out, prev = "", None
    for c in s:
        if c in "_-./" or c.isspace():
            if out and not out.endswith(" "):
                out += " "
            prev = None
            continue
        if prev is not None and c.isupper() and prev.islower() and not out.endswith(" "):
            out += " "
        out += c.lower()
        prev = c
    return out.rstrip()


def tool_text(t):
    """crates/embed's tool_text without parameters: what the engine embeds for a tool."""
    s = identifier_words(t["name"])
    d = (t.get("description") or "").strip()
    return s + ": " + d if d else s
