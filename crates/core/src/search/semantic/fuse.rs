//! Fusion of the lexical ranking with the encoder's similarity: the lexical
//! top `depth` re-ordered by `score / top score + weight · z(similarity)`,
//! where z standardizes the similarities over those candidates.
//!
//! Chosen leave-one-source-out on the seven-source dev set (bench/QUALITY.md,
//! "Multi-vector queries"; the weight re-chosen with the prerequisite tools in
//! place, "Prerequisite tools"). Standardizing makes the weight mean the same on
//! every query: raw cosines of one query bunch in a narrow band whose place
//! and width vary with its length and wording, so a raw weight large enough to
//! help on some queries swamped the lexical order on others.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridParams {
    /// Lexical hits re-ranked; deeper hits follow in lexical order.
    pub depth: usize,
    /// Weight of one standard deviation of similarity, against the lexical
    /// score relative to the best one (in 0..=1).
    pub weight: f32,
}

impl Default for HybridParams {
    fn default() -> Self {
        HybridParams {
            depth: 100,
            weight: 0.2,
        }
    }
}

/// `ranked` (lexical order) re-ordered: its first `params.depth` entries by
/// `score / best score + weight · (similarity − mean) / deviation` over those
/// entries (ties keep lexical order), the rest after them unchanged. A
/// non-finite score or similarity counts as 0; equal similarities add nothing.
pub fn fuse<T: Copy>(
    ranked: &[T],
    score: impl Fn(T) -> f32,
    similarity: impl Fn(T) -> f32,
    params: &HybridParams,
) -> Vec<T> {
    let head = ranked.len().min(params.depth);
    let finite = |x: f32| if x.is_finite() { x } else { 0.0 };
    let best = ranked[..head]
        .iter()
        .map(|&item| finite(score(item)))
        .fold(0f32, f32::max);
    let similarities: Vec<f32> = ranked[..head]
        .iter()
        .map(|&item| finite(similarity(item)))
        .collect();
    let n = similarities.len().max(1) as f32;
    let mean = similarities.iter().sum::<f32>() / n;
    let deviation = (similarities
        .iter()
        .map(|s| (s - mean) * (s - mean))
        .sum::<f32>()
        / n)
        .sqrt();
    let mut scored: Vec<(f32, usize)> = ranked[..head]
        .iter()
        .zip(&similarities)
        .enumerate()
        .map(|(i, (&item, &s))| {
            let relative = if best > 0.0 {
                finite(score(item)) / best
            } else {
                0.0
            };
            let standardized = if deviation > 1e-6 {
                (s - mean) / deviation
            } else {
                0.0
            };
            (relative + params.weight * standardized, i)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .map(|(_, i)| ranked[i])
        .chain(ranked[head..].iter().copied())
        .collect()
}
