//! Cost of embedding one new query at a time, as a search request does, and
//! a digest of every vector so a change to the encoder can be checked for
//! bit-identical output before and after.
//!
//! cargo run --release -p tool-search-embed --example query_cost -- \
//!     MODEL_DIR QUERIES.jsonl [--runs 3]
//!
//! Embeds every query (the `query` field of each line) alone, in file order,
//! `--runs` times; prints the CPU time per query (p50 / p90 / p99 over all
//! runs, this thread only) and a BLAKE3 digest of the vectors' bytes of the
//! first run (later runs must give the same vectors; checked).
use std::path::Path;

use tool_search_embed::Encoder;

#[path = "support/cpu.rs"]
mod cpu;
use cpu::cpu_seconds;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: query_cost MODEL_DIR QUERIES.jsonl [--runs N]");
        std::process::exit(2);
    }
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .map_or(3, |n| n.parse().expect("--runs N"));
    let encoder = Encoder::load(Path::new(&args[0])).expect("load model");
    let queries: Vec<String> = std::fs::read_to_string(&args[1])
        .expect("queries file")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
            v["query"].as_str().expect("query field").to_string()
        })
        .collect();
    assert!(!queries.is_empty(), "no queries in {}", args[1]);
    let mut pieces: Vec<usize> = queries
        .iter()
        .map(|q| encoder.token_ids(q, tool_search_embed::MAX_TOKENS).len())
        .collect();
    pieces.sort_unstable();

    let mut times = Vec::with_capacity(runs * queries.len());
    let mut first: Vec<[f32; tool_search_embed::DIM]> = Vec::new();
    for run in 0..runs {
        let mut vectors = Vec::with_capacity(queries.len());
        for q in &queries {
            let start = cpu_seconds();
            let v = encoder.embed(&[q])[0];
            times.push(cpu_seconds() - start);
            vectors.push(v);
        }
        if run == 0 {
            first = vectors;
        } else {
            assert!(first == vectors, "run {run} gave other vectors");
        }
    }
    let mut hasher = blake3::Hasher::new();
    for v in &first {
        for x in v {
            hasher.update(&x.to_le_bytes());
        }
    }
    times.sort_by(f64::total_cmp);
    let ms = |p| percentile(&times, p) * 1e3;
    println!(
        "{} queries ({:.1} word pieces each, median {}) x {runs} runs: CPU per query p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms",
        queries.len(),
        pieces.iter().sum::<usize>() as f64 / queries.len() as f64,
        pieces[pieces.len() / 2],
        ms(0.5),
        ms(0.9),
        ms(0.99),
    );
    println!("vectors digest {}", hasher.finalize().to_hex());
}
