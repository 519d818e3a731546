//! Int8 dense layers: s8 weights (symmetric, one scale per output channel,
//! quantized once at load) times u8 activations (asymmetric, one scale and
//! zero point per token row, quantized right before each layer), summed in
//! i32 and dequantized to f32:
//!
//!   out[t][o] = (row_scale[t] · w_scale[o]) · (Σ_i q[t][i]·w[o][i] − zp[t]·colsum[o]) + bias[o]
//!
//! Integer sums are exact, so every kernel (AVX-512 VNNI, AVX-VNNI, AVX2,
//! portable) returns the same i32 sums bit for bit; the quantization and the
//! dequantization are one shared piece of code. The vectors therefore depend
//! only on the f32 parts (attention, layer norms, GELU), as before.
//!
//! Overflow bound: |q·w| ≤ 255·127 = 32,385, so with K ≤ 1536 inputs
//! |Σ| ≤ 1536·32,385 = 49,743,360 and |zp·colsum| ≤ 255·1536·127 = 49,743,360;
//! their difference is below 10^8 < 2^31. vpdpbusd (not the saturating
//! vpdpbusds) adds four products into an i32 lane without intermediate
//! saturation, and the AVX2 path's vpmaddwd pairs (≤ 64,770) fit in i32 too.
//! MAX_INPUTS enforces the bound.

use crate::shape::PANEL;

/// Largest K the i32 bound above covers (with a wide margin: 2^31 / (2·32,385)
/// is about 33,000).
pub(crate) const MAX_INPUTS: usize = 1536;
/// Inputs per vpdpbusd group (four u8·s8 products per i32 lane).
const GROUP: usize = 4;
/// Rows of the largest register block any kernel uses.
const MAX_BLOCK: usize = 12;
/// Input rows per tile, as in the f32 path: a tile of activations (96 x 1536
/// bytes) stays in L2 while every weight panel passes over it.
const ROW_TILE: usize = 96;

/// A dense layer with s8 weights.
pub(crate) struct QLinear {
    /// Weights packed [outputs / PANEL][inputs / 4][PANEL][4]: for each output
    /// of a panel, the 4 consecutive inputs vpdpbusd multiplies into one lane.
    panels: Vec<i8>,
    /// Per output: max |w| / 127.
    scales: Vec<f32>,
    /// Per output: Σ_i w_q[o][i], for the activation zero-point correction.
    colsums: Vec<i32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl QLinear {
    /// Quantizes a row-major [outputs, inputs] f32 weight (finite values,
    /// as load_tensor checks).
    pub(crate) fn new(weight: &[f32], bias: Vec<f32>, outputs: usize, inputs: usize) -> QLinear {
        assert!(weight.len() == outputs * inputs && bias.len() == outputs);
        assert!(
            outputs.is_multiple_of(PANEL) && inputs.is_multiple_of(GROUP) && inputs <= MAX_INPUTS
        );
        let mut panels = vec![0i8; outputs * inputs];
        let mut scales = vec![0f32; outputs];
        let mut colsums = vec![0i32; outputs];
        for o in 0..outputs {
            let row = &weight[o * inputs..(o + 1) * inputs];
            let max = row.iter().fold(0f32, |m, w| m.max(w.abs()));
            // An all-zero row keeps scale 0 (its outputs are the bias); so does a
            // row too small for 127 / max to be finite (only a malformed file).
            let inverse = if max > 0.0 && (127.0 / max).is_finite() {
                127.0 / max
            } else {
                0.0
            };
            scales[o] = if inverse > 0.0 { max / 127.0 } else { 0.0 };
            let (p, c) = (o / PANEL, o % PANEL);
            for (i, w) in row.iter().enumerate() {
                // Round half to even by adding and subtracting 1.5 * 2^23 (exact
                // for |y| <= 127; round_ties_even is a libm call per weight here).
                let q = (((w * inverse).clamp(-127.0, 127.0) + SIGNED_ROUND) - SIGNED_ROUND) as i8;
                panels[((p * inputs / GROUP + i / GROUP) * PANEL + c) * GROUP + i % GROUP] = q;
                colsums[o] += i32::from(q);
            }
        }
        QLinear {
            panels,
            scales,
            colsums,
            bias,
            inputs,
            outputs,
        }
    }

    pub(crate) fn inputs(&self) -> usize {
        self.inputs
    }
}

/// 2^23 and 1.5 * 2^23: adding either rounds to an integer (nearest, ties
/// to even) in the ranges used here.
const ROUND: f32 = 8_388_608.0;
const SIGNED_ROUND: f32 = 12_582_912.0;

/// Activations of one dense layer's input, quantized per row.
#[derive(Default)]
pub(crate) struct QuantRows {
    values: Vec<u8>,
    scales: Vec<f32>,
    zero_points: Vec<i32>,
}

/// Quantizes `rows` rows of `k` floats: x ≈ scale · (q − zero_point), with
/// the range widened to include 0 (so 0 is exact and the zero point is in
/// 0..=255). An all-zero row, or one with an infinite range, gets scale 1,
/// zero point 0 and all q 0, i.e. contributes nothing (its outputs are the
/// bias).
/// `AVX2`: the caller runs with AVX2 enabled (the range scan then uses it:
/// written portably, the compiler turned the 8-lane min/max into a chain of
/// lane shuffles).
#[inline(always)]
pub(crate) fn quantize_rows<const AVX2: bool>(x: &[f32], rows: usize, k: usize, q: &mut QuantRows) {
    assert!(x.len() >= rows * k);
    q.values.resize(rows * k, 0);
    q.scales.resize(rows, 0.0);
    q.zero_points.resize(rows, 0);
    for (r, (row, out)) in x
        .chunks_exact(k)
        .zip(q.values.chunks_exact_mut(k))
        .take(rows)
        .enumerate()
    {
        let (lo, hi) = row_range::<AVX2>(row);
        let scale = (hi - lo) / 255.0;
        // A subnormal range would make 1 / scale infinite (and 0 · inf = NaN):
        // such a row counts as all zeros, like an empty one.
        let (scale, inverse, zero_point) =
            if scale > 0.0 && scale.is_finite() && (1.0 / scale).is_finite() {
                (
                    scale,
                    1.0 / scale,
                    (-lo / scale).round_ties_even().clamp(0.0, 255.0),
                )
            } else {
                (1.0, 0.0, 0.0)
            };
        for (v, o) in row.iter().zip(out.iter_mut()) {
            // Rounds to nearest even as round_ties_even does, but vectorized
            // (that is a libm call without SSE4.1): for 0 <= y <= 255, y + 2^23
            // has a unit ulp, so its low mantissa bits are the rounded y. A
            // NaN (impossible with finite weights) gives some byte, no panic.
            *o = ((v * inverse + zero_point).clamp(0.0, 255.0) + ROUND).to_bits() as u8;
        }
        q.scales[r] = scale;
        q.zero_points[r] = zero_point as i32;
    }
}

/// The row's range widened to include 0: (min(0, row), max(0, row)), NaNs
/// skipped. Min and max are exact, so the lanes' order does not matter.
#[inline(always)]
fn row_range<const AVX2: bool>(row: &[f32]) -> (f32, f32) {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: AVX2 is enabled in the caller (AVX2 is only true there).
        return unsafe { simd::row_range_avx2(row) };
    }
    // 8 independent lanes so the min/max can vectorize.
    let (mut lo, mut hi) = ([0f32; 8], [0f32; 8]);
    let chunks = row.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for l in 0..8 {
            lo[l] = if chunk[l] < lo[l] { chunk[l] } else { lo[l] };
            hi[l] = if chunk[l] > hi[l] { chunk[l] } else { hi[l] };
        }
    }
    lanes_range(lo, hi, rest)
}

/// The end of `row_range` on either path: the values past the last whole 8
/// into lane 0, then the lanes folded from 0.
#[inline(always)]
fn lanes_range(mut lo: [f32; 8], mut hi: [f32; 8], rest: &[f32]) -> (f32, f32) {
    for &v in rest {
        lo[0] = if v < lo[0] { v } else { lo[0] };
        hi[0] = if v > hi[0] { v } else { hi[0] };
    }
    (
        lo.iter().fold(0f32, |a, &b| a.min(b)),
        hi.iter().fold(0f32, |a, &b| a.max(b)),
    )
}

/// Which integer kernel runs. All give identical sums.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum IntKernel {
    Portable,
    /// AVX2 without VNNI: s8/u8 widened to i16, vpmaddwd (exact; no vpmaddubsw,
    /// whose i16 saturation would change results).
    Avx2,
    /// AVX-VNNI (VEX, 256-bit vpdpbusd).
    AvxVnni,
    /// AVX-512 VNNI (512-bit vpdpbusd).
    Avx512Vnni,
}

impl IntKernel {
    pub(crate) const ALL: [IntKernel; 4] = [
        IntKernel::Avx512Vnni,
        IntKernel::AvxVnni,
        IntKernel::Avx2,
        IntKernel::Portable,
    ];

    /// The fastest supported kernel.
    pub(crate) fn detect() -> IntKernel {
        IntKernel::ALL
            .into_iter()
            .find(|k| k.supported())
            .unwrap_or(IntKernel::Portable)
    }

    pub(crate) fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = std::is_x86_feature_detected!("avx2");
            match self {
                IntKernel::Portable => true,
                IntKernel::Avx2 => avx2,
                IntKernel::AvxVnni => avx2 && std::is_x86_feature_detected!("avxvnni"),
                IntKernel::Avx512Vnni => {
                    avx2 && std::is_x86_feature_detected!("avx512f")
                        && std::is_x86_feature_detected!("avx512vnni")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == IntKernel::Portable
        }
    }

    /// Rows per register block: 2 zmm accumulators a row (24 of 32
    /// registers), 4 ymm a row for AVX-VNNI (12 of 16), and 4 a row for
    /// AVX2 on half a panel (8 of 16, plus 4 widened weights).
    fn block_rows(self) -> usize {
        match self {
            IntKernel::Avx512Vnni => 12,
            IntKernel::AvxVnni => 3,
            IntKernel::Avx2 => 2,
            IntKernel::Portable => 4,
        }
    }
}

type Tile = [[i32; PANEL]; MAX_BLOCK];

/// Runs the integer products of `rows` quantized rows through `lin`, handing
/// each block of i32 sums (rows t..t+n, outputs of panel p) to `sink`.
#[inline(always)]
fn for_each_block(
    x: &[u8],
    rows: usize,
    lin: &QLinear,
    kernel: IntKernel,
    mut sink: impl FnMut(usize, usize, usize, &Tile),
) {
    let k = lin.inputs;
    assert!(
        x.len() >= rows * k
            && lin.panels.len() == lin.outputs * k
            && k.is_multiple_of(GROUP)
            && k <= MAX_INPUTS
    );
    let kernel = if kernel.supported() {
        kernel
    } else {
        IntKernel::Portable
    };
    let most = kernel.block_rows();
    let mut tile: Tile = [[0; PANEL]; MAX_BLOCK];
    for t0 in (0..rows).step_by(ROW_TILE) {
        let t1 = (t0 + ROW_TILE).min(rows);
        for p in 0..lin.outputs / PANEL {
            let panel = &lin.panels[p * k * PANEL..(p + 1) * k * PANEL];
            // Balanced blocks: 13 rows run as 7 + 6, not 12 + 1 (a one-row
            // block is bound by the accumulation latency).
            let blocks = (t1 - t0).div_ceil(most);
            let mut t = t0;
            for b in 0..blocks {
                let n = (t1 - t).div_ceil(blocks - b);
                // SAFETY: kernel is supported (checked above).
                unsafe { dot_block(kernel, &x[t * k..(t + n) * k], n, k, panel, &mut tile) };
                sink(t, p, n, &tile);
                t += n;
            }
        }
    }
}

/// tile[r][c] = Σ_i x[r·k + i] · w[panel column c][i] for r < n.
/// Caller: `kernel` is supported on this CPU.
#[inline(always)]
unsafe fn dot_block(
    kernel: IntKernel,
    x: &[u8],
    n: usize,
    k: usize,
    panel: &[i8],
    tile: &mut Tile,
) {
    assert!(
        n <= kernel.block_rows()
            && n <= MAX_BLOCK
            && x.len() == n * k
            && panel.len() == k * PANEL
            && k.is_multiple_of(GROUP)
    );
    #[cfg(target_arch = "x86_64")]
    {
        let (xp, wp, out) = (x.as_ptr(), panel.as_ptr(), tile.as_mut_ptr());
        // SAFETY: the caller guarantees the CPU features; the block
        // functions read n rows of k bytes from x and k * PANEL bytes from
        // the panel, and write n rows of the tile (sizes asserted above).
        match kernel {
            IntKernel::Avx512Vnni => return unsafe { simd::block_avx512vnni(xp, n, k, wp, out) },
            IntKernel::AvxVnni => return unsafe { simd::block_avxvnni(xp, n, k, wp, out) },
            IntKernel::Avx2 => return unsafe { simd::block_avx2(xp, n, k, wp, out) },
            IntKernel::Portable => {}
        }
    }
    block_portable(x, n, k, panel, tile);
}

/// Portable block: plain integer arithmetic (the reference for the others).
/// Only x86_64 CPUs without AVX2 run it in the product (about 3x slower than
/// the portable f32 code there; the shipped builds are linux-x64 only).
fn block_portable(x: &[u8], n: usize, k: usize, panel: &[i8], tile: &mut Tile) {
    for (row, acc) in x.chunks_exact(k).zip(tile.iter_mut()).take(n) {
        *acc = [0; PANEL];
        for (xs, ws) in row
            .chunks_exact(GROUP)
            .zip(panel.chunks_exact(GROUP * PANEL))
        {
            for (a, w) in acc.iter_mut().zip(ws.chunks_exact(GROUP)) {
                for (&xv, &wv) in xs.iter().zip(w) {
                    *a += i32::from(xv) * i32::from(wv);
                }
            }
        }
    }
}

/// out = dequantized x W^T + b for `rows` quantized rows.
#[inline(always)]
pub(crate) fn linear(
    x: &QuantRows,
    rows: usize,
    lin: &QLinear,
    out: &mut [f32],
    kernel: IntKernel,
) {
    let m = lin.outputs;
    assert!(out.len() >= rows * m && x.scales.len() >= rows && x.zero_points.len() >= rows);
    // inline(always): a closure does not inherit its caller's target features
    // unless inlined into it (else this loop runs without AVX).
    for_each_block(
        &x.values,
        rows,
        lin,
        kernel,
        #[inline(always)]
        |t, p, n, tile| {
            for (r, sums) in tile.iter().enumerate().take(n) {
                let (scale, zero_point) = (x.scales[t + r], x.zero_points[t + r]);
                let columns = p * PANEL..(p + 1) * PANEL;
                let out = &mut out[(t + r) * m..][columns.clone()];
                for ((((o, &sum), &w_scale), &colsum), &bias) in out
                    .iter_mut()
                    .zip(sums)
                    .zip(&lin.scales[columns.clone()])
                    .zip(&lin.colsums[columns.clone()])
                    .zip(&lin.bias[columns])
                {
                    // Exact in i32 (bound in the module comment).
                    *o = (scale * w_scale) * (sum - zero_point * colsum) as f32 + bias;
                }
            }
        },
    );
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    use super::{GROUP, PANEL};

    /// `row_range` on 8 lanes: min_ps(v, lo) is `v < lo ? v : lo`, the
    /// portable code's select (a NaN keeps the lane as it was).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn row_range_avx2(row: &[f32]) -> (f32, f32) {
        let (mut lo, mut hi) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        let chunks = row.chunks_exact(8);
        let rest = chunks.remainder();
        for chunk in chunks {
            let v = _mm256_loadu_ps(chunk.as_ptr());
            lo = _mm256_min_ps(v, lo);
            hi = _mm256_max_ps(v, hi);
        }
        let (mut los, mut his) = ([0f32; 8], [0f32; 8]);
        _mm256_storeu_ps(los.as_mut_ptr(), lo);
        _mm256_storeu_ps(his.as_mut_ptr(), hi);
        super::lanes_range(los, his, rest)
    }

    /// Bytes ahead of the current weight group to prefetch (8 groups).
    const PREFETCH: usize = 8 * GROUP * PANEL;

    #[inline(always)]
    unsafe fn group(x: *const u8) -> i32 {
        // SAFETY: caller guarantees 4 readable bytes.
        unsafe { (x as *const i32).read_unaligned() }
    }

    /// R rows x 32 outputs: 2R zmm accumulators, two weight loads and one
    /// broadcast per row for every 4 inputs.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vnni")]
    unsafe fn block_avx512vnni_rows<const R: usize>(
        x: *const u8,
        k: usize,
        panel: *const i8,
        out: *mut [i32; PANEL],
    ) {
        let mut lo = [_mm512_setzero_si512(); R];
        let mut hi = [_mm512_setzero_si512(); R];
        for g in 0..k / GROUP {
            let w = panel.add(g * GROUP * PANEL);
            // Weights stream from L3 for short inputs (a query); the hardware
            // prefetcher alone leaves these loads waiting.
            _mm_prefetch::<_MM_HINT_T0>(w.wrapping_add(PREFETCH));
            _mm_prefetch::<_MM_HINT_T0>(w.wrapping_add(PREFETCH + 64));
            let w0 = _mm512_loadu_si512(w as *const _);
            let w1 = _mm512_loadu_si512(w.add(64) as *const _);
            for r in 0..R {
                let v = _mm512_set1_epi32(group(x.add(r * k + g * GROUP)));
                lo[r] = _mm512_dpbusd_epi32(lo[r], v, w0);
                hi[r] = _mm512_dpbusd_epi32(hi[r], v, w1);
            }
        }
        for r in 0..R {
            let o = out.add(r) as *mut i32;
            _mm512_storeu_si512(o as *mut _, lo[r]);
            _mm512_storeu_si512(o.add(16) as *mut _, hi[r]);
        }
    }

    /// Caller: AVX-512F + VNNI present; x holds n * k bytes, panel k * PANEL,
    /// out n rows; n <= 12.
    #[target_feature(enable = "avx512f,avx512vnni")]
    pub unsafe fn block_avx512vnni(
        x: *const u8,
        n: usize,
        k: usize,
        panel: *const i8,
        out: *mut [i32; PANEL],
    ) {
        match n {
            12 => block_avx512vnni_rows::<12>(x, k, panel, out),
            11 => block_avx512vnni_rows::<11>(x, k, panel, out),
            10 => block_avx512vnni_rows::<10>(x, k, panel, out),
            9 => block_avx512vnni_rows::<9>(x, k, panel, out),
            8 => block_avx512vnni_rows::<8>(x, k, panel, out),
            7 => block_avx512vnni_rows::<7>(x, k, panel, out),
            6 => block_avx512vnni_rows::<6>(x, k, panel, out),
            5 => block_avx512vnni_rows::<5>(x, k, panel, out),
            4 => block_avx512vnni_rows::<4>(x, k, panel, out),
            3 => block_avx512vnni_rows::<3>(x, k, panel, out),
            2 => block_avx512vnni_rows::<2>(x, k, panel, out),
            1 => block_avx512vnni_rows::<1>(x, k, panel, out),
            _ => {}
        }
    }

    /// R rows x 32 outputs with 8-lane vectors: 4R accumulators.
    // Register tiles indexed by row and lane, as the kernel's layout is written.
    #[allow(clippy::needless_range_loop)]
    #[inline]
    #[target_feature(enable = "avx2,avxvnni")]
    unsafe fn block_avxvnni_rows<const R: usize>(
        x: *const u8,
        k: usize,
        panel: *const i8,
        out: *mut [i32; PANEL],
    ) {
        let mut acc = [[_mm256_setzero_si256(); 4]; R];
        for g in 0..k / GROUP {
            let w = panel.add(g * GROUP * PANEL) as *const __m256i;
            let w = [
                _mm256_loadu_si256(w),
                _mm256_loadu_si256(w.add(1)),
                _mm256_loadu_si256(w.add(2)),
                _mm256_loadu_si256(w.add(3)),
            ];
            for r in 0..R {
                let v = _mm256_set1_epi32(group(x.add(r * k + g * GROUP)));
                for j in 0..4 {
                    acc[r][j] = _mm256_dpbusd_avx_epi32(acc[r][j], v, w[j]);
                }
            }
        }
        for r in 0..R {
            let o = out.add(r) as *mut __m256i;
            for j in 0..4 {
                _mm256_storeu_si256(o.add(j), acc[r][j]);
            }
        }
    }

    /// Caller: AVX2 + AVX-VNNI present; sizes as block_avx512vnni, n <= 3.
    #[target_feature(enable = "avx2,avxvnni")]
    pub unsafe fn block_avxvnni(
        x: *const u8,
        n: usize,
        k: usize,
        panel: *const i8,
        out: *mut [i32; PANEL],
    ) {
        match n {
            3 => block_avxvnni_rows::<3>(x, k, panel, out),
            2 => block_avxvnni_rows::<2>(x, k, panel, out),
            1 => block_avxvnni_rows::<1>(x, k, panel, out),
            _ => {}
        }
    }

    /// R rows x 32 outputs without VNNI, half a panel at a time: 16 bytes of
    /// weights (4 outputs x 4 inputs) widen to 16 i16; the 4 activation bytes,
    /// widened and repeated, meet them in vpmaddwd, whose i32 lanes hold
    /// (output o, inputs 0-1) and (output o, inputs 2-3); the pairs are added
    /// at the end.
    // Register tiles indexed by row and lane, as the kernel's layout is written.
    #[allow(clippy::needless_range_loop)]
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn block_avx2_rows<const R: usize>(
        x: *const u8,
        k: usize,
        panel: *const i8,
        out: *mut [i32; PANEL],
    ) {
        for half in 0..2 {
            let mut acc = [[_mm256_setzero_si256(); 4]; R];
            for g in 0..k / GROUP {
                let w = panel.add(g * GROUP * PANEL + half * GROUP * PANEL / 2) as *const __m128i;
                let w = [
                    _mm256_cvtepi8_epi16(_mm_loadu_si128(w)),
                    _mm256_cvtepi8_epi16(_mm_loadu_si128(w.add(1))),
                    _mm256_cvtepi8_epi16(_mm_loadu_si128(w.add(2))),
                    _mm256_cvtepi8_epi16(_mm_loadu_si128(w.add(3))),
                ];
                for r in 0..R {
                    let v = _mm256_cvtepu8_epi16(_mm_set1_epi32(group(x.add(r * k + g * GROUP))));
                    for j in 0..4 {
                        acc[r][j] = _mm256_add_epi32(acc[r][j], _mm256_madd_epi16(v, w[j]));
                    }
                }
            }
            for r in 0..R {
                let o = (out.add(r) as *mut i32).add(half * PANEL / 2);
                for j in 0..4 {
                    let mut pairs = [0i32; 8];
                    _mm256_storeu_si256(pairs.as_mut_ptr() as *mut __m256i, acc[r][j]);
                    for c in 0..4 {
                        *o.add(4 * j + c) = pairs[2 * c] + pairs[2 * c + 1];
                    }
                }
            }
        }
    }

    /// Caller: AVX2 present; sizes as block_avx512vnni, n <= 2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn block_avx2(
        x: *const u8,
        n: usize,
        k: usize,
        panel: *const i8,
        out: *mut [i32; PANEL],
    ) {
        match n {
            2 => block_avx2_rows::<2>(x, k, panel, out),
            1 => block_avx2_rows::<1>(x, k, panel, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn float(&mut self, scale: f32) -> f32 {
            ((self.next() >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * scale
        }
    }

    /// All i32 sums of a kernel, row-major [rows, outputs].
    fn sums(kernel: IntKernel, x: &[u8], rows: usize, lin: &QLinear) -> Vec<i32> {
        let mut out = vec![0i32; rows * lin.outputs];
        for_each_block(x, rows, lin, kernel, |t, p, n, tile| {
            for (r, sums) in tile.iter().enumerate().take(n) {
                out[(t + r) * lin.outputs + p * PANEL..][..PANEL].copy_from_slice(sums);
            }
        });
        out
    }

    /// Every supported kernel gives the portable kernel's i32 sums bit for
    /// bit: K = 384 and 1536, row counts 1..=13 (every block size and odd
    /// remainders), 97 and 200 (row tiles), and extreme bytes (0, 255 with
    /// ±127 weights: the largest sums the bound allows).
    #[test]
    fn kernels_give_identical_sums() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut compared = 0;
        for (k, m) in [(384, 96), (1536, 64), (384, 1152)] {
            let weight: Vec<f32> = (0..m * k).map(|_| rng.float(2.0)).collect();
            let mut lin = QLinear::new(&weight, vec![0.0; m], m, k);
            for rows in (1..=13).chain([97, 200]) {
                let mut x: Vec<u8> = (0..rows * k).map(|_| rng.next() as u8).collect();
                if rows == 13 {
                    // Extremes: a row of 255 against ±127 columns.
                    x[..k].fill(255);
                    lin.panels[..k * PANEL]
                        .iter_mut()
                        .enumerate()
                        .for_each(|(i, w)| *w = if i % 3 == 0 { -127 } else { 127 });
                }
                let reference = sums(IntKernel::Portable, &x, rows, &lin);
                // The portable kernel itself against a naive product.
                for (t, o) in [(0, 0), (rows - 1, m - 1), (rows / 2, m / 3)] {
                    let (p, c) = (o / PANEL, o % PANEL);
                    let naive: i32 = (0..k)
                        .map(|i| {
                            let w = lin.panels
                                [((p * k / GROUP + i / GROUP) * PANEL + c) * GROUP + i % GROUP];
                            i32::from(x[t * k + i]) * i32::from(w)
                        })
                        .sum();
                    assert_eq!(
                        reference[t * m + o],
                        naive,
                        "portable k={k} row {t} output {o}"
                    );
                }
                for kernel in IntKernel::ALL {
                    if !kernel.supported() {
                        if (k, m, rows) == (384, 96, 1) {
                            crate::tests::kernel_not_compared(&kernel);
                        }
                        continue;
                    }
                    assert!(
                        sums(kernel, &x, rows, &lin) == reference,
                        "{kernel:?} differs: k={k} m={m} rows={rows}"
                    );
                    compared += 1;
                }
            }
        }
        assert!(compared >= 45, "only {compared} comparisons ran");
    }

    /// Weight quantization: per-channel scale, values within half a step,
    /// column sums match the packed weights.
    #[test]
    fn weights_round_trip() {
        let mut rng = Rng(7);
        let (m, k) = (64, 384);
        let mut weight: Vec<f32> = (0..m * k).map(|_| rng.float(1.0)).collect();
        weight[k..2 * k].fill(0.0); // an all-zero output channel
        let lin = QLinear::new(&weight, vec![0.0; m], m, k);
        assert_eq!(lin.scales[1], 0.0);
        for o in 0..m {
            let (p, c) = (o / PANEL, o % PANEL);
            let mut colsum = 0;
            for i in 0..k {
                let q = lin.panels[((p * k / GROUP + i / GROUP) * PANEL + c) * GROUP + i % GROUP];
                colsum += i32::from(q);
                assert!(
                    (f32::from(q) * lin.scales[o] - weight[o * k + i]).abs()
                        <= lin.scales[o] * 0.5 + 1e-7
                );
            }
            assert_eq!(colsum, lin.colsums[o]);
        }
    }

    /// Ranges too small for their reciprocal to be finite count as all zeros:
    /// no NaN from 0 · inf, in weights (a malformed file) or activations.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn row_ranges_agree() {
        if !IntKernel::Avx2.supported() {
            crate::tests::kernel_not_compared(&IntKernel::Avx2);
            return;
        }
        let mut rng = Rng(5);
        for len in [1, 7, 8, 9, 31, 384, 1536] {
            let mut row: Vec<f32> = (0..len).map(|_| rng.float(6.0)).collect();
            for case in 0..4 {
                match case {
                    1 => row.iter_mut().for_each(|v| *v = v.abs() + 0.1),
                    2 => row.iter_mut().for_each(|v| *v = -v.abs() - 0.1),
                    3 => row[len / 2] = f32::NAN,
                    _ => {}
                }
                // SAFETY: AVX2 checked above.
                let fast = unsafe { simd::row_range_avx2(&row) };
                assert_eq!(fast, row_range::<false>(&row), "len {len}, case {case}");
            }
        }
    }

    #[test]
    fn subnormal_ranges_quantize_to_zero() {
        let (m, k) = (32, 384);
        let mut weight = vec![0f32; m * k];
        weight[5] = 1e-39;
        let lin = QLinear::new(&weight, vec![0.5; m], m, k);
        assert_eq!(lin.scales[0], 0.0);
        assert!(lin.panels.iter().all(|&q| q == 0));
        let mut x = vec![0f32; 2 * k];
        x[3] = 1e-39;
        x[k + 7] = -2e-39;
        let mut q = QuantRows::default();
        quantize_rows::<false>(&x, 2, k, &mut q);
        assert_eq!((q.scales[0], q.zero_points[0]), (1.0, 0));
        assert!(q.values.iter().all(|&v| v == 0));
    }

    /// The dequantized product is close to the f32 product, for ordinary rows,
    /// a row with one outlier, an all-zero row and a non-finite row (no panic;
    /// its outputs are the bias).
    #[test]
    fn linear_approximates_f32() {
        let mut rng = Rng(11);
        let (m, k, rows) = (64, 384, 5);
        let weight: Vec<f32> = (0..m * k).map(|_| rng.float(0.2)).collect();
        let bias: Vec<f32> = (0..m).map(|_| rng.float(0.1)).collect();
        let lin = QLinear::new(&weight, bias.clone(), m, k);
        let mut x: Vec<f32> = (0..rows * k).map(|_| rng.float(4.0) + 0.5).collect();
        x[k + 7] = -30.0;
        x[2 * k..3 * k].fill(0.0);
        x[3 * k + 1] = f32::NAN;
        x[3 * k + 2] = f32::INFINITY;
        let mut q = QuantRows::default();
        quantize_rows::<false>(&x, rows, k, &mut q);
        let mut out = vec![0f32; rows * m];
        linear(&q, rows, &lin, &mut out, IntKernel::detect());
        for t in [0, 1, 4] {
            for o in 0..m {
                let exact: f32 = (0..k)
                    .map(|i| x[t * k + i] * weight[o * k + i])
                    .sum::<f32>()
                    + bias[o];
                let magnitude: f32 = (0..k)
                    .map(|i| (x[t * k + i] * weight[o * k + i]).abs())
                    .sum();
                assert!(
                    (out[t * m + o] - exact).abs() < 0.02 * magnitude,
                    "row {t} output {o}: {} vs {exact}",
                    out[t * m + o]
                );
            }
        }
        assert_eq!(&out[2 * m..3 * m], &bias[..]);
        assert_eq!(&out[3 * m..4 * m], &bias[..]);
    }
}
