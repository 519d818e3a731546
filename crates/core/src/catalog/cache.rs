//! Process-wide reuse of built catalog data. An unchanged catalog (same text,
//! or same validated content) is not parsed or indexed again. Keys are
//! BLAKE3 hashes, so a hostile client cannot forge a collision to be served
//! another run's tools.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

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
    static CACHE: std::sync::OnceLock<Mutex<Cache>> = std::sync::OnceLock::new();
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

fn touch(cache: &mut Cache, data: &Arc<CatalogData>) {
    cache.recent.retain(|d| !Arc::ptr_eq(d, data));
    cache.recent.push(Arc::clone(data));
    if cache.recent.len() > KEEP_RECENT {
        cache.recent.remove(0);
    }
}

/// Drop every cached entry (tests and memory-pressure hooks).
pub fn clear() {
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    cache.live.clear();
    cache.recent.clear();
}
