//! Tool vectors: int8 with one scale per vector (388 bytes instead of 1,536;
//! the cosine error is ~1e-3, far below the gaps fusion acts on). The model
//! makes them and the table holds them, so they sit below both.

use tool_search_embed::DIM;

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
