//! Sentence vectors of each query's clauses (the lexical planner's split), for
//! the offline multi-vector experiments (bench/experiments/hybrid-rerank.mjs).
//!
//! clause_vectors MODEL_DIR DATA_DIR OUT_DIR [--connectors]
//!   Writes OUT_DIR/clauses[-connectors].f32 (one row of DIM little-endian f32 per
//!   clause) and OUT_DIR/clauses[-connectors].json ([[first row, count], ...] per
//!   queries.jsonl line; count 0 when the query has a single clause).
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

#[path = "dev_data/mod.rs"]
#[allow(dead_code)] // only the queries are read here
mod dev_data;
use dev_data::load_queries;
use tool_search_core::search::clauses;
use tool_search_embed::Encoder;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let connectors = args.iter().any(|a| a == "--connectors");
    let encoder = Encoder::load(Path::new(&args[0])).expect("load model");
    let data = Path::new(&args[1]);
    let out = Path::new(&args[2]);
    std::fs::create_dir_all(out).expect("out dir");
    let queries: Vec<String> = load_queries(data, &HashMap::new()).into_iter().map(|q| q.text).collect();
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
    let mut bytes = Vec::with_capacity(vectors.len() * tool_search_embed::DIM * 4);
    for row in &vectors {
        for v in row {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::File::create(out.join(format!("clauses{suffix}.f32"))).and_then(|mut f| f.write_all(&bytes)).expect("write");
    let json: Vec<[usize; 2]> = index.iter().map(|&(a, b)| [a, b]).collect();
    std::fs::write(out.join(format!("clauses{suffix}.json")), serde_json::to_string(&json).unwrap()).expect("write index");
    eprintln!("embedded {} clauses of {} queries in {:.1} s", texts.len(), queries.len(), start.elapsed().as_secs_f64());
}
