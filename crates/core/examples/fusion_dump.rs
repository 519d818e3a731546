//! The raw signals of every dev query's candidates, for the learned fusion and the multi-need
//! study (bench/experiments/fusion.mjs; bench/QUALITY.md, "Learned ranking").
//!
//! fusion_dump MODEL_DIR DATA_DIR OUT_DIR [--depth D] [--dense K] [--need K]
//!
//! Writes OUT_DIR/signals.jsonl, one line per queries.jsonl line:
//! `{set, gold, words, clauses, exact, lexTop, pool}` where `lexTop` is the lexical top D (D 100)
//! in order, and `pool` lists every candidate (the lexical top D, the encoder's K nearest tools by
//! the best of the whole query's and the clauses' cosines (K 20, a full scan), and each clause's
//! own lexical top K (K 20)) as `[ordinal, lexical rank (−1: outside the top 1,000), lexical score,
//! strength, weak, whole cosine, [cosine per clause], [clause's lexical score per clause]]`.
//! Also OUT_DIR/tool-ids.json (ids by ordinal, for prerequisites.mjs) and tool-texts.json (the
//! text embedded per tool), and each line's `clauseTexts`. The query vectors are the
//! product's (`SemanticModel::embed_query`), the tool vectors the product's int8 vectors of
//! `tool_text_of` (cached in OUT_DIR/tools.qvec: 25 s of one core for the dev set the first time).
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use serde_json::json;
use tool_search_core::search::semantic::{model_at, query_clauses, tool_text_of, QVec};
use tool_search_core::search::{RankingParams, SearchIndex};
use tool_search_embed::DIM;

#[path = "dev_data/mod.rs"]
mod dev_data;
use dev_data::{load_catalog, load_queries};

fn option(args: &[String], name: &str, fallback: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(fallback)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (model_dir, data, out) = (
        Path::new(&args[0]),
        Path::new(&args[1]),
        Path::new(&args[2]),
    );
    let depth = option(&args, "--depth", 100);
    let dense = option(&args, "--dense", 20);
    let need = option(&args, "--need", 20);
    std::fs::create_dir_all(out).expect("out dir");
    let entries = load_catalog(data);
    let ordinal_of: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    let queries = load_queries(data, &ordinal_of);
    let ids: Vec<&str> = entries.iter().map(|e| e.id.as_str()).collect();
    std::fs::write(
        out.join("tool-ids.json"),
        serde_json::to_string(&ids).unwrap(),
    )
    .expect("write ids");
    // The texts the product embeds (for trying another encoder on the same candidates).
    let texts: Vec<String> = entries.iter().map(tool_text_of).collect();
    std::fs::write(
        out.join("tool-texts.json"),
        serde_json::to_string(&texts).unwrap(),
    )
    .expect("write texts");

    let handle = model_at(model_dir);
    let model = handle.load().expect("load model").clone();
    let rows = tool_vectors(&model, &entries, &out.join("tools.qvec"));
    let index = SearchIndex::build(&entries).expect("build");
    let params = RankingParams::default();

    let mut file =
        std::io::BufWriter::new(std::fs::File::create(out.join("signals.jsonl")).expect("create"));
    let start = Instant::now();
    for (qi, q) in queries.iter().enumerate() {
        let deep = index.search_with(&q.text, 1000, &|_| true, &params);
        let lex_rank: HashMap<usize, usize> = deep
            .iter()
            .enumerate()
            .map(|(r, h)| (h.ordinal, r))
            .collect();
        let folded = q.text.trim().to_lowercase();
        let exact = deep
            .iter()
            .take_while(|h| {
                entries[h.ordinal].id.to_lowercase() == folded
                    || entries[h.ordinal].name.to_lowercase() == folded
            })
            .count();
        let vectors = model.embed_query(&q.text);
        let clauses = query_clauses(&q.text);
        // The pool: lexical top D, then dense and per-clause candidates (kept in first-seen order).
        let mut pool: Vec<usize> = deep.iter().take(depth).map(|h| h.ordinal).collect();
        let mut seen: std::collections::HashSet<usize> = pool.iter().copied().collect();
        let mut add = |o: usize, pool: &mut Vec<usize>| {
            if seen.insert(o) {
                pool.push(o);
            }
        };
        if dense > 0 {
            let mut best: Vec<(f32, usize)> = rows
                .iter()
                .enumerate()
                .map(|(o, row)| {
                    let whole = row.cosine(&vectors.whole);
                    (
                        vectors
                            .clauses
                            .iter()
                            .map(|c| row.cosine(c))
                            .fold(whole, f32::max),
                        o,
                    )
                })
                .collect();
            best.select_nth_unstable_by(dense, |a, b| b.0.total_cmp(&a.0));
            best.truncate(dense);
            best.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            for (_, o) in best {
                add(o, &mut pool);
            }
        }
        let mut clause_lex: Vec<HashMap<usize, f32>> = Vec::new();
        for clause in &clauses {
            let hits = index.search_with(clause, need, &|_| true, &params);
            for h in &hits {
                add(h.ordinal, &mut pool);
            }
            clause_lex.push(hits.iter().map(|h| (h.ordinal, h.score)).collect());
        }
        let by_ordinal: HashMap<usize, &tool_search_core::search::ScoredHit> =
            deep.iter().map(|h| (h.ordinal, h)).collect();
        let round = |x: f32| (x as f64 * 1e4).round() / 1e4;
        let items: Vec<serde_json::Value> = pool
            .iter()
            .map(|&o| {
                let hit = by_ordinal.get(&o);
                let row = &rows[o];
                json!([
                    o,
                    lex_rank.get(&o).map_or(-1, |&r| r as i64),
                    round(hit.map_or(0.0, |h| h.score)),
                    round(hit.map_or(0.0, |h| h.strength)),
                    hit.is_some_and(|h| h.weak) as u8,
                    round(row.cosine(&vectors.whole)),
                    vectors
                        .clauses
                        .iter()
                        .map(|c| round(row.cosine(c)))
                        .collect::<Vec<_>>(),
                    clause_lex
                        .iter()
                        .map(|m| round(m.get(&o).copied().unwrap_or(0.0)))
                        .collect::<Vec<_>>(),
                ])
            })
            .collect();
        let line = json!({
            "set": q.set,
            "gold": q.gold,
            "words": q.text.split_whitespace().count(),
            "clauses": clauses.len(),
            "clauseTexts": clauses,
            "exact": exact,
            "lexTop": deep.iter().take(depth).map(|h| h.ordinal).collect::<Vec<_>>(),
            "pool": items,
        });
        writeln!(file, "{line}").expect("write");
        if qi % 500 == 0 {
            eprintln!(
                "{qi}/{} queries, {:.0} s",
                queries.len(),
                start.elapsed().as_secs_f64()
            );
        }
    }
    file.flush().expect("flush");
    let mut sizes: BTreeMap<&str, usize> = BTreeMap::new();
    for q in &queries {
        *sizes.entry(q.set.as_str()).or_default() += 1;
    }
    eprintln!(
        "wrote {} queries ({sizes:?}) in {:.0} s",
        queries.len(),
        start.elapsed().as_secs_f64()
    );
}

/// The product's tool vectors (int8, `tool_text_of`), read from `path` when it holds one row per
/// entry, else embedded and written there.
fn tool_vectors(
    model: &tool_search_core::search::semantic::SemanticModel,
    entries: &[tool_search_core::catalog::ToolEntry],
    path: &Path,
) -> Vec<QVec> {
    let row_bytes = 4 + DIM;
    if let Ok(bytes) = std::fs::read(path) {
        if bytes.len() == entries.len() * row_bytes {
            return bytes
                .chunks_exact(row_bytes)
                .map(|chunk| {
                    let scale = f32::from_le_bytes(chunk[..4].try_into().unwrap());
                    let mut values = [0i8; DIM];
                    for (v, &b) in values.iter_mut().zip(&chunk[4..]) {
                        *v = b as i8;
                    }
                    QVec { scale, values }
                })
                .collect();
        }
    }
    let start = Instant::now();
    let texts: Vec<String> = entries.iter().map(tool_text_of).collect();
    let mut rows = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(256) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        rows.extend(model.embed_tools(&refs));
        eprintln!(
            "tool vectors {}/{} ({:.0} s)",
            rows.len(),
            texts.len(),
            start.elapsed().as_secs_f64()
        );
    }
    let mut bytes = Vec::with_capacity(rows.len() * row_bytes);
    for row in &rows {
        bytes.extend_from_slice(&row.scale.to_le_bytes());
        bytes.extend(row.values.iter().map(|&v| v as u8));
    }
    std::fs::write(path, bytes).expect("write tool vectors");
    rows
}
