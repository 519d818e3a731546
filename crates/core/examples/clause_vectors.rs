//! Sentence vectors of each query's clauses (the lexical planner's split), for
//! the offline multi-vector experiments (bench/experiments/hybrid-rerank.mjs).
//!
//! clause_vectors MODEL_DIR DATA_DIR OUT_DIR [--connectors]
//!   Writes OUT_DIR/clauses[-connectors].f32 (one row of DIM little-endian f32 per
//!   clause) and OUT_DIR/clauses[-connectors].json ([[first row, count], ...] per
//!   queries.jsonl line; count 0 when the query has a single clause).
//! clause_vectors MODEL_DIR DATA_DIR OUT_DIR --product [--whole-pass] [--every N]
//!   The product's query vectors (`SemanticModel::embed_query`: clauses capped
//!   at MAX_QUERY_CLAUSES, the whole vector pooled over the clauses' pieces):
//!   OUT_DIR/queries-joint.f32 (whole) and clauses-joint.{f32,json}, with
//!   per-query timing on stderr. --whole-pass: the whole query in a pass of its
//!   own instead (the rule before joint pooling; queries-separate.f32,
//!   clauses-separate.*). --every N: every Nth query only (--every 10 is close
//!   to bench/hybrid.mjs's 400-query sample: 403 queries).
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

#[path = "dev_data/mod.rs"]
#[allow(dead_code)] // only the queries are read here
mod dev_data;
use dev_data::load_queries;
use tool_search_core::search::clauses;
use tool_search_core::search::semantic::{model_at, query_clauses};
use tool_search_embed::Encoder;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let connectors = args.iter().any(|a| a == "--connectors");
    let data = Path::new(&args[1]);
    let out = Path::new(&args[2]);
    std::fs::create_dir_all(out).expect("out dir");
    let mut queries: Vec<String> = load_queries(data, &HashMap::new())
        .into_iter()
        .map(|q| q.text)
        .collect();
    if let Some(n) = args
        .iter()
        .position(|a| a == "--every")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse::<usize>().ok())
    {
        queries = queries.into_iter().step_by(n.max(1)).collect();
    }
    if args.iter().any(|a| a == "--product") {
        if args.iter().any(|a| a == "--strip-values") {
            queries = queries.iter().map(|q| strip_values(q)).collect();
        }
        let name = match (
            args.iter().any(|a| a == "--whole-pass"),
            args.iter().any(|a| a == "--strip-values"),
        ) {
            (true, _) => "separate",
            (false, true) => "joint-strip",
            (false, false) => "joint",
        };
        return write_product(Path::new(&args[0]), &queries, out, name == "separate", name);
    }
    let encoder = Encoder::load(Path::new(&args[0])).expect("load model");
    let mut texts: Vec<String> = Vec::new();
    let mut index: Vec<(usize, usize)> = Vec::new();
    for q in &queries {
        let parts: Vec<String> = clauses(q, connectors)
            .into_iter()
            .map(str::trim)
            .filter(|c| c.chars().filter(|ch| ch.is_alphanumeric()).count() >= 3)
            .map(str::to_string)
            .collect();
        if parts.len() < 2 {
            index.push((texts.len(), 0));
        } else {
            index.push((texts.len(), parts.len()));
            texts.extend(parts);
        }
    }
    let start = Instant::now();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = encoder.embed(&refs);
    let suffix = if connectors { "-connectors" } else { "" };
    write_vectors(&out.join(format!("clauses{suffix}.f32")), &vectors);
    write_index(&out.join(format!("clauses{suffix}.json")), &index);
    eprintln!(
        "embedded {} clauses of {} queries in {:.1} s",
        texts.len(),
        queries.len(),
        start.elapsed().as_secs_f64()
    );
}

/// Concrete argument values out of a request (words with a digit, e-mail addresses, URLs):
/// they name no capability, and a sentence vector spends itself on them.
fn strip_values(query: &str) -> String {
    query
        .split_whitespace()
        .filter(|w| {
            !(w.chars().any(|c| c.is_ascii_digit()) || w.contains('@') || w.contains("://"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn write_product(model_dir: &Path, queries: &[String], out: &Path, whole_pass: bool, name: &str) {
    // The product's path, or (--whole-pass) the encoder directly.
    let handle = model_at(model_dir);
    let (model, encoder) = if whole_pass {
        (None, Some(Encoder::load(model_dir).expect("load model")))
    } else {
        (Some(handle.load().expect("load model")), None)
    };
    let start = Instant::now();
    let (mut wholes, mut parts, mut index, mut millis) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for q in queries {
        let t0 = Instant::now();
        let (whole, clauses) = if let Some(encoder) = &encoder {
            let mut texts = vec![q.as_str()];
            texts.extend(query_clauses(q));
            let mut v = encoder.embed(&texts).into_iter();
            (v.next().expect("one vector per text"), v.collect())
        } else {
            let v = model.expect("loaded without --whole-pass").embed_query(q);
            (v.whole, v.clauses.clone())
        };
        millis.push(t0.elapsed().as_secs_f64() * 1e3);
        wholes.push(whole);
        index.push((parts.len(), clauses.len()));
        parts.extend(clauses);
    }
    write_vectors(&out.join(format!("queries-{name}.f32")), &wholes);
    write_vectors(&out.join(format!("clauses-{name}.f32")), &parts);
    write_index(&out.join(format!("clauses-{name}.json")), &index);
    millis.sort_by(f64::total_cmp);
    let at = |p: f64| millis[((millis.len() as f64 * p) as usize).min(millis.len() - 1)];
    eprintln!(
        "embedded {} queries ({} clauses, {name}) in {:.1} s; per query p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms",
        queries.len(),
        parts.len(),
        start.elapsed().as_secs_f64(),
        at(0.5),
        at(0.9),
        at(0.99)
    );
}

fn write_vectors(path: &Path, vectors: &[[f32; tool_search_embed::DIM]]) {
    let mut bytes = Vec::with_capacity(vectors.len() * tool_search_embed::DIM * 4);
    for row in vectors {
        for v in row {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(&bytes))
        .expect("write");
}

fn write_index(path: &Path, index: &[(usize, usize)]) {
    let json: Vec<[usize; 2]> = index.iter().map(|&(a, b)| [a, b]).collect();
    std::fs::write(path, serde_json::to_string(&json).unwrap()).expect("write index");
}
