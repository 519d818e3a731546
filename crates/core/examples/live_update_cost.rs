//! CPU cost of following a changed MCP server (`with_source` of one owner on
//! a large catalog), what an update keeps of the tools it did not change
//! (their compiled validators), and lexical search latency before and after.
//!   cargo run --release -p tool-search-core --example live_update_cost -- <data dir> [server tools (30)] [updates (100)]
//! `<data dir>` holds `catalog.jsonl` and `queries.jsonl` (bench/data/retrieval-dev).
//! CPU is the calling thread's (`CLOCK_THREAD_CPUTIME_ID`) unless said "process".
use std::time::Instant;

use serde_json::{json, Value};
use tool_search_core::catalog::{Catalog, CatalogOptions, SearchOptions, SourceSelector};

fn cpu(clock: libc::clockid_t) -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

fn thread_ms() -> f64 {
    cpu(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn process_ms() -> f64 {
    cpu(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn summary(mut samples: Vec<f64>) -> String {
    samples.sort_by(f64::total_cmp);
    format!(
        "median {:.2} ms, p90 {:.2} ms, max {:.2} ms",
        percentile(&samples, 0.5),
        percentile(&samples, 0.9),
        samples[samples.len() - 1]
    )
}

/// p50 / p99 of lexical search (limit 10) over every query, 3 rounds.
fn search_latency(catalog: &Catalog, queries: &[String]) -> String {
    let mut samples = Vec::with_capacity(queries.len() * 3);
    for _ in 0..3 {
        for q in queries {
            let started = Instant::now();
            std::hint::black_box(catalog.search(q, &SearchOptions::hits(Some(10.0))).ok());
            samples.push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    samples.sort_by(f64::total_cmp);
    format!(
        "p50 {:.3} ms, p99 {:.3} ms",
        percentile(&samples, 0.5),
        percentile(&samples, 0.99)
    )
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("data dir"));
    let size: usize = std::env::args()
        .nth(2)
        .map_or(30, |s| s.parse().expect("server tools"));
    let updates: usize = std::env::args()
        .nth(3)
        .map_or(100, |s| s.parse().expect("updates"));
    let text = std::fs::read_to_string(dir.join("catalog.jsonl")).unwrap();
    let queries: Vec<String> = std::fs::read_to_string(dir.join("queries.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["query"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let tools: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The server's tools: the catalog's first `size` tools renamed, with a
    // description that changes at each version `v` (every tool changes).
    let server = |v: usize| -> String {
        let list: Vec<Value> = tools[..size]
            .iter()
            .enumerate()
            .map(|(i, t)| {
                json!({ "name": format!("{}_{i}", t["name"].as_str().unwrap_or("tool")),
                    "description": format!("{} (v{v})", t["description"].as_str().unwrap_or("")), "inputSchema": t["inputSchema"] })
            })
            .collect();
        Value::from(list).to_string()
    };
    // The gateway's options (the build cache on).
    let options = CatalogOptions::default();
    let selector: SourceSelector =
        serde_json::from_value(json!({ "source": "mcp", "owner": "live" })).unwrap();

    let started = thread_ms();
    let full = Catalog::from_json_text(&text, &options).unwrap();
    println!(
        "full build: {} tools, {:.0} ms CPU",
        full.size(),
        thread_ms() - started
    );

    // Validators compiled on the full build, for the first 1,000 tools.
    let probe: Vec<String> = full.entries().take(1000).map(|e| e.id.clone()).collect();
    let validate_all = |catalog: &Catalog| {
        let started = thread_ms();
        for id in &probe {
            std::hint::black_box(catalog.validate_args(id, &json!({})).ok());
        }
        thread_ms() - started
    };
    let compile = validate_all(&full);

    let started = thread_ms();
    let first = full.with_source(&selector, &server(0)).unwrap();
    let first_cpu = thread_ms() - started;
    println!("first update (adds a {size}-tool server): {first_cpu:.2} ms CPU");
    println!(
        "  validating {} tools: {compile:.1} ms on the full build (compiling), {:.1} ms again on the update",
        probe.len(),
        validate_all(&first)
    );

    let mut catalog = first;
    let mut samples = Vec::with_capacity(updates);
    let process_started = process_ms();
    let wall = Instant::now();
    for v in 1..=updates {
        let started = thread_ms();
        let next = catalog.with_source(&selector, &server(v)).unwrap();
        samples.push(thread_ms() - started);
        catalog = next;
    }
    let wall = wall.elapsed().as_secs_f64() * 1e3;
    let process = process_ms() - process_started;
    println!(
        "{updates} chained updates of the {size}-tool server (every tool changed): {}",
        summary(samples)
    );
    println!(
        "  process CPU {:.2} ms per update (all threads, drops included), wall {:.2} ms per update",
        process / updates as f64,
        wall / updates as f64
    );
    println!("  index parts after: {}", catalog.data().index.part_count());

    println!(
        "search on the full build: {}",
        search_latency(&full, &queries)
    );
    println!(
        "search after the updates: {}",
        search_latency(&catalog, &queries)
    );
}
