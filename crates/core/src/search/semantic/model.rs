//! The encoder, loaded once per model folder and shared by every catalog,
//! with a small cache of query vectors (a model often repeats a search).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tool_search_embed::{Encoder, DIM};

use super::vectors::{QVec, TOOL_TOKENS};

/// Query vectors kept (1.5 KiB each).
const QUERY_CACHE_ENTRIES: usize = 512;

/// A model folder, loaded on first use (off the event loop: the embedding
/// job loads it).
pub struct ModelHandle {
    dir: PathBuf,
    loaded: OnceLock<Result<Arc<SemanticModel>, String>>,
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
                    .map(|encoder| Arc::new(SemanticModel { encoder, queries: Mutex::default() }))
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// The handle of the model in `dir` (one per folder for the process).
pub fn model_at(dir: &Path) -> Arc<ModelHandle> {
    static HANDLES: OnceLock<Mutex<HashMap<PathBuf, Arc<ModelHandle>>>> = OnceLock::new();
    let mut handles = HANDLES.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(
        handles
            .entry(dir.to_path_buf())
            .or_insert_with(|| Arc::new(ModelHandle { dir: dir.to_path_buf(), loaded: OnceLock::new() })),
    )
}

pub struct SemanticModel {
    encoder: Encoder,
    queries: Mutex<QueryCache>,
}

#[derive(Default)]
struct QueryCache {
    vectors: HashMap<String, Arc<[f32; DIM]>>,
    order: VecDeque<String>,
}

impl SemanticModel {
    /// Digest of the model files: part of every cached vector's key.
    pub fn digest(&self) -> &str {
        self.encoder.model_digest()
    }

    /// The query's vector (full 256-piece limit: queries are short and carry
    /// their meaning throughout).
    pub fn embed_query(&self, query: &str) -> Arc<[f32; DIM]> {
        if let Some(v) = self.queries.lock().unwrap_or_else(|e| e.into_inner()).vectors.get(query) {
            return Arc::clone(v);
        }
        let vector: Arc<[f32; DIM]> = Arc::new(self.encoder.embed(&[query]).pop().unwrap_or([0.0; DIM]));
        let mut cache = self.queries.lock().unwrap_or_else(|e| e.into_inner());
        if cache.vectors.insert(query.to_string(), Arc::clone(&vector)).is_none() {
            cache.order.push_back(query.to_string());
            while cache.order.len() > QUERY_CACHE_ENTRIES {
                if let Some(old) = cache.order.pop_front() {
                    cache.vectors.remove(&old);
                }
            }
        }
        vector
    }

    /// Quantized vectors of tool texts (cut to TOOL_TOKENS word pieces).
    pub fn embed_tools(&self, texts: &[&str]) -> Vec<QVec> {
        self.encoder.embed_truncated(texts, TOOL_TOKENS).iter().map(QVec::quantize).collect()
    }
}
