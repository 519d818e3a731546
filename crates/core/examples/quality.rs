//! Retrieval quality and latency of lexical search on a labelled catalog: the index's
//! ranking with the prerequisite tools placed, as the catalog searches without a model.
//!
//! Usage: cargo run --release -p tool-search-core --example quality -- <data dir> [--json]
//!        [--grid] [--param key=value ...] [--dump N] [--misses SET] [--hits SET] [--slow]
//! `<data dir>` holds `catalog.jsonl` ({id, source, owner, name, description, inputSchema?})
//! and `queries.jsonl` ({set, query, gold: [ids]}). Relevance is binary.
//! Prints per-set and macro nDCG@10, R@5, R@10, Complete@10, build time
//! (median of 3) and search latency p50/p99 (limit 10, every query, 3 rounds).
//! `--json` prints one JSON object instead of the table (read by bench/quality.mjs).
//! `--param` overrides ranking parameters (w.name, b.description, k1, expansion, ...).
//! `--grid` evaluates a small grid of field weights (used once to pick the defaults).
//! `--dump N` prints each query's top-N ordinals and scores as JSON lines: the index's ranking
//! alone (offline fusion experiments place the prerequisite tools after fusing).
//! `--per-query FILE` evaluates each line of FILE (`label key=value key=value ...`; a bare label
//! is the defaults, and `--param`s apply under every line) and prints one JSON line per
//! configuration: its per-query nDCG@10 and Complete@10, in queries.jsonl order (read by
//! bench/quality.mjs for per-source, leave-one-source-out and bootstrap figures).

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use serde_json::{json, Value};
use tool_search_core::catalog::{Source, ToolEntry};
use tool_search_core::search::{
    FieldKind, Prerequisites, RankingParams, ScoredHit, SearchIndex, MAX_SERVER_TOOLS,
};

#[path = "dev_data/mod.rs"]
mod dev_data;
use dev_data::{load_catalog, load_queries, Query};

#[derive(Default, Clone, Copy)]
struct Sums {
    ndcg10: f64,
    r5: f64,
    r10: f64,
    complete10: f64,
    count: usize,
}

/// One query's nDCG@10, R@5, R@10 and Complete@10 (fractions).
fn query_metrics(ranked: &[usize], gold: &[usize]) -> [f64; 4] {
    let relevant = |o: &usize| gold.contains(o);
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, o)| relevant(o))
        .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let ideal: f64 = (0..gold.len().min(10))
        .map(|i| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let found = |k: usize| ranked.iter().take(k).filter(|o| relevant(o)).count() as f64;
    let n = gold.len().max(1) as f64;
    [
        if ideal > 0.0 { dcg / ideal } else { 0.0 },
        found(5) / n,
        found(10) / n,
        if !gold.is_empty() && found(10) as usize == gold.len() {
            1.0
        } else {
            0.0
        },
    ]
}

impl Sums {
    fn add(&mut self, ranked: &[usize], gold: &[usize]) {
        let [ndcg10, r5, r10, complete10] = query_metrics(ranked, gold);
        self.ndcg10 += ndcg10;
        self.r5 += r5;
        self.r10 += r10;
        self.complete10 += complete10;
        self.count += 1;
    }

    fn percentages(&self) -> [f64; 4] {
        let n = self.count.max(1) as f64;
        [self.ndcg10, self.r5, self.r10, self.complete10].map(|s| (s / n * 1000.0).round() / 10.0)
    }
}

/// The product's lexical ranking (`SearchIndex::rank`, as `Catalog::search` enters it): the
/// index's hits, each top hit followed by the tools that find the identifiers it requires.
struct Ranker {
    index: SearchIndex,
    prerequisites: Prerequisites,
}

impl Ranker {
    fn top10(&self, text: &str, params: &RankingParams) -> Vec<ScoredHit> {
        self.index
            .rank(text, 10, &|_| true, None, None, &self.prerequisites, params)
    }
}

/// Per-set metrics plus the macro average over sets.
fn evaluate(
    index: &Ranker,
    queries: &[Query],
    params: &RankingParams,
) -> (BTreeMap<String, Sums>, [f64; 4]) {
    let mut sets: BTreeMap<String, Sums> = BTreeMap::new();
    for q in queries {
        let ranked: Vec<usize> = index
            .top10(&q.text, params)
            .iter()
            .map(|h| h.ordinal)
            .collect();
        sets.entry(q.set.clone()).or_default().add(&ranked, &q.gold);
    }
    let mut macro_avg = [0.0; 4];
    for sums in sets.values() {
        let p = sums.percentages();
        for i in 0..4 {
            macro_avg[i] += p[i] / sets.len() as f64;
        }
    }
    (sets, macro_avg.map(|m| (m * 10.0).round() / 10.0))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn apply_param(params: &mut RankingParams, spec: &str) {
    let (key, value) = spec
        .split_once('=')
        .unwrap_or_else(|| panic!("--param wants key=value, got {spec}"));
    let value: f32 = value
        .parse()
        .unwrap_or_else(|_| panic!("bad number in {spec}"));
    let field = |name: &str| {
        FieldKind::ALL
            .iter()
            .position(|k| k.tantivy_name() == name)
            .unwrap_or_else(|| panic!("unknown field {name}"))
    };
    match key.split_once('.') {
        Some(("w", f)) => params.weight[field(f)] = value,
        Some(("b", f)) => params.b[field(f)] = value,
        _ => match key {
            "k1" => params.k1 = value,
            "expansion" => params.expansion_weight = value,
            _ => params
                .set_extra(key, value)
                .unwrap_or_else(|| panic!("unknown parameter {key}")),
        },
    }
}

fn run_grid(index: &Ranker, queries: &[Query], base: &RankingParams) {
    println!("grid: name label desc pnames pdescs owner -> macro nDCG@10 / Complete@10");
    for name in [2.0, 3.0, 4.0] {
        for pnames in [0.3, 0.6, 1.0] {
            for pdescs in [0.2, 0.4, 0.8] {
                for owner in [0.5, 1.0] {
                    let mut params = base.clone();
                    params.weight = [name, base.weight[1], 1.0, pnames, pdescs, owner];
                    let (_, m) = evaluate(index, queries, &params);
                    println!(
                        "{name} {} 1.0 {pnames} {pdescs} {owner} -> {:.1} / {:.1}",
                        base.weight[1], m[0], m[3]
                    );
                }
            }
        }
    }
}

/// Queries of one set whose gold is not all in the top 10: the query, the gold
/// names and the top 5 (for reading failure modes, not for tuning to queries).
/// With `hits`, the opposite: queries whose gold is all in the top 10.
fn print_misses(
    index: &Ranker,
    entries: &[ToolEntry],
    queries: &[Query],
    params: &RankingParams,
    set: &str,
    hits: bool,
) {
    for q in queries.iter().filter(|q| q.set == set) {
        let ranked: Vec<usize> = index
            .top10(&q.text, params)
            .iter()
            .map(|h| h.ordinal)
            .collect();
        if q.gold.iter().all(|g| ranked.contains(g)) != hits {
            continue;
        }
        let gold: Vec<&str> = q.gold.iter().map(|&g| entries[g].id.as_str()).collect();
        let top: Vec<&str> = ranked
            .iter()
            .take(5)
            .map(|&o| entries[o].id.as_str())
            .collect();
        println!("Q: {}\n   gold: {:?}\n   top: {:?}", q.text, gold, top);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::path::PathBuf::from(
        args.first()
            .cloned()
            .unwrap_or_else(|| "bench/data/retrieval-dev".into()),
    );
    let json_out = args.iter().any(|a| a == "--json");
    let grid = args.iter().any(|a| a == "--grid");
    let mut params = RankingParams::default();
    for (i, a) in args.iter().enumerate() {
        if a == "--param" {
            apply_param(
                &mut params,
                args.get(i + 1).map(String::as_str).unwrap_or(""),
            );
        }
    }

    let entries = load_catalog(&dir);
    let ordinal_of: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    let queries = load_queries(&dir, &ordinal_of);

    let mut build_ms = Vec::new();
    let mut index = None;
    for _ in 0..3 {
        let start = Instant::now();
        index = Some(SearchIndex::build(&entries).expect("build"));
        build_ms.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    // The prerequisite table: a full build, and a derived version's (one server changed: the
    // largest one that gets pairs, the rest carried over). Medians of 5.
    let mut prerequisites = Prerequisites::build(&entries);
    let mut sizes: HashMap<(Source, &str), usize> = HashMap::new();
    for e in &entries {
        *sizes.entry((e.source, e.owner.as_str())).or_default() += 1;
    }
    let changed = sizes
        .iter()
        .filter(|(_, &n)| n <= MAX_SERVER_TOOLS)
        .max_by_key(|(k, &n)| (n, *k))
        .map(|(&k, &n)| (k, n));
    let identity: Vec<u32> = (0..entries.len() as u32).collect();
    // The changed server's tools count as made for the derived version.
    let fresh: Vec<u32> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| changed.is_some_and(|(k, _)| k == (e.source, e.owner.as_str())))
        .map(|(o, _)| o as u32)
        .collect();
    let (mut prerequisites_ms, mut derive_ms) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let start = Instant::now();
        prerequisites = Prerequisites::build(&entries);
        prerequisites_ms.push(start.elapsed().as_secs_f64() * 1000.0);
        let start = Instant::now();
        let derived = prerequisites.derive(&entries, &identity, &fresh);
        derive_ms.push(start.elapsed().as_secs_f64() * 1000.0);
        assert!(
            derived == prerequisites,
            "a derived table equals a full build"
        );
    }
    prerequisites_ms.sort_by(f64::total_cmp);
    derive_ms.sort_by(f64::total_cmp);
    let (prerequisites_ms, derive_ms) = (prerequisites_ms[2], derive_ms[2]);
    let index = Ranker {
        index: index.expect("built"),
        prerequisites,
    };
    build_ms.sort_by(f64::total_cmp);

    if grid {
        run_grid(&index, &queries, &params);
        return;
    }
    if args.iter().any(|a| a == "--slow") {
        let mut timed: Vec<(f64, usize, &str)> = queries
            .iter()
            .map(|q| {
                let start = Instant::now();
                let hits = index.top10(&q.text, &params);
                (
                    start.elapsed().as_secs_f64() * 1e6,
                    hits.len(),
                    q.text.as_str(),
                )
            })
            .collect();
        timed.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (us, n, text) in timed.iter().take(15) {
            println!("{us:>8.0} us  {n} hits  {text}");
        }
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--per-query") {
        let path = args.get(i + 1).expect("--per-query FILE");
        let specs = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
        for line in specs
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            let mut words = line.split_whitespace();
            let label = words.next().unwrap_or_default();
            let mut config = params.clone();
            let overrides: Vec<&str> = words.collect();
            for spec in &overrides {
                apply_param(&mut config, spec);
            }
            let (mut ndcg, mut complete) = (
                Vec::with_capacity(queries.len()),
                Vec::with_capacity(queries.len()),
            );
            for q in &queries {
                let ranked: Vec<usize> = index
                    .top10(&q.text, &config)
                    .iter()
                    .map(|h| h.ordinal)
                    .collect();
                let m = query_metrics(&ranked, &q.gold);
                ndcg.push((m[0] * 1e4).round() / 1e4);
                complete.push(m[3]);
            }
            println!(
                "{}",
                json!({ "label": label, "params": overrides, "ndcg10": ndcg, "complete10": complete })
            );
        }
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--dump") {
        // One JSON line per query: the top-N ordinals and scores (for offline fusion experiments).
        let n: usize = args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(100);
        for q in &queries {
            let hits = index.index.search_with(&q.text, n, &|_| true, &params);
            let row: Vec<(usize, f32)> = hits.iter().map(|h| (h.ordinal, h.score)).collect();
            println!("{}", json!({ "set": q.set, "gold": q.gold, "hits": row }));
        }
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--hits") {
        let set = args.get(i + 1).cloned().unwrap_or_default();
        print_misses(&index, &entries, &queries, &params, &set, true);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--misses") {
        let set = args.get(i + 1).cloned().unwrap_or_default();
        print_misses(&index, &entries, &queries, &params, &set, false);
        return;
    }

    let (sets, macro_avg) = evaluate(&index, &queries, &params);

    let mut latencies_us = Vec::with_capacity(queries.len() * 3);
    for _ in 0..3 {
        for q in &queries {
            let start = Instant::now();
            let hits = index.top10(&q.text, &params);
            latencies_us.push(start.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box(hits);
        }
    }
    latencies_us.sort_by(f64::total_cmp);
    let p50 = percentile(&latencies_us, 50.0);
    let p99 = percentile(&latencies_us, 99.0);

    if json_out {
        let set_rows: serde_json::Map<String, Value> = sets
            .iter()
            .map(|(name, sums)| {
                let p = sums.percentages();
                (name.clone(), json!({ "queries": sums.count, "ndcg10": p[0], "r5": p[1], "r10": p[2], "complete10": p[3] }))
            })
            .collect();
        let out = json!({
            "catalogTools": entries.len(),
            "queries": queries.len(),
            "sets": set_rows,
            "macro": { "ndcg10": macro_avg[0], "r5": macro_avg[1], "r10": macro_avg[2], "complete10": macro_avg[3] },
            "buildMs": (build_ms[1] * 10.0).round() / 10.0,
            "prerequisiteTableMs": (prerequisites_ms * 100.0).round() / 100.0,
            "prerequisiteDeriveMs": (derive_ms * 100.0).round() / 100.0,
            "searchP50Ms": (p50 / 1000.0 * 1000.0).round() / 1000.0,
            "searchP99Ms": (p99 / 1000.0 * 1000.0).round() / 1000.0,
        });
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return;
    }

    println!(
        "catalog: {} tools, {} queries ({})",
        entries.len(),
        queries.len(),
        dir.display()
    );
    println!(
        "{:<16} {:>7} {:>8} {:>6} {:>6} {:>11}",
        "set", "queries", "nDCG@10", "R@5", "R@10", "Complete@10"
    );
    for (name, sums) in &sets {
        let p = sums.percentages();
        println!(
            "{:<16} {:>7} {:>8.1} {:>6.1} {:>6.1} {:>11.1}",
            name, sums.count, p[0], p[1], p[2], p[3]
        );
    }
    let m = macro_avg;
    println!(
        "{:<16} {:>7} {:>8.1} {:>6.1} {:>6.1} {:>11.1}",
        "macro",
        queries.len(),
        m[0],
        m[1],
        m[2],
        m[3]
    );
    println!("build: {:.1} ms (median of 3)", build_ms[1]);
    println!(
        "prerequisite table: {} tools with a provider, built in {:.2} ms; a version with one server of {} tools changed derives it in {:.2} ms (medians of 5)",
        index.prerequisites.needing_tools(),
        prerequisites_ms,
        changed.map_or(0, |(_, n)| n),
        derive_ms
    );
    println!(
        "search: p50 {:.3} ms, p99 {:.3} ms ({} searches, limit 10)",
        p50 / 1000.0,
        p99 / 1000.0,
        latencies_us.len()
    );
}
