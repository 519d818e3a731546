//! BERT encoder forward pass (all-MiniLM-L6-v2 shape) on f32, single thread.
//!
//! Sequences of a batch are concatenated row-wise (no padding): the dense
//! layers, which are nearly all of the work, run as one matrix product over
//! all tokens; only attention runs per sequence.

use safetensors::{Dtype, SafeTensors};

use crate::EmbedError;

pub const HIDDEN: usize = 384;
pub const LAYERS: usize = 6;
pub const HEADS: usize = 12;
pub const HEAD_DIM: usize = HIDDEN / HEADS;
pub const INTERMEDIATE: usize = 1536;
pub const MAX_POSITIONS: usize = 512;
const QKV: usize = 3 * HIDDEN;

struct Linear {
    /// Row-major [out, in], as stored by PyTorch.
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

struct Layer {
    /// Query, key and value fused into one [3 * HIDDEN, HIDDEN] product.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

pub struct Bert {
    word_embeddings: Vec<f32>,
    position_embeddings: Vec<f32>,
    token_type0: Vec<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
    eps: f32,
    vocab_size: usize,
}

/// Scratch buffers reused across layers of one batch.
#[derive(Default)]
struct Scratch {
    qkv: Vec<f32>,
    context: Vec<f32>,
    hidden: Vec<f32>,
    intermediate: Vec<f32>,
    scores: Vec<f32>,
}

impl Bert {
    pub fn from_safetensors(bytes: &[u8], vocab_size: usize, eps: f32) -> Result<Bert, EmbedError> {
        let tensors = SafeTensors::deserialize(bytes).map_err(|e| EmbedError::Invalid(format!("model.safetensors: {e}")))?;
        let get = |name: &str, shape: &[usize]| load_tensor(&tensors, name, shape);
        let linear = |prefix: &str, outputs: usize, inputs: usize| -> Result<Linear, EmbedError> {
            Ok(Linear {
                weight: get(&format!("{prefix}.weight"), &[outputs, inputs])?,
                bias: get(&format!("{prefix}.bias"), &[outputs])?,
                inputs,
                outputs,
            })
        };
        let norm = |prefix: &str| -> Result<LayerNorm, EmbedError> {
            Ok(LayerNorm { gamma: get(&format!("{prefix}.weight"), &[HIDDEN])?, beta: get(&format!("{prefix}.bias"), &[HIDDEN])? })
        };
        let mut layers = Vec::with_capacity(LAYERS);
        for i in 0..LAYERS {
            let p = format!("encoder.layer.{i}");
            let (q, k, v) = (
                linear(&format!("{p}.attention.self.query"), HIDDEN, HIDDEN)?,
                linear(&format!("{p}.attention.self.key"), HIDDEN, HIDDEN)?,
                linear(&format!("{p}.attention.self.value"), HIDDEN, HIDDEN)?,
            );
            let qkv = Linear {
                weight: [q.weight, k.weight, v.weight].concat(),
                bias: [q.bias, k.bias, v.bias].concat(),
                inputs: HIDDEN,
                outputs: QKV,
            };
            layers.push(Layer {
                qkv,
                attention_out: linear(&format!("{p}.attention.output.dense"), HIDDEN, HIDDEN)?,
                attention_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                intermediate: linear(&format!("{p}.intermediate.dense"), INTERMEDIATE, HIDDEN)?,
                output: linear(&format!("{p}.output.dense"), HIDDEN, INTERMEDIATE)?,
                output_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        // A seventh layer means another model, not this one truncated.
        if tensors.names().iter().any(|n| n.starts_with(&format!("encoder.layer.{LAYERS}."))) {
            return Err(EmbedError::WrongModel(format!("more than {LAYERS} encoder layers")));
        }
        let token_types = get("embeddings.token_type_embeddings.weight", &[2, HIDDEN])?;
        Ok(Bert {
            word_embeddings: get("embeddings.word_embeddings.weight", &[vocab_size, HIDDEN])?,
            position_embeddings: get("embeddings.position_embeddings.weight", &[MAX_POSITIONS, HIDDEN])?,
            token_type0: token_types[..HIDDEN].to_vec(),
            embedding_norm: norm("embeddings.LayerNorm")?,
            layers,
            eps,
            vocab_size,
        })
    }

    /// Mean-pooled, L2-normalized vectors of token-id sequences. Every id
    /// must be < vocab size and every sequence at most MAX_POSITIONS long
    /// (the tokenizer guarantees both; checked anyway).
    pub fn encode(&self, sequences: &[Vec<u32>]) -> Vec<[f32; HIDDEN]> {
        let mut scratch = Scratch::default();
        let total: usize = sequences.iter().map(Vec::len).sum();
        let mut x = vec![0f32; total * HIDDEN];
        let mut offset = 0;
        for seq in sequences {
            for (pos, &id) in seq.iter().enumerate().take(MAX_POSITIONS) {
                let id = if (id as usize) < self.vocab_size { id as usize } else { 0 };
                let row = &mut x[(offset + pos) * HIDDEN..(offset + pos + 1) * HIDDEN];
                let word = &self.word_embeddings[id * HIDDEN..(id + 1) * HIDDEN];
                let position = &self.position_embeddings[pos * HIDDEN..(pos + 1) * HIDDEN];
                for i in 0..HIDDEN {
                    row[i] = word[i] + position[i] + self.token_type0[i];
                }
            }
            offset += seq.len();
        }
        layer_norm(&mut x, &self.embedding_norm, self.eps);
        let lengths: Vec<usize> = sequences.iter().map(|s| s.len().min(MAX_POSITIONS)).collect();
        for layer in &self.layers {
            self.layer_forward(layer, &mut x, total, &lengths, &mut scratch);
        }
        let mut out = Vec::with_capacity(sequences.len());
        let mut offset = 0;
        for &n in &lengths {
            let mut pooled = [0f32; HIDDEN];
            for row in x[offset * HIDDEN..(offset + n) * HIDDEN].chunks_exact(HIDDEN) {
                for (p, v) in pooled.iter_mut().zip(row) {
                    *p += v;
                }
            }
            let norm = pooled.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
            for p in &mut pooled {
                *p /= norm;
            }
            out.push(pooled);
            offset += n;
        }
        out
    }

    fn layer_forward(&self, layer: &Layer, x: &mut [f32], total: usize, lengths: &[usize], s: &mut Scratch) {
        s.qkv.resize(total * QKV, 0.0);
        linear(x, total, &layer.qkv, &mut s.qkv);
        s.context.resize(total * HIDDEN, 0.0);
        let scale = 1.0 / (HEAD_DIM as f32).sqrt();
        let mut offset = 0;
        for &n in lengths {
            s.scores.resize(n * n, 0.0);
            for h in 0..HEADS {
                let q = &s.qkv[offset * QKV + h * HEAD_DIM..];
                let k = &s.qkv[offset * QKV + HIDDEN + h * HEAD_DIM..];
                let v = &s.qkv[offset * QKV + 2 * HIDDEN + h * HEAD_DIM..];
                // scores = scale * Q_h K_h^T  ([n, n])
                unsafe {
                    matrixmultiply::sgemm(
                        n, HEAD_DIM, n, scale,
                        q.as_ptr(), QKV as isize, 1,
                        k.as_ptr(), 1, QKV as isize,
                        0.0, s.scores.as_mut_ptr(), n as isize, 1,
                    );
                }
                for row in s.scores.chunks_exact_mut(n) {
                    softmax(row);
                }
                // context_h = P V_h  ([n, HEAD_DIM] into the head's columns)
                let ctx = &mut s.context[offset * HIDDEN + h * HEAD_DIM..];
                unsafe {
                    matrixmultiply::sgemm(
                        n, n, HEAD_DIM, 1.0,
                        s.scores.as_ptr(), n as isize, 1,
                        v.as_ptr(), QKV as isize, 1,
                        0.0, ctx.as_mut_ptr(), HIDDEN as isize, 1,
                    );
                }
            }
            offset += n;
        }
        s.hidden.resize(total * HIDDEN, 0.0);
        linear(&s.context, total, &layer.attention_out, &mut s.hidden);
        add_assign(x, &s.hidden);
        layer_norm(x, &layer.attention_norm, self.eps);
        s.intermediate.resize(total * INTERMEDIATE, 0.0);
        linear(x, total, &layer.intermediate, &mut s.intermediate);
        for v in &mut s.intermediate {
            *v = gelu(*v);
        }
        linear(&s.intermediate, total, &layer.output, &mut s.hidden);
        add_assign(x, &s.hidden);
        layer_norm(x, &layer.output_norm, self.eps);
    }
}

fn load_tensor(tensors: &SafeTensors, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
    let view = tensors.tensor(name).map_err(|_| EmbedError::WrongModel(format!("tensor {name} is missing")))?;
    if view.shape() != shape {
        return Err(EmbedError::WrongModel(format!("tensor {name} has shape {:?}, expected {shape:?}", view.shape())));
    }
    let data = view.data();
    let values: Vec<f32> = match view.dtype() {
        Dtype::F32 => data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        Dtype::F16 => data.chunks_exact(2).map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]]))).collect(),
        Dtype::BF16 => data.chunks_exact(2).map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16)).collect(),
        other => return Err(EmbedError::WrongModel(format!("tensor {name} has dtype {other:?}, expected F32, F16 or BF16"))),
    };
    // safetensors checks data length against shape and dtype; keep the
    // invariant local anyway.
    if values.len() != shape.iter().product::<usize>() {
        return Err(EmbedError::Invalid(format!("tensor {name} has {} values for shape {shape:?}", values.len())));
    }
    if values.iter().any(|v| !v.is_finite()) {
        return Err(EmbedError::Invalid(format!("tensor {name} has non-finite values")));
    }
    Ok(values)
}

/// IEEE half to single precision (normals, subnormals, inf/NaN).
fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let mant = (h & 0x3ff) as u32;
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: value = m * 2^-24.
            return f32::from_bits(sign) + (if sign != 0 { -1.0 } else { 1.0 }) * (m as f32) * 2f32.powi(-24);
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// out = x W^T + b for `rows` rows.
fn linear(x: &[f32], rows: usize, lin: &Linear, out: &mut [f32]) {
    debug_assert!(x.len() >= rows * lin.inputs && out.len() >= rows * lin.outputs);
    for row in out[..rows * lin.outputs].chunks_exact_mut(lin.outputs) {
        row.copy_from_slice(&lin.bias);
    }
    unsafe {
        matrixmultiply::sgemm(
            rows, lin.inputs, lin.outputs, 1.0,
            x.as_ptr(), lin.inputs as isize, 1,
            lin.weight.as_ptr(), 1, lin.inputs as isize,
            1.0, out.as_mut_ptr(), lin.outputs as isize, 1,
        );
    }
}

fn add_assign(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

fn layer_norm(x: &mut [f32], norm: &LayerNorm, eps: f32) {
    for row in x.chunks_exact_mut(HIDDEN) {
        let mean = row.iter().sum::<f32>() / HIDDEN as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / HIDDEN as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    let inv = 1.0 / sum;
    for v in row.iter_mut() {
        *v *= inv;
    }
}

/// Exact (erf) GELU, as BERT's "gelu".
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// Rational approximation of erf on [-4, 4] (outside, erf is ±1 in f32);
/// branch-free so the GELU loop vectorizes. Error is checked in the tests.
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2.mul_add(-2.726_142_3e-10, 2.770_681_4e-8);
    p = x2.mul_add(p, -2.101_024e-6);
    p = x2.mul_add(p, -5.692_506_4e-5);
    p = x2.mul_add(p, -7.349_906e-4);
    p = x2.mul_add(p, -2.954_6e-3);
    p = x2.mul_add(p, -1.609_603_3e-2);
    p *= x;
    let mut q = x2.mul_add(-1.456_607_2e-5, -2.133_740_6e-4);
    q = x2.mul_add(q, -1.682_827e-3);
    q = x2.mul_add(q, -7.373_329e-3);
    q = x2.mul_add(q, -1.426_473_9e-2);
    p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    /// erf in f64: Taylor series for |x| <= 3 (no cancellation trouble
    /// there), the Laplace continued fraction for erfc beyond.
    fn erf_reference(x: f64) -> f64 {
        if x.abs() <= 3.0 {
            let mut term = x;
            let mut sum = x;
            for n in 1..200 {
                term *= -x * x / n as f64;
                sum += term / (2 * n + 1) as f64;
            }
            return sum * 2.0 / std::f64::consts::PI.sqrt();
        }
        let z = x.abs();
        let mut fraction = 0.0;
        for k in (1..200).rev() {
            fraction = (k as f64 / 2.0) / (z + fraction);
        }
        let erfc = (-z * z).exp() / std::f64::consts::PI.sqrt() / (z + fraction);
        x.signum() * (1.0 - erfc)
    }

    #[test]
    fn erf_is_accurate() {
        let (mut worst, mut at) = (0f64, 0f64);
        for i in -8000..=8000 {
            let x = i as f64 / 1000.0;
            let error = (erf(x as f32) as f64 - erf_reference(x)).abs();
            if error > worst {
                (worst, at) = (error, x);
            }
        }
        assert!(worst < 1e-6, "max erf error {worst} at {at}");
    }

    #[test]
    fn f16_conversion() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x8001), -(2f32.powi(-24)));
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
    }

    #[test]
    fn softmax_sums_to_one() {
        let mut row = [1.0, 2.0, 3.0, -1e30];
        softmax(&mut row);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert_eq!(row[3], 0.0);
    }
}
