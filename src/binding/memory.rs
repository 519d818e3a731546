//! Native memory of catalogs, reported to V8 (`napi_adjust_external_memory`).
//!
//! A catalog version holds megabytes in Rust (entries, index, vectors) behind
//! a small JS object. Unreported, V8 sees no reason to collect superseded
//! versions on a quiet loop (a server sending `list_changed` grew a gateway to
//! gigabytes). Each distinct catalog data is reported once while any JS object
//! holds it, and given back when the last such object is finalized.

use std::cell::RefCell;
use std::collections::HashMap;

use napi::Env;
use tool_search_core::catalog::Catalog;

thread_local! {
    /// Data address → (JS objects holding it, bytes reported). Per thread:
    /// each Node worker has its own isolate and its own accounting.
    static REPORTED: RefCell<HashMap<usize, (u32, i64)>> = RefCell::new(HashMap::new());
}

fn key(catalog: &Catalog) -> usize {
    std::ptr::from_ref(catalog.data()) as usize
}

/// A JS object now holds `catalog`: its data is reported if no other does.
pub fn hold(env: &Env, catalog: &Catalog) {
    let bytes = REPORTED.with(|map| {
        let mut map = map.borrow_mut();
        let slot = map.entry(key(catalog)).or_insert((0, 0));
        slot.0 += 1;
        if slot.0 > 1 {
            return 0;
        }
        slot.1 = i64::try_from(catalog.native_bytes()).unwrap_or(i64::MAX);
        slot.1
    });
    if bytes > 0 {
        let _ = env.adjust_external_memory(bytes);
    }
}

/// A JS object holding `catalog` was collected: the last one gives its data's bytes back.
pub fn release(env: &Env, catalog: &Catalog) {
    let bytes = REPORTED.with(|map| {
        let mut map = map.borrow_mut();
        let key = key(catalog);
        let Some(slot) = map.get_mut(&key) else {
            return 0;
        };
        slot.0 -= 1;
        if slot.0 > 0 {
            return 0;
        }
        map.remove(&key).map_or(0, |(_, bytes)| bytes)
    });
    if bytes > 0 {
        let _ = env.adjust_external_memory(-bytes);
    }
}

/// Bytes reported now by this thread (for tests: `__reportedNativeBytes`).
pub fn reported() -> i64 {
    REPORTED.with(|map| map.borrow().values().map(|(_, bytes)| bytes).sum())
}

/// Catalog data JS objects of this thread hold now, and the bytes reported for them.
pub fn held() -> (usize, i64) {
    REPORTED.with(|map| {
        let map = map.borrow();
        (map.len(), map.values().map(|(_, bytes)| bytes).sum())
    })
}
