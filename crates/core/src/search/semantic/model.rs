//! The encoder, loaded once per model folder and shared by every catalog,
//! with a small cache of query vectors (a model often repeats a search).
//!
//! A query has a whole vector and, when it has several clauses (sentences and
//! connector-led parts), one per clause: one vector of a request that asks
//! for several things points between them, while each clause's vector points
//! at one (bench/QUALITY.md, "Multi-vector queries"). Such a query's whole
//! vector is pooled from its clauses' passes ("Joint pooling").

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tool_search_embed::{Encoder, DIM};

use super::qvec::{QVec, TOOL_TOKENS};
use crate::search::clauses;

/// Queries whose vectors are kept (1.5 KiB per vector; at most
/// 1 + MAX_QUERY_CLAUSES vectors a query), least recently used first out.
const QUERY_CACHE_ENTRIES: usize = 512;
/// Bytes of keys and vectors the query cache holds at most: 512 ordinary
/// queries take about 0.9 MiB; 512 of the longest (4,096 characters, nine
/// vectors) would take 15 MiB without this bound.
const QUERY_CACHE_BYTES: usize = 4 << 20;

/// Clauses embedded separately; the rest of a longer request is one last
/// clause (as the lexical planner counts them).
pub const MAX_QUERY_CLAUSES: usize = crate::search::MAX_CLAUSES;

/// Share of the whole query's cosine in a tool's similarity; the rest is the
/// best of the whole query's and the clauses' cosines.
const WHOLE_SHARE: f32 = 0.25;

/// A query's vectors: the whole text's (for a request of several clauses,
/// pooled over its clauses' word pieces) and, for such a request, one per
/// clause.
pub struct QueryVectors {
    pub whole: [f32; DIM],
    pub clauses: Vec<[f32; DIM]>,
}

impl QueryVectors {
    /// Similarity of a tool: `WHOLE_SHARE · whole + (1 − WHOLE_SHARE) · best`,
    /// best being the highest cosine of the whole query and of its clauses.
    pub fn similarity(&self, tool: &QVec) -> f32 {
        let whole = tool.cosine(&self.whole);
        let best = self
            .clauses
            .iter()
            .map(|c| tool.cosine(c))
            .fold(whole, f32::max);
        WHOLE_SHARE * whole + (1.0 - WHOLE_SHARE) * best
    }
}

/// The clauses of a query embedded on their own: parts split at sentence ends
/// and before connector words ("and", "then", ...; better than sentences
/// alone on the dev set) with at least three letters or digits, at most
/// MAX_QUERY_CLAUSES (the last one runs to the end of the query). Empty when
/// the query is a single clause.
pub fn query_clauses(query: &str) -> Vec<&str> {
    let parts: Vec<&str> = clauses(query, true)
        .into_iter()
        .map(str::trim)
        .filter(|c| c.chars().filter(|ch| ch.is_alphanumeric()).count() >= 3)
        .collect();
    if parts.len() < 2 {
        return Vec::new();
    }
    if parts.len() <= MAX_QUERY_CLAUSES {
        return parts;
    }
    // Every part is a slice of `query`: the last kept clause runs to its end.
    let last = &parts[MAX_QUERY_CLAUSES - 1];
    let start = last.as_ptr() as usize - query.as_ptr() as usize;
    let mut out = parts[..MAX_QUERY_CLAUSES - 1].to_vec();
    out.push(query[start..].trim());
    out
}

/// A model folder, loaded on first use (off the event loop: the embedding
/// job loads it).
pub struct ModelHandle {
    pub(super) dir: PathBuf,
    pub(super) loaded: OnceLock<Result<Arc<SemanticModel>, String>>,
}

impl ModelHandle {
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The model if it was loaded (never blocks).
    pub fn get(&self) -> Option<&Arc<SemanticModel>> {
        self.loaded.get().and_then(|r| r.as_ref().ok())
    }

    /// Loads the model (blocking: ~90 MB read and checked) or returns why it
    /// cannot be loaded. Loaded once; the outcome is kept.
    pub fn load(&self) -> Result<&Arc<SemanticModel>, String> {
        self.loaded
            .get_or_init(|| {
                Encoder::load(&self.dir)
                    .map(|encoder| Arc::new(SemanticModel::new(Box::new(encoder))))
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Every model folder's handle (one per folder for the process).
pub(super) fn handles() -> std::sync::MutexGuard<'static, HashMap<PathBuf, Arc<ModelHandle>>> {
    static HANDLES: OnceLock<Mutex<HashMap<PathBuf, Arc<ModelHandle>>>> = OnceLock::new();
    HANDLES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The handle of the model in `dir` (one per folder for the process).
pub fn model_at(dir: &Path) -> Arc<ModelHandle> {
    Arc::clone(handles().entry(dir.to_path_buf()).or_insert_with(|| {
        Arc::new(ModelHandle {
            dir: dir.to_path_buf(),
            loaded: OnceLock::new(),
        })
    }))
}

/// What computes the vectors: the sentence encoder, or a stand-in with its interface (the
/// tests' bags of words, so hybrid ranking runs without the model package).
pub(super) trait Embedder: Send + Sync {
    /// Digest of the model files: part of every cached vector's key.
    fn digest(&self) -> &str;
    /// One text's vector (the full 256-piece limit).
    fn embed_one(&self, text: &str) -> [f32; DIM];
    /// Each clause's vector, and the whole's pooled over all their word pieces.
    fn embed_clauses(&self, clauses: &[&str]) -> (Vec<[f32; DIM]>, [f32; DIM]);
    /// Quantized vectors of tool texts (cut to TOOL_TOKENS word pieces).
    fn embed_tools(&self, texts: &[&str]) -> Vec<QVec>;
}

impl Embedder for Encoder {
    fn digest(&self) -> &str {
        self.model_digest()
    }

    fn embed_one(&self, text: &str) -> [f32; DIM] {
        self.embed(&[text]).pop().unwrap_or([0.0; DIM])
    }

    fn embed_clauses(&self, clauses: &[&str]) -> (Vec<[f32; DIM]>, [f32; DIM]) {
        self.embed_joint_within(clauses, tool_search_embed::MAX_JOINT_TOKENS)
    }

    fn embed_tools(&self, texts: &[&str]) -> Vec<QVec> {
        self.embed_truncated(texts, TOOL_TOKENS)
            .iter()
            .map(QVec::quantize)
            .collect()
    }
}

/// Query embeddings done by this process, and by the calling thread (see
/// [`query_embeddings`]).
static QUERY_EMBEDDINGS: AtomicU64 = AtomicU64::new(0);
thread_local! {
    static QUERY_EMBEDDINGS_HERE: Cell<u64> = const { Cell::new(0) };
}

/// Query embeddings (forward passes for a query not in the cache) done since
/// the process started: in all, and on the calling thread. A gateway's event
/// loop must see the second stay at 0 (tests and diagnostics; the searches
/// of `ToolSearchSession` and `searchAsync` embed on other threads).
pub fn query_embeddings() -> (u64, u64) {
    (
        QUERY_EMBEDDINGS.load(Ordering::Relaxed),
        QUERY_EMBEDDINGS_HERE.with(Cell::get),
    )
}

pub struct SemanticModel {
    backend: Box<dyn Embedder>,
    queries: Mutex<QueryCache>,
}

impl SemanticModel {
    pub(super) fn new(backend: Box<dyn Embedder>) -> SemanticModel {
        SemanticModel {
            backend,
            queries: Mutex::new(QueryCache::new(QUERY_CACHE_ENTRIES, QUERY_CACHE_BYTES)),
        }
    }

    /// Digest of the model files: part of every cached vector's key.
    pub fn digest(&self) -> &str {
        self.backend.digest()
    }

    /// The query's vectors if they are cached (never embeds: cheap on any thread).
    pub fn cached_query(&self, query: &str) -> Option<Arc<QueryVectors>> {
        self.queries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(query)
    }

    /// The query's vectors (full 256-piece limit each: queries are short and
    /// carry their meaning throughout), from the cache or embedded now, on
    /// the calling thread: 1-4 ms for a dev query, tens of ms for a long
    /// request. Callers on an event loop use [`SemanticModel::cached_query`]
    /// and embed elsewhere. A query of several clauses is embedded clause by
    /// clause only; its whole vector is the mean over all the clauses' word
    /// pieces (`Encoder::embed_joint`), which halves the cost and matched a
    /// pass over the whole query leave-one-source-out (bench/QUALITY.md,
    /// "Joint pooling").
    pub fn embed_query(&self, query: &str) -> Arc<QueryVectors> {
        if let Some(v) = self.cached_query(query) {
            return v;
        }
        QUERY_EMBEDDINGS.fetch_add(1, Ordering::Relaxed);
        QUERY_EMBEDDINGS_HERE.with(|n| n.set(n.get() + 1));
        let clauses = query_clauses(query);
        let vector = Arc::new(if clauses.is_empty() {
            QueryVectors {
                whole: self.embed_one(query),
                clauses: Vec::new(),
            }
        } else {
            // The clauses share one budget of word pieces: a request of eight
            // 256-piece clauses costs what 512 pieces do.
            let (clauses, whole) = self.embed_clauses(&clauses);
            QueryVectors { whole, clauses }
        });
        self.queries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(query, Arc::clone(&vector));
        vector
    }

    fn embed_one(&self, text: &str) -> [f32; DIM] {
        self.backend.embed_one(text)
    }

    fn embed_clauses(&self, clauses: &[&str]) -> (Vec<[f32; DIM]>, [f32; DIM]) {
        self.backend.embed_clauses(clauses)
    }

    /// Quantized vectors of tool texts (cut to TOOL_TOKENS word pieces).
    pub fn embed_tools(&self, texts: &[&str]) -> Vec<QVec> {
        self.backend.embed_tools(texts)
    }
}

/// The last queries' vectors, least recently used out first, bounded in
/// entries and in bytes (key text plus vectors).
pub(crate) struct QueryCache {
    entries: HashMap<String, (Arc<QueryVectors>, u64)>,
    /// Use stamp → query: the first is the least recently used.
    order: BTreeMap<u64, String>,
    stamp: u64,
    bytes: usize,
    max_entries: usize,
    max_bytes: usize,
}

impl QueryCache {
    pub(crate) fn new(max_entries: usize, max_bytes: usize) -> QueryCache {
        QueryCache {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            stamp: 0,
            bytes: 0,
            max_entries,
            max_bytes,
        }
    }

    fn cost(query: &str, vectors: &QueryVectors) -> usize {
        query.len() + (1 + vectors.clauses.len()) * DIM * std::mem::size_of::<f32>()
    }

    /// The query's vectors, now the most recently used.
    pub(crate) fn get(&mut self, query: &str) -> Option<Arc<QueryVectors>> {
        self.stamp += 1;
        let (vectors, stamp) = self.entries.get_mut(query)?;
        let key = self
            .order
            .remove(stamp)
            .unwrap_or_else(|| query.to_string());
        *stamp = self.stamp;
        self.order.insert(self.stamp, key);
        Some(Arc::clone(vectors))
    }

    /// Keeps `vectors` for `query`, dropping the least recently used entries
    /// past the bounds (an entry larger than the byte bound is not kept).
    pub(crate) fn insert(&mut self, query: &str, vectors: Arc<QueryVectors>) {
        let cost = QueryCache::cost(query, &vectors);
        if cost > self.max_bytes || self.max_entries == 0 {
            return;
        }
        self.stamp += 1;
        if let Some((old, stamp)) = self
            .entries
            .insert(query.to_string(), (vectors, self.stamp))
        {
            self.bytes -= QueryCache::cost(query, &old);
            self.order.remove(&stamp);
        }
        self.order.insert(self.stamp, query.to_string());
        self.bytes += cost;
        while self.entries.len() > self.max_entries || self.bytes > self.max_bytes {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some((old, _)) = self.entries.remove(&oldest) {
                self.bytes -= QueryCache::cost(&oldest, &old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl QueryCache {
        fn len(&self) -> usize {
            self.entries.len()
        }

        fn bytes(&self) -> usize {
            self.bytes
        }
    }

    fn vectors(clauses: usize) -> Arc<QueryVectors> {
        Arc::new(QueryVectors {
            whole: [0.0; DIM],
            clauses: vec![[0.0; DIM]; clauses],
        })
    }

    #[test]
    fn the_query_cache_is_bounded_in_entries_and_bytes_and_drops_the_least_recently_used() {
        let mut cache = QueryCache::new(4, 1 << 20);
        for i in 0..10 {
            cache.insert(&format!("q{i}"), vectors(0));
        }
        assert_eq!(cache.len(), 4);
        assert!(cache.get("q5").is_none() && cache.get("q6").is_some());
        cache.insert("q10", vectors(0));
        // q6 was used last among the old ones, so q7 went first.
        assert!(cache.get("q6").is_some() && cache.get("q7").is_none());

        let one = QueryCache::cost("x", &vectors(8));
        let mut cache = QueryCache::new(100, one * 3);
        for i in 0..20 {
            cache.insert(&((b'a' + i) as char).to_string(), vectors(8));
            assert!(cache.bytes() <= one * 3);
        }
        assert_eq!(cache.len(), 3);
        // An entry larger than the whole bound is not kept.
        let mut small = QueryCache::new(100, 100);
        small.insert("q", vectors(0));
        assert_eq!((small.len(), small.bytes()), (0, 0));
        // Re-inserting a key replaces it without counting it twice.
        let mut cache = QueryCache::new(10, 1 << 20);
        cache.insert("same", vectors(0));
        cache.insert("same", vectors(2));
        assert_eq!(
            (cache.len(), cache.bytes()),
            (1, QueryCache::cost("same", &vectors(2)))
        );
    }
}
