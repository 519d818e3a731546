#!/usr/bin/env bash
# Issue 39's leave-sources-out folds for the tuned encoder (bench/experiments/tune_encoder.py):
# each fold trains without two sources (their queries and their servers' tools), then
# bench/quality-hybrid.mjs ranks every dev query through the addon with that fold's model; the
# table compares each fold's held-out sources with the stock model's hybrid ranking.
#
#   bash bench/experiments/tune_folds.sh DATA_DIR WORK_DIR [tune_encoder.py options...]
#
# Needs a built addon (index.js), python3 with torch, transformers and safetensors, and the stock
# model in npm/model-minilm/model. About 15 minutes of 2-core CPU a fold.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$(cd "$1" && pwd)
work=$2
shift 2
mkdir -p "$work"
stock="$root/npm/model-minilm/model"
top="$work/lexical-top30.jsonl"
[ -s "$top" ] || node "$root/bench/experiments/lexical_top.mjs" "$data" 30 > "$top"
[ -s "$work/stock.json" ] || OPENCLAW_TOOL_SEARCH_MODEL_DIR="$stock" node "$root/bench/quality-hybrid.mjs" --data "$data" --json > "$work/stock.json"
folds=(metatool,metatool-multi toolbench,restbench nestful,taubench seal-dev,toolalpaca)
for fold in "${folds[@]}"; do
  out="$work/fold-${fold//,/-}"
  if [ ! -s "$out/quality.json" ]; then
    python3 "$root/bench/experiments/tune_encoder.py" "$stock" "$data" "$top" "$out" --holdout "$fold" "$@"
    OPENCLAW_TOOL_SEARCH_MODEL_DIR="$out/model" node "$root/bench/quality-hybrid.mjs" --data "$data" --json > "$out/quality.json"
  fi
done
python3 - "$work" "${folds[@]}" <<'PY'
import json, sys
work, folds = sys.argv[1], sys.argv[2:]
stock = json.load(open(f"{work}/stock.json"))["hybrid"]["perSet"]
print(f"{'fold (held out)':34} {'source':15} {'stock':>6} {'tuned':>6} {'delta':>6}")
means = []
for fold in folds:
    tuned = json.load(open(f"{work}/fold-{fold.replace(',', '-')}/quality.json"))["hybrid"]["perSet"]
    deltas = []
    for s in fold.split(","):
        deltas.append(tuned[s] - stock[s])
        print(f"{fold:34} {s:15} {stock[s]:6.1f} {tuned[s]:6.1f} {tuned[s] - stock[s]:+6.1f}")
    means.append(sum(deltas) / len(deltas))
    print(f"{fold:34} {'fold mean':15} {'':6} {'':6} {means[-1]:+6.1f}")
print(f"held-out mean over folds {sum(means) / len(means):+.2f}; worst fold {min(means):+.2f}")
print("rule (issue 39): mean >= +2 and no fold below -0.5:", "met" if sum(means) / len(means) >= 2 and min(means) >= -0.5 else "not met")
PY
