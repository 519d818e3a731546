//! BERT encoder forward pass (all-MiniLM-L6-v2 shape), single thread: dense
//! layers in int8 (quant.rs), everything else in f32. f32 dense layers
//! (model/f32_dense.rs) exist only with the `f32-reference` feature, for
//! parity and quality comparisons.
//!
//! Sequences of a batch are concatenated row-wise (no padding): the dense
//! layers, most of the work, run as one matrix product over
//! all tokens; only attention runs per sequence.

use safetensors::{Dtype, SafeTensors};

use crate::quant::{self, IntKernel, QLinear, QuantRows};
use crate::shape::{HEADS, HEAD_DIM, HIDDEN, INTERMEDIATE, LAYERS, MAX_POSITIONS, QKV};
use crate::{EmbedError, Precision};

#[cfg(feature = "f32-reference")]
mod f32_dense;

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

/// A dense layer in the encoder's precision.
enum Dense {
    #[cfg(feature = "f32-reference")]
    F32(f32_dense::Linear),
    Int8(QLinear),
}

impl Dense {
    fn new(
        weight: &[f32],
        bias: Vec<f32>,
        outputs: usize,
        inputs: usize,
        precision: Precision,
    ) -> Dense {
        match precision {
            #[cfg(feature = "f32-reference")]
            Precision::F32 => Dense::F32(f32_dense::Linear::new(weight, bias, outputs, inputs)),
            Precision::Int8 => Dense::Int8(QLinear::new(weight, bias, outputs, inputs)),
        }
    }
}

struct Layer {
    /// Query, key and value fused into one [3 * HIDDEN, HIDDEN] product.
    qkv: Dense,
    attention_out: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    output_norm: LayerNorm,
}

/// How the f32 code runs (attention, layer norms, GELU, quantization, and
/// the f32 dense layers of `f32-reference`): chosen once per call from the
/// CPU's features. Avx2 compiles it with AVX2 + FMA (fused multiply-adds
/// round once, so its vectors differ from Portable's in the last bits).
/// No AVX-512 variant: the int8 dense layers (quant.rs, IntKernel) are where
/// AVX-512 pays; an f32 AVX-512 copy of the AVX2 dense kernel computed the
/// same sums, only for the f32 reference path.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kernel {
    Portable,
    Avx2,
}

impl Kernel {
    pub(crate) const ALL: [Kernel; 2] = [Kernel::Avx2, Kernel::Portable];

    pub(crate) fn detect() -> Kernel {
        Kernel::ALL
            .into_iter()
            .find(|k| k.supported())
            .unwrap_or(Kernel::Portable)
    }

    pub(crate) fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                Kernel::Portable => true,
                Kernel::Avx2 => {
                    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Kernel::Portable
        }
    }
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
    /// One head's keys, transposed (attention_avx2).
    keys: Vec<f32>,
    /// The current int8 layer's input, quantized.
    quantized: QuantRows,
}

impl Bert {
    pub fn from_safetensors(
        bytes: &[u8],
        vocab_size: usize,
        eps: f32,
        precision: Precision,
    ) -> Result<Bert, EmbedError> {
        let tensors = SafeTensors::deserialize(bytes)
            .map_err(|e| EmbedError::Invalid(format!("model.safetensors: {e}")))?;
        let get = |name: &str, shape: &[usize]| load_tensor(&tensors, name, shape);
        let raw = |prefix: &str,
                   outputs: usize,
                   inputs: usize|
         -> Result<(Vec<f32>, Vec<f32>), EmbedError> {
            Ok((
                get(&format!("{prefix}.weight"), &[outputs, inputs])?,
                get(&format!("{prefix}.bias"), &[outputs])?,
            ))
        };
        let linear = |prefix: &str, outputs: usize, inputs: usize| -> Result<Dense, EmbedError> {
            let (weight, bias) = raw(prefix, outputs, inputs)?;
            Ok(Dense::new(&weight, bias, outputs, inputs, precision))
        };
        let norm = |prefix: &str| -> Result<LayerNorm, EmbedError> {
            Ok(LayerNorm {
                gamma: get(&format!("{prefix}.weight"), &[HIDDEN])?,
                beta: get(&format!("{prefix}.bias"), &[HIDDEN])?,
            })
        };
        let mut layers = Vec::with_capacity(LAYERS);
        for i in 0..LAYERS {
            let p = format!("encoder.layer.{i}");
            let (q, k, v) = (
                raw(&format!("{p}.attention.self.query"), HIDDEN, HIDDEN)?,
                raw(&format!("{p}.attention.self.key"), HIDDEN, HIDDEN)?,
                raw(&format!("{p}.attention.self.value"), HIDDEN, HIDDEN)?,
            );
            let qkv = Dense::new(
                &[q.0, k.0, v.0].concat(),
                [q.1, k.1, v.1].concat(),
                QKV,
                HIDDEN,
                precision,
            );
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
        if tensors
            .names()
            .iter()
            .any(|n| n.starts_with(&format!("encoder.layer.{LAYERS}.")))
        {
            return Err(EmbedError::WrongModel(format!(
                "more than {LAYERS} encoder layers"
            )));
        }
        let token_types = get("embeddings.token_type_embeddings.weight", &[2, HIDDEN])?;
        Ok(Bert {
            word_embeddings: get("embeddings.word_embeddings.weight", &[vocab_size, HIDDEN])?,
            position_embeddings: get(
                "embeddings.position_embeddings.weight",
                &[MAX_POSITIONS, HIDDEN],
            )?,
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
        self.encode_kernel(sequences, Kernel::detect(), IntKernel::detect())
    }

    /// `encode` on given kernels: `kernel` for the f32 code, `int_kernel`
    /// for int8 dense layers; an unsupported one falls back to Portable.
    pub(crate) fn encode_kernel(
        &self,
        sequences: &[Vec<u32>],
        kernel: Kernel,
        int_kernel: IntKernel,
    ) -> Vec<[f32; HIDDEN]> {
        let (states, lengths) = self.hidden_states(sequences, kernel, int_kernel);
        sum_rows(&states, &lengths)
            .into_iter()
            .map(normalized)
            .collect()
    }

    /// Each sequence's sum of final token states, unnormalized (normalized,
    /// it is `encode`'s vector): a caller pooling over several sequences adds
    /// them up.
    pub fn state_sums(&self, sequences: &[Vec<u32>]) -> Vec<[f32; HIDDEN]> {
        let (states, lengths) =
            self.hidden_states(sequences, Kernel::detect(), IntKernel::detect());
        sum_rows(&states, &lengths)
    }

    /// Final hidden states of every token, sequences one after another
    /// ([total tokens, HIDDEN]), and each sequence's length.
    fn hidden_states(
        &self,
        sequences: &[Vec<u32>],
        kernel: Kernel,
        int_kernel: IntKernel,
    ) -> (Vec<f32>, Vec<usize>) {
        #[cfg(target_arch = "x86_64")]
        if kernel != Kernel::Portable && kernel.supported() {
            // SAFETY: the CPU has AVX2 + FMA (kernel.supported()).
            return unsafe { self.hidden_states_avx2(sequences, int_kernel) };
        }
        self.hidden_states_with::<false>(sequences, int_kernel)
    }

    /// The same code compiled for AVX2 + FMA (the helpers below are inlined
    /// into it); the dense layers and attention use explicit SIMD kernels.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn hidden_states_avx2(
        &self,
        sequences: &[Vec<u32>],
        int_kernel: IntKernel,
    ) -> (Vec<f32>, Vec<usize>) {
        self.hidden_states_with::<true>(sequences, int_kernel)
    }

    #[inline(always)]
    fn hidden_states_with<const FMA: bool>(
        &self,
        sequences: &[Vec<u32>],
        int_kernel: IntKernel,
    ) -> (Vec<f32>, Vec<usize>) {
        let mut scratch = Scratch::default();
        let lengths: Vec<usize> = sequences
            .iter()
            .map(|s| s.len().min(MAX_POSITIONS))
            .collect();
        let total: usize = lengths.iter().sum();
        let mut x = vec![0f32; total * HIDDEN];
        let mut rows = x.chunks_exact_mut(HIDDEN);
        for (seq, &n) in sequences.iter().zip(&lengths) {
            for (pos, &id) in seq[..n].iter().enumerate() {
                let id = if (id as usize) < self.vocab_size {
                    id as usize
                } else {
                    0
                };
                let row = rows.next().expect("one row per token");
                let word = &self.word_embeddings[id * HIDDEN..(id + 1) * HIDDEN];
                let position = &self.position_embeddings[pos * HIDDEN..(pos + 1) * HIDDEN];
                for (((r, w), p), t) in row
                    .iter_mut()
                    .zip(word)
                    .zip(position)
                    .zip(&self.token_type0)
                {
                    *r = w + p + t;
                }
            }
        }
        layer_norm(&mut x, &self.embedding_norm, self.eps);
        for layer in &self.layers {
            layer_forward::<FMA>(
                layer,
                &mut x,
                total,
                &lengths,
                &mut scratch,
                self.eps,
                int_kernel,
            );
        }
        (x, lengths)
    }
}

/// The sum of each sequence's rows (`states` holds the sequences' token rows
/// one after another).
fn sum_rows(states: &[f32], lengths: &[usize]) -> Vec<[f32; HIDDEN]> {
    let mut offset = 0;
    lengths
        .iter()
        .map(|&n| {
            let mut sum = [0f32; HIDDEN];
            for row in states[offset * HIDDEN..(offset + n) * HIDDEN].chunks_exact(HIDDEN) {
                add_assign(&mut sum, row);
            }
            offset += n;
            sum
        })
        .collect()
}

/// `v` scaled to unit length (a zero vector stays zero).
pub fn normalized(mut v: [f32; HIDDEN]) -> [f32; HIDDEN] {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    for x in &mut v {
        *x /= norm;
    }
    v
}

#[inline(always)]
fn layer_forward<const FMA: bool>(
    layer: &Layer,
    x: &mut [f32],
    total: usize,
    lengths: &[usize],
    s: &mut Scratch,
    eps: f32,
    int_kernel: IntKernel,
) {
    s.qkv.resize(total * QKV, 0.0);
    dense::<FMA>(
        x,
        total,
        &layer.qkv,
        &mut s.qkv,
        int_kernel,
        &mut s.quantized,
    );
    s.context.resize(total * HIDDEN, 0.0);
    let mut offset = 0;
    for &n in lengths {
        attention::<FMA>(
            &s.qkv[offset * QKV..(offset + n) * QKV],
            n,
            &mut s.scores,
            &mut s.keys,
            &mut s.context[offset * HIDDEN..(offset + n) * HIDDEN],
        );
        offset += n;
    }
    s.hidden.resize(total * HIDDEN, 0.0);
    dense::<FMA>(
        &s.context,
        total,
        &layer.attention_out,
        &mut s.hidden,
        int_kernel,
        &mut s.quantized,
    );
    add_assign(x, &s.hidden);
    layer_norm(x, &layer.attention_norm, eps);
    s.intermediate.resize(total * INTERMEDIATE, 0.0);
    dense::<FMA>(
        x,
        total,
        &layer.intermediate,
        &mut s.intermediate,
        int_kernel,
        &mut s.quantized,
    );
    for v in &mut s.intermediate {
        *v = gelu(*v);
    }
    dense::<FMA>(
        &s.intermediate,
        total,
        &layer.output,
        &mut s.hidden,
        int_kernel,
        &mut s.quantized,
    );
    add_assign(x, &s.hidden);
    layer_norm(x, &layer.output_norm, eps);
}

/// Multi-head self-attention of one sequence of `n` tokens: `qkv` holds its
/// [n, 3 * HIDDEN] projections, `context` receives [n, HIDDEN].
#[inline(always)]
fn attention<const FMA: bool>(
    qkv: &[f32],
    n: usize,
    scores: &mut Vec<f32>,
    keys: &mut Vec<f32>,
    context: &mut [f32],
) {
    let scale = 1.0 / (HEAD_DIM as f32).sqrt();
    assert!(qkv.len() >= n * QKV && context.len() >= n * HIDDEN);
    #[cfg(target_arch = "x86_64")]
    if FMA {
        let padded = n.next_multiple_of(8);
        scores.resize(2 * padded, 0.0);
        keys.resize(HEAD_DIM * padded, 0.0);
        // SAFETY: FMA is only true inside encode_avx2; qkv and context
        // bounds asserted above, scores and keys sized for `padded` here.
        unsafe { simd::attention_avx2(qkv.as_ptr(), n, scores, keys, context.as_mut_ptr(), scale) };
        return;
    }
    let _ = keys;
    scores.resize(n, 0.0);
    for h in 0..HEADS {
        let head = h * HEAD_DIM..(h + 1) * HEAD_DIM;
        for i in 0..n {
            let q: &[f32; HEAD_DIM] = qkv[i * QKV..][head.clone()].try_into().unwrap();
            for (j, score) in scores.iter_mut().enumerate() {
                let k: &[f32; HEAD_DIM] = qkv[j * QKV + HIDDEN..][head.clone()].try_into().unwrap();
                *score = dot8::<FMA>(q, k) * scale;
            }
            softmax(scores);
            let out: &mut [f32; HEAD_DIM] = (&mut context[i * HIDDEN..][head.clone()])
                .try_into()
                .unwrap();
            *out = [0.0; HEAD_DIM];
            for (j, &p) in scores.iter().enumerate() {
                let v: &[f32; HEAD_DIM] = qkv[j * QKV + 2 * HIDDEN..][head.clone()]
                    .try_into()
                    .unwrap();
                for (o, vv) in out.iter_mut().zip(v) {
                    *o = madd::<FMA>(p, *vv, *o);
                }
            }
        }
    }
}

#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    // mul_add is one instruction only where FMA is enabled (else a libm call).
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Dot product with 8 independent lanes (vectorizes; fixed summation order,
/// so results are deterministic).
#[inline(always)]
fn dot8<const FMA: bool>(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    for (ca, cb) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for l in 0..8 {
            acc[l] = madd::<FMA>(ca[l], cb[l], acc[l]);
        }
    }
    hsum(&acc)
}

#[inline(always)]
fn hsum(acc: &[f32; 8]) -> f32 {
    (acc[0] + acc[4]) + (acc[1] + acc[5]) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
}

/// out = x W^T + b for `rows` rows of x, in the layer's precision (int8:
/// x quantized per row first).
#[inline(always)]
fn dense<const FMA: bool>(
    x: &[f32],
    rows: usize,
    layer: &Dense,
    out: &mut [f32],
    int_kernel: IntKernel,
    quantized: &mut QuantRows,
) {
    match layer {
        #[cfg(feature = "f32-reference")]
        Dense::F32(lin) => f32_dense::linear::<FMA>(x, rows, lin, out),
        Dense::Int8(lin) => {
            quant::quantize_rows::<FMA>(x, rows, lin.inputs(), quantized);
            quant::linear(quantized, rows, lin, out, int_kernel);
        }
    }
}
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    use super::{HEADS, HEAD_DIM, HIDDEN, QKV};

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn hsum8(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_shuffle_ps::<1>(s, s));
        _mm_cvtss_f32(s)
    }

    /// e^x of 8 lanes for x <= 0 (softmax's range), within 2 ulp of the
    /// exact value down to e^-87 (about f32's smallest normal); below that it
    /// gives e^-87 instead of a subnormal or 0, a weight no sum can see.
    /// Cody-Waite reduction by ln 2, Cephes' degree-5 polynomial, 2^n built
    /// in the exponent bits.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) unsafe fn exp_nonpositive(x: __m256) -> __m256 {
        let x = _mm256_max_ps(x, _mm256_set1_ps(-87.0));
        let n = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
            _mm256_mul_ps(x, _mm256_set1_ps(std::f32::consts::LOG2_E)),
        );
        // ln 2 in two parts: n · 0.693359375 is exact for |n| < 2^11.
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693_359_4), x);
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.121_944_4e-4), r);
        let mut p = _mm256_set1_ps(1.987_569_1e-4);
        for c in [
            1.398_199_9e-3,
            8.333_452e-3,
            4.166_579_6e-2,
            1.666_666_5e-1,
            0.5,
        ] {
            p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
        }
        let r2 = _mm256_mul_ps(r, r);
        let e = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0));
        // n >= -126: 2^n is a normal float, its exponent field n + 127.
        let two_n = _mm256_slli_epi32::<23>(_mm256_add_epi32(
            _mm256_cvtps_epi32(n),
            _mm256_set1_epi32(127),
        ));
        _mm256_mul_ps(e, _mm256_castsi256_ps(two_n))
    }

    /// Softmax of `row[..n]` in place, 8 lanes at a time; `row` holds n
    /// rounded up to 8 floats (the lanes past n are written, not summed).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) unsafe fn softmax_avx2(row: *mut f32, n: usize) {
        let whole = n / 8 * 8;
        let mut max8 = _mm256_set1_ps(f32::NEG_INFINITY);
        for j in (0..whole).step_by(8) {
            max8 = _mm256_max_ps(max8, _mm256_loadu_ps(row.add(j)));
        }
        let mut lanes = [0f32; 8];
        _mm256_storeu_ps(lanes.as_mut_ptr(), max8);
        let mut max = lanes.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for j in whole..n {
            max = max.max(*row.add(j));
        }
        let max8 = _mm256_set1_ps(max);
        let mut sum8 = _mm256_setzero_ps();
        for j in (0..n.next_multiple_of(8)).step_by(8) {
            let e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(row.add(j)), max8));
            _mm256_storeu_ps(row.add(j), e);
            if j < whole {
                sum8 = _mm256_add_ps(sum8, e);
            }
        }
        let mut sum = hsum8(sum8);
        for j in whole..n {
            sum += *row.add(j);
        }
        let inv = _mm256_set1_ps(1.0 / sum);
        for j in (0..n.next_multiple_of(8)).step_by(8) {
            _mm256_storeu_ps(row.add(j), _mm256_mul_ps(_mm256_loadu_ps(row.add(j)), inv));
        }
    }

    /// Attention of one sequence: per head, the head's keys transposed, then
    /// for each query the scores of 8 keys at a time, softmax, and the
    /// weighted sum of values kept in 4 registers. Each score is summed in
    /// the order of the portable code's `dot8` of one key (lane d % 8 first,
    /// then the lanes' tree), with the products of lanes 8 apart fused as
    /// there, so the scores are the ones a key at a time gave.
    /// Caller: AVX2 + FMA present; qkv has n * QKV floats, context n * HIDDEN;
    /// with n rounded up to 8, scores holds twice that and keys HEAD_DIM times.
    // Accumulators indexed by query and lane, as the loop is written.
    #[allow(clippy::needless_range_loop)]
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn attention_avx2(
        qkv: *const f32,
        n: usize,
        scores: &mut [f32],
        keys: &mut [f32],
        context: *mut f32,
        scale: f32,
    ) {
        const _: () = assert!(HEAD_DIM == 32);
        let padded = n.next_multiple_of(8);
        debug_assert!(scores.len() >= 2 * padded && keys.len() >= HEAD_DIM * padded);
        // Keys past n score 0 and are never read back (softmax covers n).
        keys[..HEAD_DIM * padded].fill(0.0);
        let kt = keys.as_mut_ptr();
        let scale = _mm256_set1_ps(scale);
        for h in 0..HEADS {
            let col = h * HEAD_DIM;
            for j in 0..n {
                let k = qkv.add(j * QKV + HIDDEN + col);
                for d in 0..HEAD_DIM {
                    *kt.add(d * padded + j) = *k.add(d);
                }
            }
            // Two queries at a time: their value sums are independent chains,
            // so the FMAs of one wait less on the other's (each query's sum
            // keeps its order).
            for i in (0..n).step_by(2) {
                let pair = (n - i).min(2);
                for r in 0..pair {
                    let row = scores.as_mut_ptr().add(r * padded);
                    head_scores(qkv.add((i + r) * QKV + col), kt, padded, row, scale);
                    softmax_avx2(row, n);
                }
                let (first, second) = scores.split_at(padded);
                let mut acc = [_mm256_setzero_ps(); 8];
                if pair == 2 {
                    for (j, (&p0, &p1)) in first[..n].iter().zip(&second[..n]).enumerate() {
                        let v = qkv.add(j * QKV + 2 * HIDDEN + col);
                        let (p0, p1) = (_mm256_set1_ps(p0), _mm256_set1_ps(p1));
                        for d in 0..4 {
                            let vd = _mm256_loadu_ps(v.add(8 * d));
                            acc[d] = _mm256_fmadd_ps(p0, vd, acc[d]);
                            acc[4 + d] = _mm256_fmadd_ps(p1, vd, acc[4 + d]);
                        }
                    }
                } else {
                    for (j, &p0) in first[..n].iter().enumerate() {
                        let v = qkv.add(j * QKV + 2 * HIDDEN + col);
                        let p0 = _mm256_set1_ps(p0);
                        for d in 0..4 {
                            acc[d] = _mm256_fmadd_ps(p0, _mm256_loadu_ps(v.add(8 * d)), acc[d]);
                        }
                    }
                }
                for r in 0..pair {
                    let out = context.add((i + r) * HIDDEN + col);
                    for d in 0..4 {
                        _mm256_storeu_ps(out.add(8 * d), acc[4 * r + d]);
                    }
                }
            }
        }
    }

    /// One query's scaled scores against `padded` transposed keys (`kt`:
    /// HEAD_DIM rows of `padded`), 8 keys at a time, summed as `dot8` sums
    /// one key (see attention_avx2).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn head_scores(
        q: *const f32,
        kt: *const f32,
        padded: usize,
        out: *mut f32,
        scale: __m256,
    ) {
        for block in (0..padded).step_by(8) {
            let column = |d: usize| _mm256_loadu_ps(kt.add(d * padded + block));
            let lane = |l: usize| {
                let a = _mm256_fmadd_ps(
                    _mm256_set1_ps(*q.add(l)),
                    column(l),
                    _mm256_mul_ps(_mm256_set1_ps(*q.add(8 + l)), column(8 + l)),
                );
                let b = _mm256_fmadd_ps(
                    _mm256_set1_ps(*q.add(16 + l)),
                    column(16 + l),
                    _mm256_mul_ps(_mm256_set1_ps(*q.add(24 + l)), column(24 + l)),
                );
                _mm256_add_ps(a, b)
            };
            // hsum8's tree: (l0+l4 + l2+l6) + (l1+l5 + l3+l7).
            let u0 = _mm256_add_ps(lane(0), lane(4));
            let u1 = _mm256_add_ps(lane(1), lane(5));
            let u2 = _mm256_add_ps(lane(2), lane(6));
            let u3 = _mm256_add_ps(lane(3), lane(7));
            let total = _mm256_add_ps(_mm256_add_ps(u0, u2), _mm256_add_ps(u1, u3));
            _mm256_storeu_ps(out.add(block), _mm256_mul_ps(total, scale));
        }
    }
}

fn load_tensor(tensors: &SafeTensors, name: &str, shape: &[usize]) -> Result<Vec<f32>, EmbedError> {
    let view = tensors
        .tensor(name)
        .map_err(|_| EmbedError::WrongModel(format!("tensor {name} is missing")))?;
    if view.shape() != shape {
        return Err(EmbedError::WrongModel(format!(
            "tensor {name} has shape {:?}, expected {shape:?}",
            view.shape()
        )));
    }
    let data = view.data();
    let values: Vec<f32> = match view.dtype() {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16))
            .collect(),
        other => {
            return Err(EmbedError::WrongModel(format!(
                "tensor {name} has dtype {other:?}, expected F32, F16 or BF16"
            )))
        }
    };
    // safetensors checks data length against shape and dtype; keep the
    // invariant local anyway.
    if values.len() != shape.iter().product::<usize>() {
        return Err(EmbedError::Invalid(format!(
            "tensor {name} has {} values for shape {shape:?}",
            values.len()
        )));
    }
    if values.iter().any(|v| !v.is_finite()) {
        return Err(EmbedError::Invalid(format!(
            "tensor {name} has non-finite values"
        )));
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
            return f32::from_bits(sign)
                + (if sign != 0 { -1.0 } else { 1.0 }) * (m as f32) * 2f32.powi(-24);
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

pub(crate) fn add_assign(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

/// Sum in 8 lanes (a plain f32 sum is one serial chain; this vectorizes).
/// Sum of `f(v)` over `values` in 8 lanes (value i in lane i % 8, each lane
/// in order): a fixed order, so results are deterministic; written by
/// chunks so it vectorizes (an `i % 8` index did not).
#[inline(always)]
fn lane_sum(values: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = values.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for l in 0..8 {
            acc[l] += f(chunk[l]);
        }
    }
    for (a, &v) in acc.iter_mut().zip(rest) {
        *a += f(v);
    }
    hsum(&acc)
}

#[inline(always)]
fn layer_norm(x: &mut [f32], norm: &LayerNorm, eps: f32) {
    for row in x.chunks_exact_mut(HIDDEN) {
        let mean = lane_sum(row, |v| v) / HIDDEN as f32;
        let var = lane_sum(row, |v| (v - mean) * (v - mean)) / HIDDEN as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

#[inline(always)]
fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for v in row.iter_mut() {
        *v = (*v - max).exp();
    }
    // Summed apart from the exp calls, in the same order: the sum stays in a
    // register instead of being spilled around every call.
    let sum = row.iter().fold(0.0, |sum, v| sum + v);
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
    let mut p = x2 * -2.726_142_3e-10 + 2.770_681_4e-8;
    p = x2 * p - 2.101_024e-6;
    p = x2 * p - 5.692_506_4e-5;
    p = x2 * p - 7.349_906e-4;
    p = x2 * p - 2.954_6e-3;
    p = x2 * p - 1.609_603_3e-2;
    p *= x;
    let mut q = x2 * -1.456_607_2e-5 - 2.133_740_6e-4;
    q = x2 * q - 1.682_827e-3;
    q = x2 * q - 7.373_329e-3;
    q = x2 * q - 1.426_473_9e-2;
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

    /// A full-size encoder with pseudo-random weights (small vocabulary).
    fn random_bert(precision: Precision) -> Bert {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |scale: f32| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * scale
        };
        let mut values = |n: usize, scale: f32| (0..n).map(|_| next(scale)).collect::<Vec<f32>>();
        let norm = |values: &mut dyn FnMut(usize, f32) -> Vec<f32>| LayerNorm {
            gamma: values(HIDDEN, 0.2).iter().map(|g| 1.0 + g).collect(),
            beta: values(HIDDEN, 0.1),
        };
        let layers = (0..LAYERS)
            .map(|_| Layer {
                qkv: Dense::new(
                    &values(QKV * HIDDEN, 0.2),
                    values(QKV, 0.1),
                    QKV,
                    HIDDEN,
                    precision,
                ),
                attention_out: Dense::new(
                    &values(HIDDEN * HIDDEN, 0.2),
                    values(HIDDEN, 0.1),
                    HIDDEN,
                    HIDDEN,
                    precision,
                ),
                attention_norm: norm(&mut values),
                intermediate: Dense::new(
                    &values(INTERMEDIATE * HIDDEN, 0.2),
                    values(INTERMEDIATE, 0.1),
                    INTERMEDIATE,
                    HIDDEN,
                    precision,
                ),
                output: Dense::new(
                    &values(HIDDEN * INTERMEDIATE, 0.1),
                    values(HIDDEN, 0.1),
                    HIDDEN,
                    INTERMEDIATE,
                    precision,
                ),
                output_norm: norm(&mut values),
            })
            .collect();
        Bert {
            word_embeddings: values(100 * HIDDEN, 2.0),
            position_embeddings: values(MAX_POSITIONS * HIDDEN, 1.0),
            token_type0: values(HIDDEN, 0.5),
            embedding_norm: norm(&mut values),
            layers,
            eps: 1e-12,
            vocab_size: 100,
        }
    }

    fn test_sequences() -> Vec<Vec<u32>> {
        (1..=13u32)
            .chain([24, 40, 100])
            .map(|n| (0..n).map(|i| (i * 7 + n) % 100).collect())
            .collect()
    }

    /// The SIMD kernels compute what the portable code does (block sizes
    /// 1..=12 and tile remainders: sequences of 1..=13, 24, 40 and 100 tokens).
    /// A kernel this CPU lacks is reported (and fails REQUIRE_ALL_KERNELS=1).
    #[test]
    fn kernels_agree() {
        let sequences = test_sequences();
        let precisions = [
            #[cfg(feature = "f32-reference")]
            Precision::F32,
            Precision::Int8,
        ];
        for precision in precisions {
            let bert = random_bert(precision);
            let portable = bert.encode_kernel(&sequences, Kernel::Portable, IntKernel::Portable);
            for kernel in Kernel::ALL.into_iter().filter(|&k| k != Kernel::Portable) {
                if !kernel.supported() {
                    crate::tests::kernel_not_compared(&kernel);
                    continue;
                }
                let fast = bert.encode_kernel(&sequences, kernel, IntKernel::detect());
                // int8: the f32 code's last-bit differences (FMA or not) can
                // move an activation across a rounding boundary, one
                // quantization step (measured worst: cosine 0.99996).
                let tolerance = if precision == Precision::Int8 {
                    0.9999
                } else {
                    0.99999
                };
                for (a, b) in portable.iter().zip(&fast) {
                    let cos: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
                    assert!(cos > tolerance, "{precision:?} {kernel:?} cosine {cos}");
                }
            }
            // Out-of-range ids are clamped, not a panic.
            assert_eq!(bert.encode(&[vec![5000, 1]]).len(), 1);
        }
    }

    /// State sums normalize to `encode`'s vectors, and a sequence's sum does
    /// not depend on the batch it was computed in (so sums from different
    /// batches can be added up).
    #[test]
    fn state_sums_are_encode_unnormalized_and_batch_independent() {
        let sequences = test_sequences();
        let bert = random_bert(Precision::Int8);
        let sums = bert.state_sums(&sequences);
        assert_eq!(
            sums.iter().copied().map(normalized).collect::<Vec<_>>(),
            bert.encode(&sequences)
        );
        for (seq, batched) in sequences.iter().zip(&sums) {
            assert_eq!(&bert.state_sums(std::slice::from_ref(seq))[0], batched);
        }
        assert!(bert.state_sums(&[]).is_empty());
    }

    /// With the f32 code fixed, every integer kernel gives the same vectors
    /// bit for bit (their sums are exact; the rest is shared code).
    #[test]
    fn int_kernels_give_identical_vectors() {
        let sequences = test_sequences();
        let bert = random_bert(Precision::Int8);
        let kernel = Kernel::detect();
        let reference = bert.encode_kernel(&sequences, kernel, IntKernel::Portable);
        for int_kernel in IntKernel::ALL {
            if !int_kernel.supported() {
                crate::tests::kernel_not_compared(&int_kernel);
                continue;
            }
            assert!(
                bert.encode_kernel(&sequences, kernel, int_kernel) == reference,
                "{int_kernel:?} differs"
            );
        }
    }

    /// int8 stays close to f32 on the same random weights.
    #[cfg(feature = "f32-reference")]
    #[test]
    fn int8_close_to_f32() {
        let sequences = test_sequences();
        let f32_vectors = random_bert(Precision::F32).encode(&sequences);
        let int8_vectors = random_bert(Precision::Int8).encode(&sequences);
        for (a, b) in f32_vectors.iter().zip(&int8_vectors) {
            let cos: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            assert!(cos > 0.99, "cosine {cos}");
        }
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

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vector_exp_is_within_two_ulp_of_exp() {
        if !Kernel::Avx2.supported() {
            crate::tests::kernel_not_compared(&Kernel::Avx2);
            return;
        }
        // Every softmax input: x - max <= 0, down to where e^x leaves the normals.
        let mut worst = 0f64;
        let mut x = 0f32;
        while x > -87.0 {
            let lanes: [f32; 8] = std::array::from_fn(|l| x - l as f32 * 1.3e-3);
            let mut got = [0f32; 8];
            // SAFETY: AVX2 + FMA checked above; 8 floats in and out.
            unsafe {
                use std::arch::x86_64::*;
                let e = simd::exp_nonpositive(_mm256_loadu_ps(lanes.as_ptr()));
                _mm256_storeu_ps(got.as_mut_ptr(), e);
            }
            for (&x, &e) in lanes.iter().zip(&got) {
                let exact = f64::from(x).exp();
                let ulp =
                    f64::from(f32::from_bits((exact as f32).to_bits() + 1)) - exact as f32 as f64;
                worst = worst.max((f64::from(e) - exact).abs() / ulp.abs());
            }
            x -= 0.0173;
        }
        assert!(worst <= 2.0, "vector exp is {worst} ulp off");
        // Below the normals it stops at e^-87 rather than going subnormal.
        // SAFETY: as above.
        let tiny = unsafe {
            use std::arch::x86_64::*;
            _mm256_cvtss_f32(simd::exp_nonpositive(_mm256_set1_ps(-1000.0)))
        };
        assert!(tiny > 0.0 && tiny < 2e-38, "e^-1000 gave {tiny}");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vector_softmax_matches_softmax_at_every_length() {
        if !Kernel::Avx2.supported() {
            crate::tests::kernel_not_compared(&Kernel::Avx2);
            return;
        }
        for n in 1..=33usize {
            let scores: Vec<f32> = (0..n).map(|i| ((i * 37 % 11) as f32 - 5.0) * 1.7).collect();
            let mut expected = scores.clone();
            softmax(&mut expected);
            // Past n: garbage the softmax must neither read into the sum nor let through.
            let mut row = scores.clone();
            row.resize(n.next_multiple_of(8), 1e30);
            // SAFETY: AVX2 + FMA checked above; row holds n rounded up to 8.
            unsafe { simd::softmax_avx2(row.as_mut_ptr(), n) };
            for (i, (&got, &want)) in row.iter().zip(&expected).enumerate() {
                assert!(
                    (got - want).abs() <= 2e-6 * want.max(1e-3),
                    "n {n}, [{i}]: {got} against {want}"
                );
            }
        }
    }

    #[test]
    fn softmax_sums_to_one() {
        let mut row = [1.0, 2.0, 3.0, -1e30];
        softmax(&mut row);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert_eq!(row[3], 0.0);
    }
}
