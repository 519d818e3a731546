//! Fusion of the lexical order with cosine similarity.

/// `score = (1 + k) / (rank + k) + weight · cosine` over the lexical top
/// `depth` (rank from 1); deeper hits keep their lexical order after them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridParams {
    pub depth: usize,
    pub k: f32,
    pub weight: f32,
}

impl Default for HybridParams {
    fn default() -> Self {
        HybridParams { depth: 50, k: 10.0, weight: 2.0 }
    }
}

/// `ranked` (lexical order) re-ordered: its first `params.depth` entries by
/// fused score (ties keep lexical order), the rest after them unchanged.
/// `cosine` gives each entry's similarity to the query.
pub fn fuse<T: Copy>(ranked: &[T], cosine: impl Fn(T) -> f32, params: &HybridParams) -> Vec<T> {
    let head = ranked.len().min(params.depth);
    let mut scored: Vec<(f32, usize)> = ranked[..head]
        .iter()
        .enumerate()
        .map(|(i, &item)| {
            let rank = (i + 1) as f32;
            let c = cosine(item);
            let c = if c.is_finite() { c } else { 0.0 };
            ((1.0 + params.k) / (rank + params.k) + params.weight * c, i)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, i)| ranked[i]).chain(ranked[head..].iter().copied()).collect()
}
