//! `CatalogData::native_bytes` (what the binding reports to V8) against the
//! heap a counting allocator sees: a full build of the dev catalog, and a
//! derived version (one server's 30 tools changed) held beside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use serde_json::{json, Value};
use tool_search_core::catalog::{Catalog, CatalogOptions, SourceSelector};

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if n > l.size() {
            LIVE.fetch_add(n - l.size(), Relaxed);
        } else {
            LIVE.fetch_sub(l.size() - n, Relaxed);
        }
        unsafe { System.realloc(p, l, n) }
    }
}
#[global_allocator]
static A: Counting = Counting;

fn within(estimate: usize, measured: usize, what: &str) {
    let ratio = estimate as f64 / measured as f64;
    println!("{what}: estimated {estimate} bytes, measured {measured} bytes (x{ratio:.2})");
    assert!(
        (0.5..=2.0).contains(&ratio),
        "{what}: estimated {estimate} bytes, measured {measured} (x{ratio:.2})"
    );
}

#[test]
fn the_reported_native_memory_follows_the_measured_heap() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/data/retrieval-dev/catalog.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let options = CatalogOptions {
        cache: Some(false),
        ..Default::default()
    };
    let before = LIVE.load(Relaxed);
    let catalog = Catalog::from_json_text(&text, &options).unwrap();
    let full = LIVE.load(Relaxed) - before;
    within(catalog.data().native_bytes, full, "full build, 13k tools");

    let first = &catalog.data().entries[0];
    let server: Vec<Value> = (0..30)
        .map(|i| json!({ "name": format!("live_{i}"), "description": format!("Live tool {i}: {}", first.description), "inputSchema": first.input_schema.as_deref() }))
        .collect();
    let selector: SourceSelector =
        serde_json::from_value(json!({ "source": "mcp", "owner": "live" })).unwrap();
    let before = LIVE.load(Relaxed);
    let next = catalog
        .with_source(&selector, &Value::from(server).to_string())
        .unwrap();
    let derived = LIVE.load(Relaxed) - before;
    within(
        next.data().native_bytes,
        derived,
        "derived version, 30 tools changed",
    );
}
