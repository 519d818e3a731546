//! The dev-data format the evaluation examples read (`quality`, `weak_calibration`, `clause_vectors`):
//! `catalog.jsonl` ({id, source, owner, name, description, inputSchema?}) and
//! `queries.jsonl` ({set, query, gold: [ids]}). Shared with `#[path]`; not an example itself.

use serde_json::Value;
use std::collections::HashMap;
use tool_search_core::catalog::{Catalog, CatalogOptions, ToolEntry};

pub struct Query {
    pub set: String,
    pub text: String,
    /// Ordinals of the relevant tools (ids absent from the catalog are dropped).
    pub gold: Vec<usize>,
}

fn read_lines(path: &std::path::Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("bad line in {}: {e}", path.display()))
        })
        .collect()
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

/// The catalog's entries as the product stores them (validated, descriptions bounded, sorted by
/// id): the examples rank what a gateway's catalog would.
pub fn load_catalog(dir: &std::path::Path) -> Vec<ToolEntry> {
    let records = read_lines(&dir.join("catalog.jsonl"));
    let options = CatalogOptions {
        strict: true,
        cache: Some(false),
        ..CatalogOptions::default()
    };
    let catalog = Catalog::from_records(records, &options)
        .unwrap_or_else(|e| panic!("catalog in {}: {}", dir.display(), e.message));
    catalog.entries().cloned().collect()
}

pub fn load_queries(dir: &std::path::Path, ordinal_of: &HashMap<&str, usize>) -> Vec<Query> {
    read_lines(&dir.join("queries.jsonl"))
        .into_iter()
        .map(|v| Query {
            set: str_field(&v, "set"),
            text: str_field(&v, "query"),
            gold: v
                .get("gold")
                .and_then(Value::as_array)
                .map(|ids| {
                    ids.iter()
                        .filter_map(|id| id.as_str().and_then(|id| ordinal_of.get(id).copied()))
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}
