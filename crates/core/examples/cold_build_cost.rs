//! Where a process's first build of a large catalog spends its time: storing
//! the records (hash and intern), then the build (parse, validate, index,
//! lookups), with nothing in the process's cache (a new process): without an
//! index cache, with an empty one (the index is built and stored), and with
//! the index stored by an earlier run (loaded).
//!   cargo run --release -p tool-search-core --example cold_build_cost -- <data dir> [runs (5)] [loaded]
//! (`loaded`: that case alone, after one store: for a profiler.)
use std::time::Instant;

/// The addon's allocator (src/lib.rs): its builds allocate through mimalloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use tool_search_core::catalog::{release_unused, store, Catalog, CatalogOptions, SearchOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(
        args.next()
            .expect("usage: cold_build_cost <data dir> [runs]"),
    );
    let runs: usize = args.next().map_or(5, |r| r.parse().expect("runs"));
    let loaded_only = args.next().as_deref() == Some("loaded");
    let text = std::fs::read_to_string(dir.join("catalog.jsonl")).expect("catalog.jsonl");
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let cache = std::env::temp_dir().join(format!("cold-build-cost-{}", std::process::id()));
    let options = |index_cache: serde_json::Value| -> CatalogOptions {
        serde_json::from_value(serde_json::json!({ "indexCache": index_cache })).unwrap()
    };
    let cases = [
        ("no index cache", serde_json::json!(false), false),
        ("index built and stored", serde_json::json!(cache), true),
        ("index loaded", serde_json::json!(cache), false),
    ];
    for (case, index_cache, fresh) in cases {
        let runs = match (loaded_only, case == "index loaded", fresh) {
            (true, false, true) => 1,
            (true, false, false) => 0,
            _ => runs,
        };
        for run in 0..runs {
            if fresh {
                let _ = std::fs::remove_dir_all(&cache);
            }
            // A new process: nothing built or stored in memory.
            release_unused();
            let t0 = Instant::now();
            let stored = store::intern(lines.iter().copied());
            let t1 = Instant::now();
            // As the addon builds (its worker may use a second thread).
            let catalog = tool_search_core::search::with_second_thread(|| {
                Catalog::from_stored(stored, &options(index_cache.clone()))
            })
            .expect("build");
            let t2 = Instant::now();
            let hits = catalog
                .search("send an email to the team", &SearchOptions::hits(Some(5.0)))
                .unwrap()
                .len();
            let t3 = Instant::now();
            println!(
                "{case}, run {run}: {} tools: intern {:.1} ms, build {:.1} ms ({:?}), first search {:.2} ms ({hits} hits)",
                catalog.size(),
                (t1 - t0).as_secs_f64() * 1e3,
                (t2 - t1).as_secs_f64() * 1e3,
                catalog.data().index_cache,
                (t3 - t2).as_secs_f64() * 1e3,
            );
        }
    }
    if let Ok(listing) = std::fs::read_dir(&cache) {
        for item in listing.flatten() {
            let len = item.metadata().map_or(0, |m| m.len());
            println!("{}: {len} bytes", item.file_name().to_string_lossy());
        }
    }
    let _ = std::fs::remove_dir_all(&cache);
}
