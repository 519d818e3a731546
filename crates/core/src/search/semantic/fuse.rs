//! Fusion of the lexical ranking with cosine similarity: the lexical top
//! `depth` re-ordered by `score / top score + weight · cosine`.
//!
//! Chosen leave-one-source-out on the seven-source dev set (bench/QUALITY.md):
//! score fusion at weight 0.5 was the only form found that gains on the
//! macro while keeping every source at or above lexical ranking; rank-based
//! forms (`(1 + k) / (rank + k) + w · cosine`) gained more on some sources
//! and lost seal-dev and RestBench.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridParams {
    /// Lexical hits re-ranked; deeper hits follow in lexical order.
    pub depth: usize,
    pub weight: f32,
}

impl Default for HybridParams {
    fn default() -> Self {
        HybridParams { depth: 100, weight: 0.5 }
    }
}

/// `ranked` (lexical order) re-ordered: its first `params.depth` entries by
/// `score / best score + weight · cosine` (ties keep lexical order), the
/// rest after them unchanged. A non-finite score or cosine counts as 0.
pub fn fuse<T: Copy>(ranked: &[T], score: impl Fn(T) -> f32, cosine: impl Fn(T) -> f32, params: &HybridParams) -> Vec<T> {
    let head = ranked.len().min(params.depth);
    let finite = |x: f32| if x.is_finite() { x } else { 0.0 };
    let best = ranked[..head].iter().map(|&item| finite(score(item))).fold(0f32, f32::max);
    let mut scored: Vec<(f32, usize)> = ranked[..head]
        .iter()
        .enumerate()
        .map(|(i, &item)| {
            let relative = if best > 0.0 { finite(score(item)) / best } else { 0.0 };
            (relative + params.weight * finite(cosine(item)), i)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, i)| ranked[i]).chain(ranked[head..].iter().copied()).collect()
}
