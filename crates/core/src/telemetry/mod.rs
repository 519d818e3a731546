//! Telemetry: running counters shared by a catalog and its narrowed views.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// Running totals for one counter scope. A catalog and every view made from it
/// by `restrict` share one `Counters`; a replaced catalog gets a new scope.
#[derive(Debug)]
pub struct Counters {
    scope: String,
    searches: AtomicU64,
    describes: AtomicU64,
    calls: AtomicU64,
}

impl Counters {
    pub fn new(fingerprint: &str) -> Counters {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let seed = format!("{fingerprint}:{n}:{nanos}:{}", std::process::id());
        let scope = blake3::hash(seed.as_bytes()).to_hex()[..16].to_string();
        Counters {
            scope,
            searches: AtomicU64::new(0),
            describes: AtomicU64::new(0),
            calls: AtomicU64::new(0),
        }
    }

    pub fn scope(&self) -> &str {
        &self.scope
    }
    /// Count `queries` searches: a batch counts each of its queries, as the
    /// gateway's own telemetry does.
    pub fn record_search(&self, queries: u64) {
        self.searches.fetch_add(queries, Ordering::Relaxed);
    }
    pub fn record_describe(&self) {
        self.describes.fetch_add(1, Ordering::Relaxed);
    }
    pub fn record_call(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
    }
    pub fn searches(&self) -> u64 {
        self.searches.load(Ordering::Relaxed)
    }
    pub fn describes(&self) -> u64 {
        self.describes.load(Ordering::Relaxed)
    }
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

/// Tool counts per source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SourceCounts {
    pub openclaw: u64,
    pub mcp: u64,
    pub client: u64,
}

/// Contract §6: per-catalog telemetry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogTelemetry {
    pub catalog_size: u64,
    pub sources: SourceCounts,
    pub counter_scope: String,
    /// Search queries run (a batch of five counts five).
    pub search_count: u64,
    pub describe_count: u64,
    pub call_count: u64,
}
