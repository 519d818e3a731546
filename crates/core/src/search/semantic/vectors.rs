//! Tool vectors: int8 with one scale per vector (388 bytes instead of 1,536;
//! the cosine error is ~1e-3, far below the gaps fusion acts on).

use serde_json::Value;
use tool_search_embed::{tool_text, DIM};

use crate::catalog::ToolEntry;

/// Word pieces embedded per tool (name, description, parameter names). Longer
/// texts are cut: their start carries the capability, and the forward pass
/// costs grow with length.
pub const TOOL_TOKENS: usize = 64;
/// Parameter names included in a tool's text.
const MAX_PARAM_NAMES: usize = 64;

#[derive(Clone, Copy)]
pub struct QVec {
    pub scale: f32,
    pub values: [i8; DIM],
}

impl QVec {
    pub fn quantize(v: &[f32; DIM]) -> QVec {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 && max.is_finite() { max / 127.0 } else { 1.0 };
        let mut values = [0i8; DIM];
        for (out, x) in values.iter_mut().zip(v) {
            let q = if x.is_finite() { (x / scale).round() } else { 0.0 };
            *out = q.clamp(-127.0, 127.0) as i8;
        }
        QVec { scale, values }
    }

    /// Cosine with an L2-normalized query (tool vectors were normalized
    /// before quantization).
    pub fn cosine(&self, query: &[f32; DIM]) -> f32 {
        let dot: f32 = self.values.iter().zip(query).map(|(&v, q)| v as f32 * q).sum();
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
    pub fn cosine(&self, ordinal: usize, query: &[f32; DIM]) -> f32 {
        self.rows.get(ordinal).map_or(0.0, |row| row.cosine(query))
    }

    pub fn bytes(&self) -> usize {
        self.rows.len() * (std::mem::size_of::<QVec>() + 32)
    }
}

/// The text embedded for a tool: its name as words, its description and its
/// top-level parameter names.
pub fn tool_text_of(entry: &ToolEntry) -> String {
    let names: Vec<&str> = entry
        .input_schema
        .as_deref()
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().take(MAX_PARAM_NAMES).map(String::as_str).collect())
        .unwrap_or_default();
    tool_text(&entry.name, &entry.description, &names)
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
