//! Redundancy-aware selection of the final hits (maximal marginal relevance).
//!
//! Catalogs hold near-duplicates: ten weather-forecast tools from ten
//! servers. Filling the page with them hides the tools for a query's other
//! tasks and gives the model little to choose from. From the best
//! `depth` candidates, hits are picked greedily by normalized score minus
//! `lambda` times the largest term overlap (Jaccard over name, label and
//! description terms) with a hit already picked. Tiers still come first: an
//! exact match precedes everything, a literal match precedes expansion-only
//! matches.

use super::bm25f::{compare, Candidate};
use super::signature::{jaccard, Signature};

/// Pick `limit` hits from `pool` (already in [`compare`] order).
pub fn select(
    mut pool: Vec<Candidate>,
    limit: usize,
    lambda: f32,
    signatures: &[Signature],
) -> Vec<Candidate> {
    if lambda <= 0.0 || pool.len() <= 1 {
        pool.truncate(limit);
        return pool;
    }
    let top_score = pool
        .iter()
        .map(|c| c.score)
        .fold(f32::MIN_POSITIVE, f32::max);
    let signature_of = |c: &Candidate| {
        signatures
            .get(c.ordinal as usize)
            .unwrap_or(&Signature::EMPTY)
    };
    let mut picked: Vec<Candidate> = Vec::with_capacity(limit.min(pool.len()));
    // Largest overlap of each remaining candidate with the picked hits.
    let mut overlap = vec![0f32; pool.len()];
    let mut taken = vec![false; pool.len()];
    while picked.len() < limit {
        let mut best: Option<(usize, f32)> = None;
        for (i, c) in pool.iter().enumerate() {
            if taken[i] {
                continue;
            }
            let value = c.score / top_score - lambda * overlap[i];
            let better = match best {
                None => true,
                Some((b, best_value)) => {
                    let current = &pool[b];
                    // Tiers are strict; within a tier the adjusted value decides.
                    (c.exact, c.literal)
                        .cmp(&(current.exact, current.literal))
                        .then(value.total_cmp(&best_value))
                        .then(compare(current, c))
                        .is_gt()
                }
            };
            if better {
                best = Some((i, value));
            }
        }
        let Some((chosen, _)) = best else { break };
        taken[chosen] = true;
        let chosen_signature = signature_of(&pool[chosen]);
        for (i, c) in pool.iter().enumerate() {
            if !taken[i] {
                overlap[i] = overlap[i].max(jaccard(signature_of(c), chosen_signature));
            }
        }
        picked.push(pool[chosen]);
    }
    picked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::signature::signature;

    fn candidate(ordinal: u32, score: f32) -> Candidate {
        Candidate {
            ordinal,
            score,
            exact: crate::search::Exact::No,
            literal: true,
            named: 0,
        }
    }

    #[test]
    fn near_duplicate_yields_to_a_different_tool() {
        let signatures = vec![
            signature(["weather forecast daily"]),
            signature(["weather forecast hourly"]),
            signature(["stock price quote"]),
        ];
        let pool = vec![candidate(0, 1.0), candidate(1, 0.95), candidate(2, 0.8)];
        let order: Vec<u32> = select(pool.clone(), 3, 0.5, &signatures)
            .iter()
            .map(|c| c.ordinal)
            .collect();
        assert_eq!(order, vec![0, 2, 1]);
        let plain: Vec<u32> = select(pool, 3, 0.0, &signatures)
            .iter()
            .map(|c| c.ordinal)
            .collect();
        assert_eq!(plain, vec![0, 1, 2]);
    }

    #[test]
    fn tiers_are_never_crossed() {
        let signatures = vec![
            signature(["a b c"]),
            signature(["a b c"]),
            signature(["x y z"]),
        ];
        let mut exact = candidate(1, 0.1);
        exact.exact = crate::search::Exact::Folded;
        let mut expansion_only = candidate(2, 0.9);
        expansion_only.literal = false;
        let pool = vec![exact, candidate(0, 1.0), expansion_only];
        let order: Vec<u32> = select(pool, 3, 1.0, &signatures)
            .iter()
            .map(|c| c.ordinal)
            .collect();
        assert_eq!(order, vec![1, 0, 2]);
    }
}
