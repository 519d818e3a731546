//! Memory: a catalog's native bytes, the process-wide caches, releasing what none uses, and
//! the bytes a host's garbage collector is told its catalog objects hold.

use std::cell::RefCell;
use std::collections::HashMap;

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

/// What the package holds in native memory now ([`native_memory`]): the catalog data host
/// objects of this thread hold, with the process-wide caches.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NativeMemory {
    /// Distinct catalog data host objects of this thread hold.
    pub held_catalogs: usize,
    /// Their estimated bytes, as reported to the host.
    pub held_bytes: i64,
    /// See [`CacheMemory`].
    pub recent_builds: usize,
    /// See [`CacheMemory`].
    pub stored_records: usize,
    /// See [`CacheMemory`].
    pub stored_record_bytes: usize,
}

/// [`NativeMemory`] now: cheap (counts under their locks).
pub fn native_memory() -> NativeMemory {
    let (held_catalogs, held_bytes) = host_held();
    let caches = memory_in_use();
    NativeMemory {
        held_catalogs,
        held_bytes,
        recent_builds: caches.recent_builds,
        stored_records: caches.stored_records,
        stored_record_bytes: caches.stored_record_bytes,
    }
}

thread_local! {
    /// Data address → (host objects holding it, bytes reported). Per thread: each JS isolate
    /// (a Node worker) has its own garbage collector and its own accounting.
    static HOST_HELD: RefCell<HashMap<usize, (u32, i64)>> = RefCell::new(HashMap::new());
}

/// Catalog data host objects of this thread hold now, and the bytes reported for them.
pub fn host_held() -> (usize, i64) {
    HOST_HELD.with(|map| {
        let map = map.borrow();
        (map.len(), map.values().map(|(_, bytes)| bytes).sum())
    })
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

    /// A host object (a JS `ToolCatalog`) now holds this catalog. A catalog version holds
    /// megabytes behind a small JS object: unreported, the host sees no reason to collect
    /// superseded versions on a quiet loop. Each distinct catalog data is reported once while
    /// any object of this thread holds it: the bytes to report now (0 when already held).
    pub fn host_hold(&self) -> i64 {
        HOST_HELD.with(|map| {
            let mut map = map.borrow_mut();
            let slot = map.entry(self.data_key()).or_insert((0, 0));
            slot.0 += 1;
            if slot.0 > 1 {
                return 0;
            }
            slot.1 = i64::try_from(self.native_bytes()).unwrap_or(i64::MAX);
            slot.1
        })
    }

    /// A host object holding this catalog was collected: the bytes to give back (the last
    /// object of its data gives back what [`Catalog::host_hold`] reported; others 0).
    pub fn host_release(&self) -> i64 {
        HOST_HELD.with(|map| {
            let mut map = map.borrow_mut();
            let key = self.data_key();
            let Some(slot) = map.get_mut(&key) else {
                return 0;
            };
            slot.0 -= 1;
            if slot.0 > 0 {
                return 0;
            }
            map.remove(&key).map_or(0, |(_, bytes)| bytes)
        })
    }

    fn data_key(&self) -> usize {
        std::ptr::from_ref(self.data()) as usize
    }
}
