//! Calibration of the weak-match flag (`ScoredHit::weak`) on a labelled catalog.
//!
//! Usage: cargo run --release -p tool-search-core --example weak_calibration -- <data dir>
//!        [--param key=value ...] [--dump]
//! `<data dir>` holds `catalog.jsonl` and `queries.jsonl` as for the `quality` example.
//!
//! Every dev query has a relevant (gold) tool in the catalog, so "nothing fits" is
//! approximated two ways:
//! - retrieval failures: no gold tool in the top 10. The flag on the top hit is scored
//!   against them: precision = flagged searches that are failures, recall = failures
//!   flagged. A gold tool in the top 10 marked weak is a wrong mark.
//! - gold removed: the same query with its gold tools left out of the search (as if the
//!   catalog lacked the capability). Near-duplicates of the gold tools often remain
//!   (SOURCES.md), so not every such search should be flagged; the share flagged is
//!   a lower bound of how often the flag fires when the capability is missing.
//!
//! Prints the figures at the production threshold, per set and pooled, then a sweep of
//! the threshold and of the common-word share.
//! `--dump` prints one JSON line per query (top-10 strengths and gold flags).

use std::collections::{BTreeMap, HashMap};

use serde_json::json;
use tool_search_core::search::{RankingParams, SearchIndex};

#[path = "dev_data/mod.rs"]
mod dev_data;
use dev_data::{load_catalog, load_queries, Query};

/// What one query's searches gave: the top 10 with the gold tools in place, and the
/// top hit's strength with them left out (None: no hit at all).
struct Outcome {
    set: String,
    query: String,
    /// (strength, is gold) of the top 10; an exact name/id match has strength 1.
    hits: Vec<(f32, bool)>,
    removed_top: Option<f32>,
}

fn run(index: &SearchIndex, queries: &[Query], params: &RankingParams) -> Vec<Outcome> {
    queries
        .iter()
        .map(|q| {
            let hits = index.search_with(&q.text, 10, &|_| true, params);
            let removed = index.search_with(&q.text, 1, &|o| !q.gold.contains(&o), params);
            Outcome {
                set: q.set.clone(),
                query: q.text.clone(),
                hits: hits
                    .iter()
                    .map(|h| (h.strength, q.gold.contains(&h.ordinal)))
                    .collect(),
                removed_top: removed.first().map(|h| h.strength),
            }
        })
        .collect()
}

#[derive(Default, Clone, Copy)]
struct Counts {
    queries: usize,
    /// No gold tool in the top 10.
    failures: usize,
    flagged: usize,
    flagged_failures: usize,
    /// Gold at rank 1, and those whose top hit was flagged.
    gold_first: usize,
    gold_first_flagged: usize,
    /// Gold tools in the top 10, and those marked weak.
    gold_hits: usize,
    gold_hits_weak: usize,
    /// Searches with the gold tools left out that still returned a hit, and those flagged.
    removed: usize,
    removed_flagged: usize,
}

impl Counts {
    fn add(&mut self, o: &Outcome, threshold: f32) {
        // The production rule (is_weak) at this threshold; exact matches have strength 1.
        let weak = |strength: f32| strength < threshold;
        self.queries += 1;
        let failure = !o.hits.iter().any(|h| h.1);
        let flagged = o.hits.first().is_none_or(|h| weak(h.0));
        self.failures += failure as usize;
        self.flagged += flagged as usize;
        self.flagged_failures += (flagged && failure) as usize;
        if o.hits.first().is_some_and(|h| h.1) {
            self.gold_first += 1;
            self.gold_first_flagged += flagged as usize;
        }
        for h in o.hits.iter().filter(|h| h.1) {
            self.gold_hits += 1;
            self.gold_hits_weak += weak(h.0) as usize;
        }
        if let Some(top) = o.removed_top {
            self.removed += 1;
            self.removed_flagged += weak(top) as usize;
        }
    }

    fn merge(&mut self, other: &Counts) {
        self.queries += other.queries;
        self.failures += other.failures;
        self.flagged += other.flagged;
        self.flagged_failures += other.flagged_failures;
        self.gold_first += other.gold_first;
        self.gold_first_flagged += other.gold_first_flagged;
        self.gold_hits += other.gold_hits;
        self.gold_hits_weak += other.gold_hits_weak;
        self.removed += other.removed;
        self.removed_flagged += other.removed_flagged;
    }

    /// [flagged, precision, recall, gold-first flagged, gold hits weak, gold-removed flagged], in %.
    fn figures(&self) -> [f64; 6] {
        let pct = |a: usize, b: usize| {
            if b == 0 {
                0.0
            } else {
                (a as f64 / b as f64 * 1000.0).round() / 10.0
            }
        };
        [
            pct(self.flagged, self.queries),
            pct(self.flagged_failures, self.flagged),
            pct(self.flagged_failures, self.failures),
            pct(self.gold_first_flagged, self.gold_first),
            pct(self.gold_hits_weak, self.gold_hits),
            pct(self.removed_flagged, self.removed),
        ]
    }
}

fn per_set(outcomes: &[Outcome], threshold: f32) -> (BTreeMap<String, Counts>, Counts) {
    let mut sets: BTreeMap<String, Counts> = BTreeMap::new();
    for o in outcomes {
        sets.entry(o.set.clone()).or_default().add(o, threshold);
    }
    let mut all = Counts::default();
    for c in sets.values() {
        all.merge(c);
    }
    (sets, all)
}

/// Macro average (over sets) of each figure.
fn macro_figures(sets: &BTreeMap<String, Counts>) -> [f64; 6] {
    let mut out = [0.0; 6];
    for c in sets.values() {
        for (o, f) in out.iter_mut().zip(c.figures()) {
            *o += f / sets.len() as f64;
        }
    }
    out.map(|v| (v * 10.0).round() / 10.0)
}

const HEADER: &str =
    "flagged  precision  recall  gold@1-flagged  gold-hits-weak  gold-removed-flagged";

fn row(label: &str, count: usize, failures: usize, f: [f64; 6]) -> String {
    format!(
        "{label:<16} {count:>7} {failures:>8} {:>8.1} {:>10.1} {:>7.1} {:>15.1} {:>15.1} {:>21.1}",
        f[0], f[1], f[2], f[3], f[4], f[5]
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::path::PathBuf::from(
        args.first()
            .cloned()
            .unwrap_or_else(|| "bench/data/retrieval-dev".into()),
    );
    let mut params = RankingParams::default();
    for (i, a) in args.iter().enumerate() {
        if a == "--param" {
            let spec = args.get(i + 1).map(String::as_str).unwrap_or("");
            let (key, value) = spec
                .split_once('=')
                .unwrap_or_else(|| panic!("--param wants key=value, got {spec}"));
            let value: f32 = value
                .parse()
                .unwrap_or_else(|_| panic!("bad number in {spec}"));
            params
                .set_extra(key, value)
                .unwrap_or_else(|| panic!("unknown parameter {key}"));
        }
    }
    let entries = load_catalog(&dir);
    let ordinal_of: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    let queries = load_queries(&dir, &ordinal_of);
    let index = SearchIndex::build(&entries).expect("build");
    let outcomes = run(&index, &queries, &params);

    if args.iter().any(|a| a == "--dump") {
        for o in &outcomes {
            println!(
                "{}",
                json!({ "set": o.set, "query": o.query, "hits": o.hits, "removed": o.removed_top })
            );
        }
        return;
    }

    let threshold = params.weak_below;
    println!(
        "catalog: {} tools, {} queries ({}); weak below strength {threshold}, common share {}",
        entries.len(),
        queries.len(),
        dir.display(),
        params.common_share
    );
    println!("figures in %; failure = no gold tool in the top 10; flag = the top hit is weak");
    println!("{:<16} {:>7} {:>8} {HEADER}", "set", "queries", "failures");
    let (sets, all) = per_set(&outcomes, threshold);
    for (name, c) in &sets {
        println!("{}", row(name, c.queries, c.failures, c.figures()));
    }
    println!(
        "{}",
        row("pooled", all.queries, all.failures, all.figures())
    );
    println!(
        "{}",
        row("macro", all.queries, all.failures, macro_figures(&sets))
    );

    println!("\nthreshold sweep (pooled | macro): {HEADER}");
    for step in 1..=12 {
        let t = step as f32 * 0.05;
        let (sets, all) = per_set(&outcomes, t);
        let (p, m) = (all.figures(), macro_figures(&sets));
        println!(
            "{t:>5.2}  pooled {:>5.1} {:>5.1} {:>5.1} {:>5.1} {:>5.1} {:>5.1} | macro {:>5.1} {:>5.1} {:>5.1} {:>5.1} {:>5.1} {:>5.1}",
            p[0], p[1], p[2], p[3], p[4], p[5], m[0], m[1], m[2], m[3], m[4], m[5]
        );
    }

    println!("\ncommon-share sweep at threshold {threshold} (pooled): {HEADER}");
    for share in [0.005f32, 0.01, 0.02, 0.05, 0.1] {
        let varied = RankingParams {
            common_share: share,
            ..params.clone()
        };
        let (_, all) = per_set(&run(&index, &queries, &varied), threshold);
        let p = all.figures();
        println!(
            "{share:>6.3}  {:>5.1} {:>5.1} {:>5.1} {:>5.1} {:>5.1} {:>5.1}",
            p[0], p[1], p[2], p[3], p[4], p[5]
        );
    }
}
