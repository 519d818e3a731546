//! Heap bytes held by one built catalog, by part (counting allocator), and by
//! a live catalog after 100 updates of one server (old versions dropped).
//!   cargo run --release -p tool-search-core --example catalog_memory -- <catalog.jsonl> [server tools (30)]
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
        PEAK.fetch_max(now, Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if n > l.size() {
            let now = LIVE.fetch_add(n - l.size(), Relaxed) + n - l.size();
            PEAK.fetch_max(now, Relaxed);
        } else {
            LIVE.fetch_sub(l.size() - n, Relaxed);
        }
        unsafe { System.realloc(p, l, n) }
    }
}
#[global_allocator]
static A: Counting = Counting;

fn mb(b: usize) -> f64 {
    b as f64 / (1 << 20) as f64
}

fn main() {
    let path = std::env::args().nth(1).expect("catalog path");
    let text = std::fs::read_to_string(path).unwrap();
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let options = tool_search_core::catalog::CatalogOptions {
        cache: Some(false),
        ..Default::default()
    };
    let catalog = tool_search_core::catalog::Catalog::from_json_text(&text, &options).unwrap();
    let held = LIVE.load(Relaxed) - base;
    println!(
        "tools {} held {:.1} MiB peak {:.1} MiB (text {:.1} MiB)",
        catalog.size(),
        mb(held),
        mb(PEAK.load(Relaxed) - base),
        mb(text.len())
    );
    let entries = &catalog.data().entries;
    let before = LIVE.load(Relaxed);
    let index = tool_search_core::search::SearchIndex::build(entries).unwrap();
    println!("  search index {:.1} MiB", mb(LIVE.load(Relaxed) - before));
    drop(index);
    let before = LIVE.load(Relaxed);
    let schemas: Vec<serde_json::Value> = entries
        .iter()
        .filter_map(|e| e.input_schema.as_ref())
        .map(|s| serde_json::from_str(&s.to_string()).unwrap())
        .collect();
    let schema_text: usize = entries
        .iter()
        .filter_map(|e| e.input_schema.as_ref())
        .map(|s| s.to_string().len())
        .sum();
    println!(
        "  input schemas as Value {:.1} MiB ({} schemas, {:.1} MiB as text)",
        mb(LIVE.load(Relaxed) - before),
        schemas.len(),
        mb(schema_text)
    );
    drop(schemas);
    let records: usize = catalog.data().records.iter().map(|r| r.text.len()).sum();
    println!("  record texts {:.1} MiB", mb(records));
    let strings: usize = entries
        .iter()
        .map(|e| e.id.len() + e.owner.len() + e.name.len() + e.description.len())
        .sum();
    println!(
        "  entry strings {:.1} MiB, entry structs {:.1} MiB",
        mb(strings),
        mb(entries.len() * std::mem::size_of::<tool_search_core::catalog::ToolEntry>())
    );
    drop(catalog);
    live_updates(&text);
}

/// One catalog with a server's tools, then 100 updates of that server, each
/// applied to the previous version (dropped). Default options: the build
/// cache keeps a few recent versions, as in a gateway.
fn live_updates(text: &str) {
    use tool_search_core::catalog::{release_unused, Catalog, SourceSelector};
    let size: usize = std::env::args()
        .nth(2)
        .map_or(30, |s| s.parse().expect("server tools"));
    let tools: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let server = |v: usize| -> String {
        let list: Vec<serde_json::Value> = tools[..size]
            .iter()
            .enumerate()
            .map(|(i, t)| {
                serde_json::json!({ "name": format!("{}_{i}", t["name"].as_str().unwrap_or("tool")),
                    "description": format!("{} (v{v})", t["description"].as_str().unwrap_or("")), "inputSchema": t["inputSchema"] })
            })
            .collect();
        serde_json::Value::from(list).to_string()
    };
    let settle = || std::thread::sleep(std::time::Duration::from_millis(300));
    release_unused();
    settle();
    let base = LIVE.load(Relaxed);
    let options = tool_search_core::catalog::CatalogOptions::default();
    let selector: SourceSelector =
        serde_json::from_value(serde_json::json!({ "source": "mcp", "owner": "live" })).unwrap();
    let mut catalog = Catalog::from_json_text(text, &options)
        .unwrap()
        .with_source(&selector, &server(0))
        .unwrap();
    // Only this version: the build cache let go of the first build.
    release_unused();
    settle();
    let one = LIVE.load(Relaxed) - base;
    println!(
        "live catalog ({} tools, a server of {size}): held {:.1} MiB",
        catalog.size(),
        mb(one)
    );
    let started = std::time::Instant::now();
    for v in 1..=100 {
        catalog = catalog.with_source(&selector, &server(v)).unwrap();
    }
    let elapsed = started.elapsed();
    settle();
    let after = LIVE.load(Relaxed) - base;
    println!(
        "  after 100 updates: held {:.1} MiB ({:+.1}% of one catalog; {} index parts; {:.1} ms per update)",
        mb(after),
        (after as f64 / one as f64 - 1.0) * 100.0,
        catalog.data().index.part_count(),
        elapsed.as_secs_f64() * 1000.0 / 100.0
    );
    release_unused();
    settle();
    let released = LIVE.load(Relaxed) - base;
    println!(
        "  after release_unused (cached versions, unheld records): held {:.1} MiB ({:+.1}%)",
        mb(released),
        (released as f64 / one as f64 - 1.0) * 100.0
    );
}
