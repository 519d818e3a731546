//! Process-wide store of tool record texts, keyed by a digest of the text.
//!
//! A gateway passes mostly the same tools run after run. Each distinct record
//! is hashed and stored once; the binding remembers, per tool object, the
//! record's [`SlotId`] (8 bytes), so a catalog of known tools is named without
//! sending or hashing any text. The store holds each record while a catalog
//! uses it, and for a while after its last use ([`KEEP_USES`], [`KEEP_FOR`]) so a
//! run that rebuilds its catalog finds it; later the record is evicted and
//! its slot's generation moves on, so an old id never names another record.
//! Records only the addon has named (a catalog text, a live update's tools
//! sent as one array) are not kept past their catalogs: nobody can name them
//! later, so a server that changes often does not pile up its old tools.
//! (The binding holds no per-record JS handles: finalizing ~13k of them after a
//! build cost 30–40 ms of the event loop.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// BLAKE3 of the record text, truncated to 128 bits (a hostile client cannot
/// forge a collision to be served another run's tools).
pub type Digest = [u8; 16];

/// A record is evicted only after this many lookups of other records...
pub const KEEP_USES: u64 = 8;
/// ...and this long after its last use, and only when no catalog holds it.
pub const KEEP_FOR: Duration = Duration::from_secs(60);
/// Stores smaller than this are not swept.
const SWEEP_MIN: usize = 4096;

/// One tool record's JSON text, stored once per distinct text.
#[derive(Debug)]
pub struct StoredRecord {
    pub digest: Digest,
    pub id: SlotId,
    pub text: Box<str>,
}

/// Names a stored record while it is stored: its slot, and the slot's
/// generation (bumped at each eviction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotId {
    pub slot: u32,
    pub generation: u32,
}

impl SlotId {
    /// Ids from flat (slot, generation) pairs, as the binding's record cache holds them
    /// (a Uint32Array); `None` when the numbers do not pair up.
    pub fn from_pairs(pairs: &[u32]) -> Option<Vec<SlotId>> {
        let id = |p: &[u32]| SlotId {
            slot: p[0],
            generation: p[1],
        };
        pairs
            .len()
            .is_multiple_of(2)
            .then(|| pairs.chunks_exact(2).map(id).collect())
    }
}

#[derive(Default)]
struct Slot {
    record: Option<Arc<StoredRecord>>,
    generation: u32,
    /// Its id was handed out ([`intern_named`]): kept for a while after its last use.
    named: bool,
    last_use: u64,
    used_at: Option<Instant>,
}

#[derive(Default)]
struct Store {
    by_digest: HashMap<Digest, u32>,
    slots: Vec<Slot>,
    /// Empty slots, free for reuse.
    free: Vec<u32>,
    /// Lookup batches so far (interns and finds).
    uses: u64,
    /// Stored records after the last sweep, and unnamed records stored since
    /// (the only ones a sweep can take right after their last use): the next
    /// sweep runs when the store doubled or an eighth of it is new and unnamed.
    swept_at: usize,
    added_unnamed: usize,
}

impl Store {
    fn touch(&mut self, slot: u32, now: Instant) {
        let uses = self.uses;
        let entry = &mut self.slots[slot as usize];
        entry.last_use = uses;
        entry.used_at = Some(now);
    }

    /// Evict records no catalog holds that were not used recently (or never
    /// named). Amortized: runs once the store has doubled since the last sweep,
    /// or an eighth of it was stored unnamed since (a live server's superseded
    /// tools; a package build's named records would only be kept, so they do
    /// not count).
    fn sweep_if_due(&mut self, now: Instant) {
        let len = self.by_digest.len();
        if len >= SWEEP_MIN && (len >= 2 * self.swept_at || self.added_unnamed * 8 >= len) {
            let uses = self.uses;
            self.evict_unheld(|entry| {
                !entry.named
                    || (uses - entry.last_use >= KEEP_USES
                        && entry
                            .used_at
                            .is_none_or(|at| now.duration_since(at) >= KEEP_FOR))
            });
        }
    }

    /// Evict the records no catalog holds for which `idle` says so: the slot
    /// is freed and its generation moves on. Returns how many were evicted.
    fn evict_unheld(&mut self, idle: impl Fn(&Slot) -> bool) -> usize {
        let before = self.by_digest.len();
        let Store {
            by_digest,
            slots,
            free,
            ..
        } = self;
        by_digest.retain(|_, &mut slot| {
            let entry = &mut slots[slot as usize];
            let unheld = entry
                .record
                .as_ref()
                .is_some_and(|r| Arc::strong_count(r) == 1);
            if !(unheld && idle(entry)) {
                return true;
            }
            entry.record = None;
            entry.named = false;
            entry.generation = entry.generation.wrapping_add(1);
            free.push(slot);
            false
        });
        self.swept_at = self.by_digest.len();
        self.added_unnamed = 0;
        before - self.by_digest.len()
    }
}

fn store() -> &'static Mutex<Store> {
    static STORE: OnceLock<Mutex<Store>> = OnceLock::new();
    STORE.get_or_init(Default::default)
}

pub fn digest(text: &str) -> Digest {
    let hash = blake3::hash(text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&hash.as_bytes()[..16]);
    out
}

/// The stored record for each text, in order (the same `Arc` for equal
/// texts), for a catalog built here: kept while a catalog holds it.
pub fn intern<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<Arc<StoredRecord>> {
    intern_as(texts, false)
}

/// [`intern`] for records whose ids are handed out (the binding's record
/// cache names them in later builds): also kept for a while after their
/// last use ([`KEEP_USES`], [`KEEP_FOR`]).
pub fn intern_named<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<Arc<StoredRecord>> {
    intern_as(texts, true)
}

/// [`intern_named`]'s ids, flat as (slot, generation) pairs ([`SlotId::from_pairs`] reads them).
pub fn intern_named_pairs<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<u32> {
    let records = intern_named(texts);
    records
        .iter()
        .flat_map(|r| [r.id.slot, r.id.generation])
        .collect()
}

/// Hashing runs outside the lock; one lock for the batch.
fn intern_as<'a>(texts: impl IntoIterator<Item = &'a str>, named: bool) -> Vec<Arc<StoredRecord>> {
    let hashed: Vec<(&str, Digest)> = texts.into_iter().map(|t| (t, digest(t))).collect();
    let now = Instant::now();
    let mut store = store().lock().unwrap_or_else(|p| p.into_inner());
    store.uses += 1;
    store.sweep_if_due(now);
    let mut out = Vec::with_capacity(hashed.len());
    for (text, digest) in hashed {
        if let Some(&slot) = store.by_digest.get(&digest) {
            if let Some(record) = store.slots[slot as usize].record.clone() {
                store.touch(slot, now);
                store.slots[slot as usize].named |= named;
                out.push(record);
                continue;
            }
        }
        let slot = match store.free.pop() {
            Some(slot) => slot,
            None => {
                store.slots.push(Slot::default());
                (store.slots.len() - 1) as u32
            }
        };
        let id = SlotId {
            slot,
            generation: store.slots[slot as usize].generation,
        };
        let record = Arc::new(StoredRecord {
            digest,
            id,
            text: Box::from(text),
        });
        store.slots[slot as usize].record = Some(Arc::clone(&record));
        store.slots[slot as usize].named = named;
        store.by_digest.insert(digest, slot);
        store.added_unnamed += usize::from(!named);
        store.touch(slot, now);
        out.push(record);
    }
    out
}

/// The stored record for each id, or the positions of the ids that no longer
/// name one (evicted, or never issued).
pub fn find(ids: &[SlotId]) -> std::result::Result<Vec<Arc<StoredRecord>>, Vec<usize>> {
    let now = Instant::now();
    let mut store = store().lock().unwrap_or_else(|p| p.into_inner());
    store.uses += 1;
    let mut found = Vec::with_capacity(ids.len());
    let mut missing = Vec::new();
    for (position, id) in ids.iter().enumerate() {
        let record = store
            .slots
            .get(id.slot as usize)
            .filter(|entry| entry.generation == id.generation)
            .and_then(|entry| entry.record.clone());
        match record {
            Some(record) => {
                store.touch(id.slot, now);
                found.push(record);
            }
            None => missing.push(position),
        }
    }
    if missing.is_empty() {
        Ok(found)
    } else {
        Err(missing)
    }
}

/// Evict every record no catalog holds, however recently used (a memory-
/// pressure hook). Returns how many were evicted. Ids of evicted records go
/// stale; the binding serializes those tools again.
pub fn evict_unheld() -> usize {
    store()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .evict_unheld(|_| true)
}

/// Stored records and the bytes of their text.
pub fn usage() -> (usize, usize) {
    let store = store().lock().unwrap_or_else(|p| p.into_inner());
    let bytes = store
        .slots
        .iter()
        .filter_map(|slot| slot.record.as_ref())
        .map(|record| record.text.len())
        .sum();
    (store.by_digest.len(), bytes)
}

/// The cache key of a catalog built from these records, in this order.
pub fn records_key(records: &[Arc<StoredRecord>]) -> String {
    let mut hasher = blake3::Hasher::new();
    let digests: Vec<Digest> = records.iter().map(|r| r.digest).collect();
    hasher.update(digests.as_flattened());
    format!("records:{}", hasher.finalize().to_hex())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_share_one_record() {
        let a = intern([
            "{\"name\":\"store_test_a\"}",
            "{\"name\":\"store_test_b\"}",
            "{\"name\":\"store_test_a\"}",
        ]);
        assert!(Arc::ptr_eq(&a[0], &a[2]));
        assert!(!Arc::ptr_eq(&a[0], &a[1]));
        let found = find(&[a[1].id, a[0].id]).unwrap();
        assert!(Arc::ptr_eq(&found[0], &a[1]));
        assert_eq!(a[0].digest, digest("{\"name\":\"store_test_a\"}"));
    }

    #[test]
    fn ids_never_issued_or_of_another_generation_are_missing() {
        let a = intern(["{\"name\":\"store_test_gen\"}"]);
        let stale = SlotId {
            slot: a[0].id.slot,
            generation: a[0].id.generation.wrapping_add(1),
        };
        let never = SlotId {
            slot: u32::MAX,
            generation: 0,
        };
        assert_eq!(find(&[a[0].id, stale, never]).unwrap_err(), vec![1, 2]);
    }

    /// Stores `text` in a new slot of `store` as last used at `last_use` / `used_at`.
    fn place(
        store: &mut Store,
        text: &str,
        named: bool,
        last_use: u64,
        used_at: Instant,
    ) -> Arc<StoredRecord> {
        let slot = store.slots.len() as u32;
        let record = Arc::new(StoredRecord {
            digest: digest(text),
            id: SlotId {
                slot,
                generation: 0,
            },
            text: text.into(),
        });
        store.slots.push(Slot {
            record: Some(Arc::clone(&record)),
            generation: 0,
            named,
            last_use,
            used_at: Some(used_at),
        });
        store.by_digest.insert(record.digest, slot);
        record
    }

    #[test]
    fn idle_unheld_records_are_evicted_and_their_ids_go_stale() {
        let mut store = Store::default();
        let start = Instant::now();
        let record = place(&mut store, "x", true, 0, start);
        for i in 1..SWEEP_MIN as u32 {
            let d = digest(&i.to_string());
            store.slots.push(Slot {
                record: None,
                generation: 0,
                named: false,
                last_use: 0,
                used_at: Some(start),
            });
            store.by_digest.insert(d, i);
        }
        store.uses = KEEP_USES;
        // Held by a catalog (this `record`): kept however idle.
        store.sweep_if_due(start + KEEP_FOR);
        assert!(store.slots[0].record.is_some());
        drop(record);
        // Unheld but used too recently: kept.
        store.swept_at = 0;
        store.sweep_if_due(start + KEEP_FOR / 2);
        assert!(store.slots[0].record.is_some());
        // Unheld and idle in uses and time: evicted, generation bumped, slot free.
        store.swept_at = 0;
        store.sweep_if_due(start + KEEP_FOR);
        assert!(store.slots[0].record.is_none());
        assert_eq!(store.slots[0].generation, 1);
        assert!(store.free.contains(&0));
        // A record no id was handed out for: evicted at the first sweep it is unheld.
        let uses = store.uses;
        let unnamed = place(&mut store, "y", false, uses, start + KEEP_FOR);
        let slot = unnamed.id.slot;
        store.swept_at = 0;
        store.sweep_if_due(start + KEEP_FOR);
        assert!(store.slots[slot as usize].record.is_some(), "held");
        drop(unnamed);
        store.swept_at = 0;
        store.sweep_if_due(start + KEEP_FOR);
        assert!(
            store.slots[slot as usize].record.is_none(),
            "unheld: gone at once"
        );
    }

    #[test]
    fn keys_follow_order_and_content() {
        let records = intern(["\"store_test_k1\"", "\"store_test_k2\""]);
        let (a, b) = (records[0].clone(), records[1].clone());
        assert_eq!(
            records_key(&[a.clone(), b.clone()]),
            records_key(&[a.clone(), b.clone()])
        );
        assert_ne!(
            records_key(&[a.clone(), b.clone()]),
            records_key(&[b.clone(), a.clone()])
        );
        assert_ne!(
            records_key(std::slice::from_ref(&a)),
            records_key(&[a.clone(), a])
        );
    }
}
