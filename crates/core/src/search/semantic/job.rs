//! Embedding a catalog's tools in the background: one thread for the
//! process (at low priority, so the gateway's own threads keep their cores),
//! one catalog at a time, in chunks, reporting progress after each.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use serde::Serialize;

use super::disk::DiskCache;
use super::model::ModelHandle;
use super::qvec::QVec;
use super::vectors::{tool_key, tool_text_of, VectorTable};
use crate::entry::ToolEntry;

/// Tools per forward pass: ≤ 2,048 word pieces, and a progress event after each.
const CHUNK: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RankingState {
    /// No vectors: lexical ranking, or hybrid without a model.
    Off,
    /// Waiting for the embedding thread.
    Pending,
    Embedding,
    Ready,
    Failed,
}

/// Where a catalog's tool vectors stand.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RankingStatus {
    pub state: RankingState,
    /// Tools in the catalog.
    pub total: usize,
    /// Tools with a vector so far.
    pub done: usize,
    /// Vectors reused from the previous catalog or the disk cache.
    pub reused: usize,
    /// Vectors computed by this catalog's job.
    pub embedded: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A disk-cache problem that did not stop ranking (e.g. a read-only folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_warning: Option<String>,
}

type Listener = Box<dyn FnMut(&RankingStatus) + Send>;

/// A catalog data's vectors, one slot per model (catalogs with the same
/// tools share their data, and may name different model folders).
#[derive(Default)]
pub struct VectorSlots {
    slots: Mutex<Vec<(Arc<ModelHandle>, Arc<VectorSlot>)>>,
}

impl VectorSlots {
    /// The slot for `model`, if a job was started for it.
    pub fn get(&self, model: &Arc<ModelHandle>) -> Option<Arc<VectorSlot>> {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots
            .iter()
            .find(|(m, _)| Arc::ptr_eq(m, model))
            .map(|(_, slot)| Arc::clone(slot))
    }

    fn get_or_create(&self, model: &Arc<ModelHandle>) -> Arc<VectorSlot> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, slot)) = slots.iter().find(|(m, _)| Arc::ptr_eq(m, model)) {
            return Arc::clone(slot);
        }
        let slot = Arc::new(VectorSlot::default());
        slots.push((Arc::clone(model), Arc::clone(&slot)));
        slot
    }
}

/// One model's vectors for a catalog data: empty until its job finishes.
#[derive(Default)]
pub struct VectorSlot {
    status: Mutex<Option<RankingStatus>>,
    table: OnceLock<Arc<VectorTable>>,
    listeners: Mutex<Vec<Listener>>,
}

impl VectorSlot {
    pub fn table(&self) -> Option<&Arc<VectorTable>> {
        self.table.get()
    }

    /// `None` until a job was started for this data.
    pub fn status(&self) -> Option<RankingStatus> {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// `listener` gets every status change until the job ends (ready or
    /// failed), then is dropped; called at once with the final status if the
    /// job already ended.
    pub fn subscribe(&self, mut listener: Listener) {
        let status = self.status.lock().unwrap_or_else(|e| e.into_inner());
        match status.as_ref() {
            Some(s) if matches!(s.state, RankingState::Ready | RankingState::Failed) => {
                let s = s.clone();
                drop(status);
                listener(&s);
            }
            _ => self
                .listeners
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(listener),
        }
    }

    fn set(&self, next: RankingStatus) {
        let last = matches!(next.state, RankingState::Ready | RankingState::Failed);
        // Taken under the status lock: a `subscribe` after this sees the new
        // status, so nobody misses the final one. Called without any lock.
        let mut listeners = {
            let mut status = self.status.lock().unwrap_or_else(|e| e.into_inner());
            *status = Some(next.clone());
            std::mem::take(&mut *self.listeners.lock().unwrap_or_else(|e| e.into_inner()))
        };
        for listener in listeners.iter_mut() {
            listener(&next);
        }
        if !last {
            let mut guard = self.listeners.lock().unwrap_or_else(|e| e.into_inner());
            listeners.append(&mut guard);
            *guard = listeners;
        }
    }

    /// Claims the slot for a job: false when one was already started.
    fn claim(&self, total: usize) -> bool {
        let mut status = self.status.lock().unwrap_or_else(|e| e.into_inner());
        if status.is_some() {
            return false;
        }
        *status = Some(RankingStatus {
            state: RankingState::Pending,
            total,
            done: 0,
            reused: 0,
            embedded: 0,
            error: None,
            cache_warning: None,
        });
        true
    }
}

/// What the job computes vectors for (the catalog's data implements it):
/// its entries, and the slots the finished table goes into. The job holds it
/// weakly, so dropping every catalog of the data stops the work.
pub trait VectorConsumer: Send + Sync {
    fn entries(&self) -> &[ToolEntry];
    fn vector_slots(&self) -> &VectorSlots;
}

struct Job {
    data: Weak<dyn VectorConsumer>,
    slot: Arc<VectorSlot>,
    model: Arc<ModelHandle>,
    cache_dir: Option<PathBuf>,
    previous: Option<Arc<VectorTable>>,
}

/// Queue `data`'s vectors for computing (once per data; later calls do
/// nothing). `previous`: the table of the catalog this one was derived from
/// (`append`, `with_source`), whose vectors are reused by key.
pub fn start<D: VectorConsumer + 'static>(
    data: &Arc<D>,
    model: Arc<ModelHandle>,
    cache_dir: Option<PathBuf>,
    previous: Option<Arc<VectorTable>>,
) {
    let slot = data.vector_slots().get_or_create(&model);
    if !slot.claim(data.entries().len()) {
        return;
    }
    let weak: Weak<D> = Arc::downgrade(data);
    let job = Job {
        data: weak,
        slot,
        model,
        cache_dir,
        previous,
    };
    if let Err(e) = queue().lock().unwrap_or_else(|e| e.into_inner()).send(job) {
        // The thread is gone (it could not be spawned): rank lexically.
        e.0.slot.set(failure(
            data.entries().len(),
            "the embedding thread is not running".into(),
        ));
    }
}

fn queue() -> &'static Mutex<Sender<Job>> {
    static QUEUE: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    QUEUE.get_or_init(|| {
        let (sender, receiver) = channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("openclaw-embed".into())
            .spawn(move || {
                lower_priority();
                for job in receiver {
                    let slot = Arc::clone(&job.slot);
                    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(job))).is_err()
                    {
                        let total = slot.status().map_or(0, |s| s.total);
                        slot.set(failure(
                            total,
                            "internal error while embedding tools".into(),
                        ));
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("could not start the embedding thread: {e}");
        }
        Mutex::new(sender)
    })
}

/// Lowers the calling thread's priority (nice 10): background work that
/// must not take a core from the gateway's event loop.
#[cfg(target_os = "linux")]
pub(crate) fn lower_priority() {
    // SAFETY: plain syscalls on the calling thread.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn lower_priority() {}

fn failure(total: usize, error: String) -> RankingStatus {
    RankingStatus {
        state: RankingState::Failed,
        total,
        done: 0,
        reused: 0,
        embedded: 0,
        error: Some(error),
        cache_warning: None,
    }
}

fn run(job: Job) {
    let Some(data) = job.data.upgrade() else {
        return;
    };
    let total = data.entries().len();
    let model = match job.model.load() {
        Ok(model) => Arc::clone(model),
        Err(e) => {
            return job.slot.set(failure(
                total,
                format!("the ranking model could not be loaded: {e}"),
            ))
        }
    };
    let digest = model.digest().to_string();
    let texts: Vec<String> = data.entries().iter().map(tool_text_of).collect();
    let keys: Vec<[u8; 32]> = texts.iter().map(|t| tool_key(&digest, t)).collect();
    let mut rows: Vec<Option<QVec>> = vec![None; total];

    if let Some(previous) = job.previous.as_ref().filter(|p| p.model_digest == digest) {
        let by_key: HashMap<&[u8; 32], usize> = previous
            .keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k, i))
            .collect();
        for (row, key) in rows.iter_mut().zip(&keys) {
            *row = by_key.get(key).map(|&i| previous.rows[i]);
        }
    }
    let mut cache_warning = None;
    let mut disk = match job
        .cache_dir
        .as_deref()
        .map(|dir| DiskCache::open(dir, &digest))
    {
        Some(Ok(disk)) => Some(disk),
        Some(Err(e)) => {
            tracing::warn!("{e}");
            cache_warning = Some(e);
            None
        }
        None => None,
    };
    if let Some(cache) = &disk {
        let wanted: HashSet<[u8; 32]> = keys
            .iter()
            .zip(&rows)
            .filter(|(_, r)| r.is_none())
            .map(|(k, _)| *k)
            .collect();
        if !wanted.is_empty() {
            let read = cache.read_checked(&wanted);
            for (row, key) in rows.iter_mut().zip(&keys) {
                if row.is_none() {
                    *row = read.found.get(key).copied();
                }
            }
            if let Some(warning) = read.warning {
                tracing::warn!("{warning}");
                cache_warning = Some(warning);
            }
        }
    }
    let reused = rows.iter().filter(|r| r.is_some()).count();
    let mut status = RankingStatus {
        state: RankingState::Embedding,
        total,
        done: reused,
        reused,
        embedded: 0,
        error: None,
        cache_warning: cache_warning.clone(),
    };
    job.slot.set(status.clone());
    drop(data);

    let (missing, first_of) = distinct_missing(&rows, &keys);
    for chunk in missing.chunks(CHUNK) {
        // Every catalog of this data was dropped: stop.
        if job.data.strong_count() == 0 {
            return;
        }
        let chunk_texts: Vec<&str> = chunk.iter().map(|&i| texts[i].as_str()).collect();
        let vectors = model.embed_tools(&chunk_texts);
        let mut written = Vec::with_capacity(chunk.len());
        for (&i, vector) in chunk.iter().zip(vectors) {
            rows[i] = Some(vector);
            written.push((keys[i], vector));
        }
        if let Some(cache) = &disk {
            if let Err(e) = cache.append(&written) {
                tracing::warn!("{e}");
                status.cache_warning = Some(e);
                disk = None;
            }
        }
        status.embedded += chunk.len();
        status.done += chunk.len();
        job.slot.set(status.clone());
    }
    let rows = share_duplicates(rows, &keys, &first_of);
    status.done = total;
    status.state = RankingState::Ready;
    let _ = job.slot.table.set(Arc::new(VectorTable {
        model_digest: digest,
        keys,
        rows,
    }));
    job.slot.set(status);
}

/// The rows to embed: each distinct missing text once (its first row), and
/// the first row of each missing text's key.
pub(super) fn distinct_missing(
    rows: &[Option<QVec>],
    keys: &[[u8; 32]],
) -> (Vec<usize>, HashMap<[u8; 32], usize>) {
    let mut first_of: HashMap<[u8; 32], usize> = HashMap::new();
    let mut missing = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        if rows[i].is_none() {
            if let std::collections::hash_map::Entry::Vacant(slot) = first_of.entry(*key) {
                slot.insert(i);
                missing.push(i);
            }
        }
    }
    (missing, first_of)
}

/// Rows of duplicated texts take their first row's vector (a row still
/// missing, after a stopped job, is a zero vector).
pub(super) fn share_duplicates(
    rows: Vec<Option<QVec>>,
    keys: &[[u8; 32]],
    first_of: &HashMap<[u8; 32], usize>,
) -> Vec<QVec> {
    (0..rows.len())
        .map(|i| {
            rows[i]
                .or_else(|| first_of.get(&keys[i]).and_then(|&j| rows[j]))
                .unwrap_or(QVec {
                    scale: 1.0,
                    values: [0; tool_search_embed::DIM],
                })
        })
        .collect()
}
