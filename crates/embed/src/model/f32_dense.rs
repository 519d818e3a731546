//! f32 dense layers: the original weights in f32, for parity and quality
//! comparisons against the int8 layers (feature `f32-reference`; the crate's
//! own tests and examples enable it). The product runs int8 only.

use super::madd;
use crate::shape::PANEL;

pub(super) struct Linear {
    /// Weight packed by Linear::new (PyTorch stores it row-major [out, in]).
    panels: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// Input rows per tile: a tile of activations (up to 96 x 1536 floats) stays
/// in L2 while every weight panel passes over it.
const ROW_TILE: usize = 96; // a multiple of 3 (the AVX2 block)

impl Linear {
    /// Packs a row-major [outputs, inputs] weight into panels of PANEL output
    /// columns, [outputs / PANEL][inputs][PANEL]: the kernels then read one
    /// contiguous vector of outputs per input.
    pub(super) fn new(weight: &[f32], bias: Vec<f32>, outputs: usize, inputs: usize) -> Linear {
        let mut panels = vec![0f32; outputs * inputs];
        for o in 0..outputs {
            let (p, c) = (o / PANEL, o % PANEL);
            for i in 0..inputs {
                panels[(p * inputs + i) * PANEL + c] = weight[o * inputs + i];
            }
        }
        Linear {
            panels,
            bias,
            inputs,
            outputs,
        }
    }
}

/// out = x W^T + b for `rows` rows of x.
#[inline(always)]
pub(super) fn linear<const FMA: bool>(x: &[f32], rows: usize, lin: &Linear, out: &mut [f32]) {
    let (k, m) = (lin.inputs, lin.outputs);
    assert!(
        x.len() >= rows * k
            && out.len() >= rows * m
            && lin.panels.len() == m * k
            && lin.bias.len() == m
    );
    #[cfg(target_arch = "x86_64")]
    if FMA {
        // SAFETY: FMA is only true inside Bert::hidden_states_avx2, which runs
        // only where AVX2 + FMA are present. Bounds asserted above.
        unsafe { simd::linear_avx2(x.as_ptr(), rows, lin, out.as_mut_ptr()) };
        return;
    }
    for t0 in (0..rows).step_by(ROW_TILE) {
        let t1 = (t0 + ROW_TILE).min(rows);
        for p in 0..m / PANEL {
            let panel = &lin.panels[p * k * PANEL..(p + 1) * k * PANEL];
            let bias = &lin.bias[p * PANEL..(p + 1) * PANEL];
            for t in t0..t1 {
                let mut acc = [0f32; PANEL];
                acc.copy_from_slice(bias);
                for (xi, w) in x[t * k..(t + 1) * k].iter().zip(panel.chunks_exact(PANEL)) {
                    for (a, wv) in acc.iter_mut().zip(w) {
                        *a = madd::<FMA>(*xi, *wv, *a);
                    }
                }
                out[t * m + p * PANEL..t * m + (p + 1) * PANEL].copy_from_slice(&acc);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    use super::{Linear, PANEL, ROW_TILE};

    // Register tiles indexed by row and lane, as the kernel's layout is written.
    #[allow(clippy::needless_range_loop)]
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn block_avx2<const R: usize>(
        x: *const f32,
        k: usize,
        panel: *const f32,
        bias: *const f32,
        out: *mut f32,
        m: usize,
    ) {
        let mut acc = [[_mm256_setzero_ps(); 4]; R];
        for row in acc.iter_mut() {
            for (j, a) in row.iter_mut().enumerate() {
                *a = _mm256_loadu_ps(bias.add(8 * j));
            }
        }
        for i in 0..k {
            let w = [
                _mm256_loadu_ps(panel.add(i * PANEL)),
                _mm256_loadu_ps(panel.add(i * PANEL + 8)),
                _mm256_loadu_ps(panel.add(i * PANEL + 16)),
                _mm256_loadu_ps(panel.add(i * PANEL + 24)),
            ];
            for r in 0..R {
                let v = _mm256_set1_ps(*x.add(r * k + i));
                for j in 0..4 {
                    acc[r][j] = _mm256_fmadd_ps(v, w[j], acc[r][j]);
                }
            }
        }
        for r in 0..R {
            for j in 0..4 {
                _mm256_storeu_ps(out.add(r * m + 8 * j), acc[r][j]);
            }
        }
    }

    /// Caller: AVX2 + FMA present; x holds rows * inputs and out rows *
    /// outputs floats.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn linear_avx2(x: *const f32, rows: usize, lin: &Linear, out: *mut f32) {
        let (k, m) = (lin.inputs, lin.outputs);
        for t0 in (0..rows).step_by(ROW_TILE) {
            let t1 = (t0 + ROW_TILE).min(rows);
            for p in 0..m / PANEL {
                let panel = lin.panels.as_ptr().add(p * k * PANEL);
                let bias = lin.bias.as_ptr().add(p * PANEL);
                let mut t = t0;
                while t + 3 <= t1 {
                    block_avx2::<3>(x.add(t * k), k, panel, bias, out.add(t * m + p * PANEL), m);
                    t += 3;
                }
                let (xt, ot) = (x.add(t * k), out.add(t * m + p * PANEL));
                match t1 - t {
                    2 => block_avx2::<2>(xt, k, panel, bias, ot, m),
                    1 => block_avx2::<1>(xt, k, panel, bias, ot, m),
                    _ => {}
                }
            }
        }
    }
}
