//! Sentence vectors of every catalog tool and every query, cached on disk for
//! the offline fusion experiments (bench/experiments/hybrid-rerank.mjs), so the
//! minutes of encoder CPU are spent once per tool text, not once per trial.
//!
//! rerank MODEL_DIR DATA_DIR OUT_DIR [--max-tokens N] [--text full|plain|owner] [--queries] [--precision int8|f32]
//!   DATA_DIR holds catalog.jsonl (and queries.jsonl for --queries).
//!   Writes OUT_DIR/tools-<text>-<N>.f32: one row of DIM little-endian f32 per
//!   tool, in catalog.jsonl's id order sorted (the quality example's ordinals),
//!   and OUT_DIR/tool-ids.json; with --queries also OUT_DIR/queries.f32 (one row
//!   per queries.jsonl line, at most 256 word pieces, as the product embeds a query).
//!   --text full: tool_text(name, description, parameter names); plain: name and
//!   description only (what the product embeds, at 32 pieces); owner: plain with the
//!   tool's owner (server / plugin) before the name. --precision: the dense layers'
//!   arithmetic, int8 (default: the product's, tool_search_embed::NUMERICS) or
//!   f32 (for comparisons). Timing goes to stderr.
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use tool_search_embed::{tool_text, Encoder, Precision, MAX_TOKENS};

fn write_rows(path: &Path, rows: &[[f32; tool_search_embed::DIM]]) {
    let mut bytes = Vec::with_capacity(rows.len() * tool_search_embed::DIM * 4);
    for row in rows {
        for v in row {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(&bytes))
        .expect("write vectors");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let option = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let max_tokens: usize =
        option("--max-tokens").map_or(MAX_TOKENS, |v| v.parse().expect("--max-tokens N"));
    let text_kind = option("--text").unwrap_or_else(|| "full".into());
    assert!(
        text_kind == "full" || text_kind == "plain" || text_kind == "owner",
        "--text full|plain|owner"
    );
    let precision = match option("--precision").as_deref() {
        None | Some("int8") => Precision::Int8,
        Some("f32") => Precision::F32,
        Some(other) => panic!("--precision int8|f32, not {other}"),
    };
    let encoder = Encoder::load_with_precision(Path::new(&args[0]), precision).expect("load model");
    let data = Path::new(&args[1]);
    let out = Path::new(&args[2]);
    std::fs::create_dir_all(out).expect("out dir");

    let mut tools: Vec<(String, String)> = std::fs::read_to_string(data.join("catalog.jsonl"))
        .expect("catalog")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let tool: serde_json::Value = serde_json::from_str(line).expect("catalog line");
            let params: Vec<&str> = if text_kind == "full" {
                tool["inputSchema"]["properties"]
                    .as_object()
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            let name = tool["name"].as_str().unwrap_or("");
            let name = if text_kind == "owner" {
                format!("{} {name}", tool["owner"].as_str().unwrap_or(""))
            } else {
                name.to_string()
            };
            let text = tool_text(&name, tool["description"].as_str().unwrap_or(""), &params);
            (tool["id"].as_str().unwrap_or("").to_string(), text)
        })
        .collect();
    tools.sort_by(|a, b| a.0.cmp(&b.0));
    let ids: Vec<&str> = tools.iter().map(|t| t.0.as_str()).collect();
    std::fs::write(
        out.join("tool-ids.json"),
        serde_json::to_string(&ids).unwrap(),
    )
    .expect("write ids");

    if args.iter().any(|a| a == "--queries") {
        let queries: Vec<String> = std::fs::read_to_string(data.join("queries.jsonl"))
            .expect("queries")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).expect("query line")["query"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect();
        let start = Instant::now();
        let texts: Vec<&str> = queries.iter().map(String::as_str).collect();
        write_rows(&out.join("queries.f32"), &encoder.embed(&texts));
        eprintln!(
            "embedded {} queries in {:.1} s",
            texts.len(),
            start.elapsed().as_secs_f64()
        );
    }

    let start = Instant::now();
    let texts: Vec<&str> = tools.iter().map(|t| t.1.as_str()).collect();
    let vectors = encoder.embed_truncated(&texts, max_tokens);
    write_rows(
        &out.join(format!("tools-{text_kind}-{max_tokens}.f32")),
        &vectors,
    );
    eprintln!(
        "embedded {} tools ({text_kind}, max_tokens {max_tokens}, {precision:?}) in {:.1} s",
        texts.len(),
        start.elapsed().as_secs_f64()
    );
}
