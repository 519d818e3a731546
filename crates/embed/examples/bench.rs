//! Encoder speed on tool texts from a catalog (one thread, release build).
//!
//! cargo run --release --target x86_64-unknown-linux-gnu -p tool-search-embed --example bench -- \
//!     MODEL_DIR CATALOG.jsonl [--tools 500] [--runs 3] [--max-tokens 256,128,64] [--all] [--query-only]
//!     [--precision int8,f32] [--queries QUERIES.jsonl]
//!
//! Reports, per precision of the dense layers: median time to embed one
//! ~10-word query and one ~25-word-piece query (+ cosine re-rank of 50
//! candidates), and the time to embed N tool texts (median of runs) per token
//! limit, extrapolated to 12,800 tools; --all also embeds the whole catalog
//! once; --query-only skips the tool texts. --queries also embeds every query
//! of a queries.jsonl (its `query` field, whole, one at a time) and reports
//! p50 / p90 / p99 CPU per query (the clause split of the product is in
//! tool-search-core: `clause_vectors --product`).
use std::path::Path;
use std::time::Instant;

use tool_search_embed::{cosine, tool_text, Encoder, Precision, DIM};

#[path = "support/cpu.rs"]
mod cpu;
use cpu::cpu_seconds;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let option = |name: &str, default: &str| -> String {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .unwrap_or(default.to_string())
    };
    let model_dir = &args[0];
    let catalog = std::fs::read_to_string(&args[1]).expect("catalog");
    let n_tools: usize = option("--tools", "500").parse().unwrap();
    let runs: usize = option("--runs", "3").parse().unwrap();
    let limits: Vec<usize> = option("--max-tokens", "256,128,64")
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let precisions: Vec<Precision> = option("--precision", "int8,f32")
        .split(',')
        .map(|p| match p {
            "int8" => Precision::Int8,
            "f32" => Precision::F32,
            other => panic!("--precision int8,f32: unknown {other}"),
        })
        .collect();

    let texts: Vec<String> = catalog
        .lines()
        .map(|line| {
            let tool: serde_json::Value = serde_json::from_str(line).unwrap();
            let params: Vec<&str> = tool["inputSchema"]["properties"]
                .as_object()
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            tool_text(
                tool["name"].as_str().unwrap_or(""),
                tool["description"].as_str().unwrap_or(""),
                &params,
            )
        })
        .collect();
    // An even spread over the catalog (its sources are in blocks).
    let step = (texts.len() / n_tools).max(1);
    let sample: Vec<&str> = texts
        .iter()
        .step_by(step)
        .take(n_tools)
        .map(String::as_str)
        .collect();
    for &precision in &precisions {
        println!("== {precision:?}");
        run(model_dir, precision, &texts, &sample, &limits, runs, &args);
    }
}

fn run(
    model_dir: &str,
    precision: Precision,
    texts: &[String],
    sample: &[&str],
    limits: &[usize],
    runs: usize,
    args: &[String],
) {
    let start = Instant::now();
    let encoder = Encoder::load_with_precision(Path::new(model_dir), precision).expect("load");
    println!(
        "load {:.0} ms, digest {}",
        start.elapsed().as_secs_f64() * 1e3,
        &encoder.model_digest()[..16]
    );
    let candidates = encoder.embed(&sample[..50.min(sample.len())]);
    for query in [
        "find the cheapest flight from Berlin to Lisbon next Friday",
        "summarize the unread emails from my manager about the quarterly budget review and draft a polite reply to each one",
    ] {
        query_latency(&encoder, query, &candidates);
    }
    if let Some(path) = args
        .iter()
        .position(|a| a == "--queries")
        .and_then(|i| args.get(i + 1))
    {
        dev_queries(&encoder, path);
    }
    if args.iter().any(|a| a == "--query-only") {
        return;
    }
    tool_throughput(&encoder, texts, sample, limits, runs, args);
}

fn dev_queries(encoder: &Encoder, path: &str) {
    let text = std::fs::read_to_string(path).expect("queries");
    let queries: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["query"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let mut cpu_times = Vec::with_capacity(queries.len());
    let mut pieces = 0;
    for q in &queries {
        let c = cpu_seconds();
        std::hint::black_box(encoder.embed(&[q.as_str()]));
        cpu_times.push((cpu_seconds() - c) * 1e3);
        pieces += encoder.token_ids(q, 256).len();
    }
    cpu_times.sort_by(f64::total_cmp);
    let at = |p: f64| cpu_times[((cpu_times.len() as f64 * p) as usize).min(cpu_times.len() - 1)];
    println!(
        "{} queries ({:.1} pieces each), whole: CPU per query p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, total {:.2} s",
        queries.len(),
        pieces as f64 / queries.len() as f64,
        at(0.5),
        at(0.9),
        at(0.99),
        cpu_times.iter().sum::<f64>() / 1e3
    );
}

fn query_latency(encoder: &Encoder, query: &str, candidates: &[[f32; DIM]]) {
    let mut times = Vec::new();
    let mut cpu_times = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        let c = cpu_seconds();
        let q = encoder.embed(&[query]);
        let mut fused: Vec<(usize, f32)> = candidates
            .iter()
            .enumerate()
            .map(|(rank, c)| (rank, 11.0 / (rank as f32 + 10.0) + 2.0 * cosine(&q[0], c)))
            .collect();
        fused.sort_by(|a, b| b.1.total_cmp(&a.1));
        std::hint::black_box(&fused);
        cpu_times.push((cpu_seconds() - c) * 1e3);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let query_tokens = encoder.token_ids(query, 256).len();
    println!(
        "query ({query_tokens} tokens) embed + re-rank 50: p50 {:.2} ms CPU ({:.2} ms wall), min {:.2} ms CPU",
        median(cpu_times.clone()),
        median(times),
        cpu_times.iter().copied().fold(f64::INFINITY, f64::min)
    );
}

fn tool_throughput(
    encoder: &Encoder,
    texts: &[String],
    sample: &[&str],
    limits: &[usize],
    runs: usize,
    args: &[String],
) {
    for &limit in limits {
        let tokens: usize = sample
            .iter()
            .map(|t| encoder.token_ids(t, limit).len())
            .sum();
        let mut times = Vec::new();
        let mut cpu_times = Vec::new();
        let mut vectors: Vec<[f32; DIM]> = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            let c = cpu_seconds();
            vectors = encoder.embed_truncated(sample, limit);
            cpu_times.push(cpu_seconds() - c);
            times.push(t.elapsed().as_secs_f64());
        }
        let secs = median(cpu_times);
        println!(
            "max_tokens {limit}: {} tools, {:.1} tokens/tool, {secs:.2} s CPU ({:.2} s wall, {:.1} ms/tool) -> 12.8k tools ~{:.0} s CPU",
            sample.len(),
            tokens as f64 / sample.len() as f64,
            median(times),
            secs * 1e3 / sample.len() as f64,
            secs / sample.len() as f64 * 12_800.0
        );
        std::hint::black_box(&vectors);
    }
    if args.iter().any(|a| a == "--all") {
        let all: Vec<&str> = texts.iter().map(String::as_str).collect();
        let limit = limits[limits.len() - 1];
        let (t, c) = (Instant::now(), cpu_seconds());
        let vectors = encoder.embed_truncated(&all, limit);
        println!(
            "whole catalog: {} tools at max_tokens {limit} in {:.1} s CPU ({:.1} s wall)",
            vectors.len(),
            cpu_seconds() - c,
            t.elapsed().as_secs_f64()
        );
    }
}
