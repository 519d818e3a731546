//! The dev-data format the evaluation examples read (`quality`, `weak_calibration`, `clause_vectors`):
//! `catalog.jsonl` ({id, source, owner, name, description, inputSchema?}) and
//! `queries.jsonl` ({set, query, gold: [ids]}). Shared with `#[path]`; not an example itself.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use tool_search_core::catalog::{Source, ToolEntry};

pub struct Query {
    pub set: String,
    pub text: String,
    /// Ordinals of the relevant tools (ids absent from the catalog are dropped).
    pub gold: Vec<usize>,
}

fn read_lines(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line in {}: {e}", path.display())))
        .collect()
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

pub fn load_catalog(dir: &std::path::Path) -> Vec<ToolEntry> {
    let mut entries: Vec<ToolEntry> = read_lines(&dir.join("catalog.jsonl"))
        .into_iter()
        .map(|v| {
            let source = Source::parse(&str_field(&v, "source")).unwrap_or(Source::Mcp);
            ToolEntry {
                id: str_field(&v, "id"),
                source,
                owner: str_field(&v, "owner"),
                name: str_field(&v, "name"),
                label: v.get("label").and_then(Value::as_str).map(str::to_string),
                description: str_field(&v, "description"),
                input_schema: v.get("inputSchema").cloned().map(Arc::new),
                output_schema: None,
                mcp: None,
            }
        })
        .collect();
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    entries
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
                .map(|ids| ids.iter().filter_map(|id| id.as_str().and_then(|id| ordinal_of.get(id).copied())).collect())
                .unwrap_or_default(),
        })
        .collect()
}
