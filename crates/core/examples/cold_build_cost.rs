//! Where a process's first build of a large catalog spends its time: storing
//! the records (hash and intern), then the build (parse, validate, index,
//! lookups), with nothing cached (a new process).
//!   cargo run --release -p tool-search-core --example cold_build_cost -- <data dir> [runs (5)]
use std::time::Instant;

/// The addon's allocator (src/lib.rs): its builds allocate through mimalloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use tool_search_core::catalog::{store, Catalog, CatalogOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(
        args.next()
            .expect("usage: cold_build_cost <data dir> [runs]"),
    );
    let runs: usize = args.next().map_or(5, |r| r.parse().expect("runs"));
    let text = std::fs::read_to_string(dir.join("catalog.jsonl")).expect("catalog.jsonl");
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let options: CatalogOptions = serde_json::from_str(r#"{ "cache": false }"#).unwrap();
    for run in 0..runs {
        let t0 = Instant::now();
        let stored = store::intern(lines.iter().copied());
        let t1 = Instant::now();
        let catalog = Catalog::from_stored(stored, &options).expect("build");
        let t2 = Instant::now();
        let hits = catalog
            .search("send an email to the team", Some(5.0))
            .unwrap()
            .len();
        let t3 = Instant::now();
        println!(
            "run {run}: {} tools: intern {:.1} ms, build {:.1} ms, first search {:.2} ms ({hits} hits)",
            catalog.size(),
            (t1 - t0).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            (t3 - t2).as_secs_f64() * 1e3,
        );
    }
}
