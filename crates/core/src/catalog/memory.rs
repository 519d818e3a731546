//! Memory: a catalog's native bytes, the process-wide caches, and releasing what none uses.

use serde::Serialize;

use super::options::RankingMode;
use super::{cache, store, Catalog};
use crate::search::semantic;

/// What [`release_unused`] let go of.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ReleasedMemory {
    /// Cached catalog builds no catalog held.
    pub catalogs: usize,
    /// Stored tool records no catalog held.
    pub records: usize,
}

/// What the process-wide caches hold now ([`memory_in_use`]): to tell a long-lived
/// gateway's growth apart from what the catalogs it uses need.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheMemory {
    /// Built catalog data kept for reuse though no catalog may hold it (at most a few).
    pub recent_builds: usize,
    /// Stored tool records (each distinct record text once).
    pub stored_records: usize,
    /// Their text, bytes.
    pub stored_record_bytes: usize,
}

/// What the process-wide caches hold now (cheap: two counts under their locks).
pub fn memory_in_use() -> CacheMemory {
    let (stored_records, stored_record_bytes) = store::usage();
    CacheMemory {
        recent_builds: cache::recent_count(),
        stored_records,
        stored_record_bytes,
    }
}

/// A memory-pressure hook: drop cached catalog builds and stored tool records
/// that no catalog holds. Catalogs in use are untouched; the next build of
/// released tools reads (and indexes) them again.
pub fn release_unused() -> ReleasedMemory {
    let catalogs = cache::clear();
    ReleasedMemory {
        catalogs,
        records: store::evict_unheld(),
    }
}

impl Catalog {
    /// Estimated heap bytes of this catalog's own data (see
    /// [`CatalogData::native_bytes`]), with its tool vectors when it ranks
    /// hybrid (filled in the background, counted from the start).
    pub fn native_bytes(&self) -> usize {
        let setting = &self.settings.ranking;
        let vectors = match (setting.mode, &setting.model) {
            (RankingMode::Hybrid, Some(_)) => {
                self.data.entries.len() * (std::mem::size_of::<semantic::QVec>() + 32)
            }
            _ => 0,
        };
        self.data.native_bytes + vectors
    }
}
