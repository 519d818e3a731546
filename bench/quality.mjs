#!/usr/bin/env node
// Retrieval quality of the search engine on the dev set, compared with the
// previous recorded run (bench/results/quality.json) and OpenClaw's reference.
//
// Usage: node bench/quality.mjs [--record] [--runs N] [--data DIR]
//   Runs the Rust evaluation example (release build) N times (default 3):
//   quality metrics are deterministic; build time and latency are medians.
//   --record writes the new run to bench/results/quality.json.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const dataDir = option('--data', 'bench/data/retrieval-dev');
const runs = Math.max(1, Number.parseInt(option('--runs', '3'), 10) || 3);
const resultsPath = join(root, 'bench/results/quality.json');
const command = `cargo run --release -q --target x86_64-unknown-linux-gnu -p tool-search-core --example quality -- ${dataDir} --json`;

// OpenClaw 2026.9.6 on this data (bench/data/retrieval-dev/SOURCES.md).
const reference = {
  metatool: { ndcg10: 30.4, r10: 41.0, complete10: 41.0 },
  'metatool-multi': { ndcg10: 16.5, r10: 23.7, complete10: 6.4 },
  'seal-dev': { ndcg10: 91.3, r10: 94.0, complete10: 84.3 },
  macro: { ndcg10: 46.1, r10: 52.9, complete10: 43.9 },
};

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

function runOnce() {
  const stdout = execFileSync('cargo', command.split(' ').slice(1), {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout);
}

const results = [];
for (let i = 0; i < runs; i++) results.push(runOnce());
const current = {
  ...results[0],
  buildMs: median(results.map((r) => r.buildMs)),
  searchP50Ms: median(results.map((r) => r.searchP50Ms)),
  searchP99Ms: median(results.map((r) => r.searchP99Ms)),
  runs,
  date: new Date().toISOString().slice(0, 10),
  command: `node bench/quality.mjs --runs ${runs}` + (dataDir === 'bench/data/retrieval-dev' ? '' : ` --data ${dataDir}`),
};
const previous = existsSync(resultsPath) ? JSON.parse(readFileSync(resultsPath, 'utf8')) : null;

const fmt = (value) => (typeof value === 'number' ? value.toFixed(1) : '-');
const delta = (now, before) => {
  if (typeof before !== 'number') return '';
  const d = now - before;
  return Math.abs(d) < 0.05 ? ' (=)' : ` (${d > 0 ? '+' : ''}${d.toFixed(1)})`;
};
const metrics = ['ndcg10', 'r5', 'r10', 'complete10'];
const header = ['set', 'queries', 'nDCG@10', 'R@5', 'R@10', 'Complete@10', 'OpenClaw nDCG/R@10/C@10'];
const rows = [];
const rowFor = (name, now, before, count) => [
  name,
  String(count ?? ''),
  ...metrics.map((m) => fmt(now[m]) + delta(now[m], before?.[m])),
  reference[name] ? `${fmt(reference[name].ndcg10)} / ${fmt(reference[name].r10)} / ${fmt(reference[name].complete10)}` : '',
];
for (const [name, now] of Object.entries(current.sets)) {
  rows.push(rowFor(name, now, previous?.sets?.[name], now.queries));
}
rows.push(rowFor('macro', current.macro, previous?.macro, current.queries));
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
console.log(`retrieval quality: ${current.catalogTools} tools, ${current.queries} queries (${dataDir})`);
console.log(line(header));
for (const row of rows) console.log(line(row));
const ms = (key) => `${current[key]} ms${previous?.[key] != null ? ` (was ${previous[key]} ms)` : ''}`;
console.log(`build ${ms('buildMs')}; search p50 ${ms('searchP50Ms')}, p99 ${ms('searchP99Ms')} (medians of ${runs} runs)`);
if (previous) console.log(`compared with the run recorded ${previous.date ?? '(undated)'}`);

const belowReference = Object.entries(reference).filter(
  ([name, ref]) => (name === 'macro' ? current.macro : current.sets[name])?.ndcg10 < ref.ndcg10,
);
if (belowReference.length) console.log(`below OpenClaw's nDCG@10 on: ${belowReference.map(([n]) => n).join(', ')}`);

if (flag('--record')) {
  mkdirSync(dirname(resultsPath), { recursive: true });
  writeFileSync(resultsPath, JSON.stringify(current, null, 2) + '\n');
  console.log(`recorded to ${resultsPath}`);
}
