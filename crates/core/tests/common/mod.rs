//! The repository's copy of the dev catalog (bench/data/retrieval-dev) as
//! entries, for the integration tests that rank against it.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tool_search_core::catalog::{EntryFields, Source, ToolEntry};

/// An entry as a catalog record would give it.
pub fn entry(
    id: String,
    source: &str,
    owner: &str,
    name: String,
    description: String,
    schema: Option<Value>,
) -> ToolEntry {
    ToolEntry::from(EntryFields {
        id,
        source: Source::parse(source).expect("source"),
        owner: owner.to_string(),
        name,
        label: None,
        description,
        input_schema: schema.map(Arc::new),
        output_schema: None,
        mcp: None,
    })
}

/// Every tool of the dev catalog, in file order.
pub fn dev_entries() -> Vec<ToolEntry> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/data/retrieval-dev/catalog.jsonl");
    let text = std::fs::read_to_string(&path).expect("bench/data/retrieval-dev/catalog.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("catalog line");
            let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            entry(
                s("id"),
                &s("source"),
                &s("owner"),
                s("name"),
                s("description"),
                v.get("inputSchema").cloned(),
            )
        })
        .collect()
}
