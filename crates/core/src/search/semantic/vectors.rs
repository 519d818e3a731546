//! Tool vectors: int8 with one scale per vector (388 bytes instead of 1,536;
//! the cosine error is ~1e-3, far below the gaps fusion acts on).

use tool_search_embed::{tool_text, DIM};

use super::model::QueryVectors;
use crate::entry::ToolEntry;

/// Word pieces embedded per tool (name and description, [CLS] and [SEP]
/// included). Longer texts are cut: their start carries the capability, the
/// forward pass costs grow with length, and on the dev set 32 pieces matched
/// or beat the full text (bench/QUALITY.md).
pub const TOOL_TOKENS: usize = 32;

#[derive(Clone, Copy)]
pub struct QVec {
    pub scale: f32,
    pub values: [i8; DIM],
}

impl QVec {
    pub fn quantize(v: &[f32; DIM]) -> QVec {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 && max.is_finite() {
            max / 127.0
        } else {
            1.0
        };
        let mut values = [0i8; DIM];
        for (out, x) in values.iter_mut().zip(v) {
            let q = if x.is_finite() {
                (x / scale).round()
            } else {
                0.0
            };
            *out = q.clamp(-127.0, 127.0) as i8;
        }
        QVec { scale, values }
    }

    /// Cosine with an L2-normalized query (tool vectors were normalized
    /// before quantization).
    pub fn cosine(&self, query: &[f32; DIM]) -> f32 {
        let dot: f32 = self
            .values
            .iter()
            .zip(query)
            .map(|(&v, q)| v as f32 * q)
            .sum();
        dot * self.scale
    }
}

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
