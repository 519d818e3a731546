//! The encoder, loaded once per model folder and shared by every catalog,
//! with a small cache of query vectors (a model often repeats a search).
//!
//! A query has a whole vector and, when it has several clauses (sentences and
//! connector-led parts), one per clause: one vector of a request that asks
//! for several things points between them, while each clause's vector points
//! at one (bench/QUALITY.md, "Multi-vector queries"). Such a query's whole
//! vector is pooled from its clauses' passes ("Joint pooling").

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tool_search_embed::{Encoder, DIM};

use super::vectors::{QVec, TOOL_TOKENS};
use crate::search::clauses;

/// Queries whose vectors are kept (1.5 KiB per vector; at most
/// 1 + MAX_QUERY_CLAUSES vectors a query).
const QUERY_CACHE_ENTRIES: usize = 512;

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
                    .map(|encoder| {
                        Arc::new(SemanticModel {
                            encoder,
                            queries: Mutex::default(),
                        })
                    })
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// The handle of the model in `dir` (one per folder for the process).
pub fn model_at(dir: &Path) -> Arc<ModelHandle> {
    static HANDLES: OnceLock<Mutex<HashMap<PathBuf, Arc<ModelHandle>>>> = OnceLock::new();
    let mut handles = HANDLES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    Arc::clone(handles.entry(dir.to_path_buf()).or_insert_with(|| {
        Arc::new(ModelHandle {
            dir: dir.to_path_buf(),
            loaded: OnceLock::new(),
        })
    }))
}

pub struct SemanticModel {
    encoder: Encoder,
    queries: Mutex<QueryCache>,
}

#[derive(Default)]
struct QueryCache {
    vectors: HashMap<String, Arc<QueryVectors>>,
    order: VecDeque<String>,
}

impl SemanticModel {
    /// Digest of the model files: part of every cached vector's key.
    pub fn digest(&self) -> &str {
        self.encoder.model_digest()
    }

    /// The query's vectors (full 256-piece limit each: queries are short and
    /// carry their meaning throughout). A query of several clauses is
    /// embedded clause by clause only; its whole vector is the mean over all
    /// the clauses' word pieces (`Encoder::embed_joint`), which halves the
    /// cost and matched a pass over the whole query leave-one-source-out
    /// (bench/QUALITY.md, "Joint pooling").
    pub fn embed_query(&self, query: &str) -> Arc<QueryVectors> {
        if let Some(v) = self
            .queries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .vectors
            .get(query)
        {
            return Arc::clone(v);
        }
        let clauses = query_clauses(query);
        let vector = Arc::new(if clauses.is_empty() {
            let whole = self.encoder.embed(&[query]).pop().unwrap_or([0.0; DIM]);
            QueryVectors {
                whole,
                clauses: Vec::new(),
            }
        } else {
            // The clauses share one budget of word pieces: a request of eight
            // 256-piece clauses costs what 512 pieces do.
            let (clauses, whole) = self
                .encoder
                .embed_joint_within(&clauses, tool_search_embed::MAX_JOINT_TOKENS);
            QueryVectors { whole, clauses }
        });
        let mut cache = self.queries.lock().unwrap_or_else(|e| e.into_inner());
        if cache
            .vectors
            .insert(query.to_string(), Arc::clone(&vector))
            .is_none()
        {
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
        self.encoder
            .embed_truncated(texts, TOOL_TOKENS)
            .iter()
            .map(QVec::quantize)
            .collect()
    }
}
