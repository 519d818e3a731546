//! A catalog's tool vectors ([`QVec`] rows by ordinal), their texts and cache keys.

use tool_search_embed::tool_text;

use super::model::QueryVectors;
use super::qvec::{QVec, TOOL_TOKENS};
use crate::entry::ToolEntry;

/// One catalog's tool vectors, by ordinal, and the cache key of each.
pub struct VectorTable {
    pub model_digest: String,
    pub keys: Vec<[u8; 32]>,
    pub rows: Vec<QVec>,
}

impl VectorTable {
    pub fn similarity(&self, ordinal: usize, query: &QueryVectors) -> f32 {
        self.rows
            .get(ordinal)
            .map_or(0.0, |row| query.similarity(row))
    }

    pub fn bytes(&self) -> usize {
        self.rows.len() * (std::mem::size_of::<QVec>() + 32)
    }
}

/// The text embedded for a tool: its name as words and its description
/// (parameter names did not help on the dev set, and cost word pieces).
pub fn tool_text_of(entry: &ToolEntry) -> String {
    tool_text(&entry.name, &entry.description, &[])
}

/// The cache key of a tool text's vector: the model, the token limit and the text.
pub fn tool_key(model_digest: &str, text: &str) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&(model_digest.len() as u64).to_le_bytes());
    hasher.update(model_digest.as_bytes());
    hasher.update(&(TOOL_TOKENS as u64).to_le_bytes());
    hasher.update(text.as_bytes());
    *hasher.finalize().as_bytes()
}
