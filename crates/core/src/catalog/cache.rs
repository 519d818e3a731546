//! Process-wide reuse of built catalog data. An unchanged catalog (same text,
//! or same validated content) is not parsed or indexed again. Keys are
//! BLAKE3 hashes, so a hostile client cannot forge a collision to be served
//! another run's tools.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};

use super::data::CatalogData;

/// Recently used data kept alive even when no catalog holds it (one gateway
/// typically alternates between a few agents' tool sets).
const KEEP_RECENT: usize = 4;

#[derive(Default)]
struct Cache {
    live: HashMap<String, Weak<CatalogData>>,
    recent: Vec<Arc<CatalogData>>,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

pub fn get(key: &str) -> Option<Arc<CatalogData>> {
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    let data = cache.live.get(key)?.upgrade();
    if data.is_none() {
        cache.live.remove(key);
    }
    if let Some(data) = &data {
        touch(&mut cache, data);
    }
    data
}

pub fn put(keys: &[&str], data: &Arc<CatalogData>) {
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    cache.live.retain(|_, weak| weak.strong_count() > 0);
    for key in keys {
        cache.live.insert((*key).to_string(), Arc::downgrade(data));
    }
    touch(&mut cache, data);
}

/// `put` without keeping `data` alive: for a live catalog's versions, which
/// follow one another (keeping recent ones would hold superseded tools).
pub fn put_weak(keys: &[&str], data: &Arc<CatalogData>) {
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    cache.live.retain(|_, weak| weak.strong_count() > 0);
    for key in keys {
        cache.live.insert((*key).to_string(), Arc::downgrade(data));
    }
}

fn touch(cache: &mut Cache, data: &Arc<CatalogData>) {
    cache.recent.retain(|d| !Arc::ptr_eq(d, data));
    cache.recent.push(Arc::clone(data));
    if cache.recent.len() > KEEP_RECENT {
        let mut oldest = cache.recent.remove(0);
        super::release::release(&mut oldest);
    }
}

/// Keys being built right now, and a signal when one is done.
fn in_flight() -> &'static (Mutex<HashSet<String>>, Condvar) {
    static IN_FLIGHT: OnceLock<(Mutex<HashSet<String>>, Condvar)> = OnceLock::new();
    IN_FLIGHT.get_or_init(Default::default)
}

/// The right to build `key`, held until dropped. Async builds run on several
/// worker threads: a second build of the same text waits for the first and
/// then reuses it instead of parsing and indexing it again in parallel.
pub struct Claim {
    key: String,
}

/// Wait until no other thread is building `key`, then claim it.
pub fn claim(key: &str) -> Claim {
    let (lock, done) = in_flight();
    let mut keys = lock.lock().unwrap_or_else(|p| p.into_inner());
    while keys.contains(key) {
        keys = done.wait(keys).unwrap_or_else(|p| p.into_inner());
    }
    keys.insert(key.to_string());
    Claim {
        key: key.to_string(),
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let (lock, done) = in_flight();
        lock.lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.key);
        done.notify_all();
    }
}

/// How many builds are kept alive by the cache alone at most (the recent ones).
pub fn recent_count() -> usize {
    cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .recent
        .len()
}

/// Drop every cached entry (the memory-pressure hook). Returns how many
/// builds were kept alive only by the cache.
pub fn clear() -> usize {
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    cache.live.clear();
    let recent = std::mem::take(&mut cache.recent);
    drop(cache);
    let mut released = 0;
    for mut data in recent {
        released += usize::from(std::sync::Arc::strong_count(&data) == 1);
        super::release::release(&mut data);
    }
    released
}
