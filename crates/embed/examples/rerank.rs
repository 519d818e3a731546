//! Cosines between queries and their lexical candidates, for the offline
//! fusion experiment (bench/experiments/hybrid-rerank.mjs).
//!
//! rerank MODEL_DIR CATALOG.jsonl CANDIDATES.json [--max-tokens N]
//!   CANDIDATES.json: {"queries": [{"query": str, "candidates": [tool id, ...]}, ...]}
//!   Prints one JSON array per query: the cosine of each candidate, in order.
//!   Tool texts are tool_text(name, description, parameter names); only tools
//!   that appear as candidates are embedded. Timing goes to stderr.
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use tool_search_embed::{cosine, tool_text, Encoder, MAX_TOKENS};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let max_tokens: usize = args
        .iter()
        .position(|a| a == "--max-tokens")
        .and_then(|i| args.get(i + 1))
        .map_or(MAX_TOKENS, |v| v.parse().expect("--max-tokens N"));
    let encoder = Encoder::load(Path::new(&args[0])).expect("load model");
    let mut texts: HashMap<String, String> = HashMap::new();
    for line in std::fs::read_to_string(&args[1]).expect("catalog").lines().filter(|l| !l.trim().is_empty()) {
        let tool: serde_json::Value = serde_json::from_str(line).expect("catalog line");
        let params: Vec<&str> = tool["inputSchema"]["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let text = tool_text(tool["name"].as_str().unwrap_or(""), tool["description"].as_str().unwrap_or(""), &params);
        texts.insert(tool["id"].as_str().unwrap_or("").to_string(), text);
    }
    let request: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&args[2]).expect("candidates")).expect("json");
    let queries = request["queries"].as_array().expect("queries");

    let mut needed: Vec<&str> = queries
        .iter()
        .flat_map(|q| q["candidates"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()))
        .collect();
    needed.sort_unstable();
    needed.dedup();
    let start = Instant::now();
    let tool_texts: Vec<&str> = needed.iter().map(|id| texts.get(*id).map_or("", String::as_str)).collect();
    let tool_vectors = encoder.embed_truncated(&tool_texts, max_tokens);
    let index: HashMap<&str, usize> = needed.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    eprintln!("embedded {} tools (max_tokens {max_tokens}) in {:.1} s", needed.len(), start.elapsed().as_secs_f64());

    let start = Instant::now();
    let query_texts: Vec<&str> = queries.iter().map(|q| q["query"].as_str().unwrap_or("")).collect();
    let query_vectors = encoder.embed(&query_texts);
    eprintln!("embedded {} queries in {:.1} s", queries.len(), start.elapsed().as_secs_f64());
    for (q, qv) in queries.iter().zip(&query_vectors) {
        let cosines: Vec<f32> = q["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| cosine(qv, &tool_vectors[index[c.as_str().unwrap()]]))
            .collect();
        println!("{}", serde_json::to_string(&cosines).unwrap());
    }
}
