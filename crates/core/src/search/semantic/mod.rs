//! Hybrid ranking: the lexical top `depth` of a query re-ranked with a small
//! sentence encoder's cosine (all-MiniLM-L6-v2 from `tool-search-embed`).
//! Optional: without the model package a catalog ranks lexically.
//!
//! Data flow:
//! catalog data built → [`job`] embeds each tool's text on one background
//! thread (reusing vectors of the previous catalog and of the [`disk`] cache,
//! writing new ones to it) → the data's [`VectorSlot`] for that model holds a
//! [`VectorTable`] → a search embeds the query or its clauses ([`model`],
//! LRU-cached) and [`fuse`]s the lexical scores with the similarities. Until
//! the table is ready the catalog ranks lexically.

mod disk;
mod fuse;
mod job;
mod model;
mod qvec;
mod vectors;

pub use fuse::{fuse, HybridParams};
pub(crate) use job::lower_priority;
pub use job::{start, RankingState, RankingStatus, VectorConsumer, VectorSlot, VectorSlots};
pub use model::{
    model_at, query_clauses, query_embeddings, ModelHandle, QueryVectors, SemanticModel,
    MAX_QUERY_CLAUSES,
};
pub use qvec::{QVec, TOOL_TOKENS};
/// Whether a folder holds usable model files (regular files inside it), without loading them.
pub use tool_search_embed::{check_model_dir, MODEL_FILES};
pub use vectors::{tool_key, tool_text_of, VectorTable};

/// Shared with other modules' tests: `tests::word_model_at`.
#[cfg(test)]
pub(crate) mod tests;
