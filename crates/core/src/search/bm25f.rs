//! BM25F scoring over the tantivy postings, then ordering:
//! exact name/id match, then "matched a term the caller typed", then score,
//! then ordinal (= id order, since entries are sorted by id).
//!
//! Multi-intent queries: each term's contribution is also added to the
//! clauses it came from; the final score is the max-normalized whole-query
//! score plus `clause_weight` times the best max-normalized clause score, so
//! the top tools of every clause rank high, not only tools matching them all.

use std::cell::RefCell;
use std::cmp::Ordering;

use tantivy::schema::Term;

use super::fields::{RankingParams, FIELD_COUNT};
use super::index::{field_factors, term_key, Exact, IndexData};
use super::query::{QueryPlan, MAX_CLAUSES};
use super::strength::{idf_of, term_bit, TermMask, NAMED_FIELDS};
use crate::entry::GONE;

const NO_SLOT: u32 = u32::MAX;

/// Running score of one touched entry.
#[derive(Clone, Copy)]
struct Accumulator {
    ordinal: u32,
    total: f32,
    clause: [f32; MAX_CLAUSES],
    literal: bool,
    /// Plan terms matched in a name, label or description (match strength).
    named: TermMask,
}

/// Per-thread scratch arrays sized to the catalog, reset after each use via
/// the touched lists (so a query costs what it touches, not the catalog size).
#[derive(Default)]
struct Scratch {
    /// BM25F pseudo term frequency of the current term, per ordinal.
    term_tf: Vec<f32>,
    /// Whether the current term occurs in a name, label or description, per ordinal.
    term_named: Vec<bool>,
    term_touched: Vec<u32>,
    /// Ordinal → index in `accumulators`, or `NO_SLOT`.
    slot: Vec<u32>,
    accumulators: Vec<Accumulator>,
    /// Set while in use; a scratch found dirty (after a panic) is fully reset.
    dirty: bool,
}

impl Scratch {
    fn prepare(&mut self, size: usize) {
        if self.dirty || self.slot.len() < size {
            self.term_tf = vec![0.0; size];
            self.term_named = vec![false; size];
            self.slot = vec![NO_SLOT; size];
            self.term_touched.clear();
            self.accumulators.clear();
        }
        self.dirty = true;
    }

    fn reset(&mut self) {
        for acc in &self.accumulators {
            self.slot[acc.ordinal as usize] = NO_SLOT;
        }
        self.accumulators.clear();
        self.dirty = false;
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// A scored candidate before ordering.
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    pub ordinal: u32,
    pub score: f32,
    pub exact: Exact,
    pub literal: bool,
    /// Plan terms matched in a name, label or description.
    pub named: TermMask,
}

impl Candidate {
    /// An exact name/id match that no plan term reached.
    pub fn exact_only(ordinal: u32, exact: Exact) -> Candidate {
        Candidate {
            ordinal,
            score: 0.0,
            exact,
            literal: true,
            named: 0,
        }
    }
}

/// Score every entry matching at least one plan term; returns candidates
/// (unordered) for which `allowed` holds, and each plan term's idf (0 when
/// no entry has it).
pub fn score(
    data: &IndexData,
    plan: &QueryPlan,
    params: &RankingParams,
    allowed: &dyn Fn(usize) -> bool,
) -> (Vec<Candidate>, Vec<f32>) {
    let mut idfs = vec![0f32; plan.terms.len()];
    let candidates = SCRATCH.with(|cell| {
        let Ok(mut scratch) = cell.try_borrow_mut() else {
            return Vec::new();
        };
        scratch.prepare(data.doc_count);
        let n = data.doc_count as f32;
        for (term_index, term) in plan.terms.iter().enumerate() {
            accumulate_term(data, &term.text, params, &mut scratch);
            let df = scratch.term_touched.len() as f32;
            if df == 0.0 {
                continue;
            }
            let idf = idf_of(df, n);
            idfs[term_index] = idf;
            let bit = term_bit(term_index);
            let Scratch {
                term_tf,
                term_named,
                term_touched,
                slot,
                accumulators,
                ..
            } = &mut *scratch;
            for &ordinal in term_touched.iter() {
                let i = ordinal as usize;
                let tf = term_tf[i];
                term_tf[i] = 0.0;
                let named = std::mem::take(&mut term_named[i]);
                let contribution = term.weight * idf * tf * (params.k1 + 1.0) / (params.k1 + tf);
                if slot[i] == NO_SLOT {
                    slot[i] = accumulators.len() as u32;
                    accumulators.push(Accumulator {
                        ordinal,
                        total: 0.0,
                        clause: [0.0; MAX_CLAUSES],
                        literal: false,
                        named: 0,
                    });
                }
                let acc = &mut accumulators[slot[i] as usize];
                acc.total += contribution;
                acc.literal |= term.literal;
                if named {
                    acc.named |= bit;
                }
                if plan.clause_count > 1 {
                    for (c, value) in acc.clause.iter_mut().enumerate() {
                        if term.clauses & (1 << c) != 0 {
                            *value += contribution;
                        }
                    }
                }
            }
            term_touched.clear();
        }
        let out = finish(&scratch.accumulators, plan, params, allowed);
        scratch.reset();
        out
    });
    (candidates, idfs)
}

/// Filter by `allowed` and compute final scores (fusing clauses if any).
fn finish(
    accumulators: &[Accumulator],
    plan: &QueryPlan,
    params: &RankingParams,
    allowed: &dyn Fn(usize) -> bool,
) -> Vec<Candidate> {
    let kept: Vec<&Accumulator> = accumulators
        .iter()
        .filter(|a| allowed(a.ordinal as usize))
        .collect();
    // Without the strict tier every candidate counts as literal; the
    // expansion discount still prefers literal matches.
    let tier = |a: &Accumulator| a.literal || !params.literal_tier;
    let fuse = plan.clause_count > 1 && params.clause_weight > 0.0;
    if !fuse {
        return kept
            .iter()
            .map(|a| Candidate {
                ordinal: a.ordinal,
                score: a.total,
                exact: Exact::No,
                literal: tier(a),
                named: a.named,
            })
            .collect();
    }
    let clauses = plan.clause_count.min(MAX_CLAUSES);
    let mut max_total = f32::MIN_POSITIVE;
    let mut max_clause = [f32::MIN_POSITIVE; MAX_CLAUSES];
    for a in &kept {
        max_total = max_total.max(a.total);
        for (max, score) in max_clause.iter_mut().zip(&a.clause).take(clauses) {
            *max = max.max(*score);
        }
    }
    kept.iter()
        .map(|a| {
            let best_clause = (0..clauses)
                .map(|c| a.clause[c] / max_clause[c])
                .fold(0.0f32, f32::max);
            let score = a.total / max_total + params.clause_weight * best_clause;
            Candidate {
                ordinal: a.ordinal,
                score,
                exact: Exact::No,
                literal: tier(a),
                named: a.named,
            }
        })
        .collect()
}

/// Sum the length-normalized, weighted frequency of one term over all fields
/// into `scratch.term_tf` (BM25F), listing touched ordinals once.
fn accumulate_term(data: &IndexData, text: &str, params: &RankingParams, scratch: &mut Scratch) {
    // Precomputed factors serve the index's own parameters; others (the
    // evaluation grid) are computed per posting.
    let precomputed = *params == data.params;
    // One term per field, for every segment (a live catalog has several).
    let terms: [Term; FIELD_COUNT] =
        std::array::from_fn(|f| Term::from_field_text(data.fields[f], text));
    let key = term_key(text);
    for segment in &data.segments {
        if !segment.may_have(key) {
            continue;
        }
        for field_index in 0..FIELD_COUNT {
            if params.weight[field_index] <= 0.0 {
                continue;
            }
            let term = &terms[field_index];
            for (doc, tf) in segment.postings.postings(field_index, term, text) {
                let Some(&ordinal) = segment.ordinal_of_doc.get(doc as usize) else {
                    break;
                };
                if ordinal == GONE {
                    continue;
                }
                let i = ordinal as usize;
                let factor = if precomputed {
                    data.field_factor.get(i).map_or(0.0, |f| f[field_index])
                } else {
                    data.field_len.get(i).map_or(0.0, |lens| {
                        field_factors(lens, &data.avg_len, params)[field_index]
                    })
                };
                let tf = tf as f32;
                if scratch.term_tf[i] == 0.0 {
                    scratch.term_touched.push(ordinal);
                }
                scratch.term_tf[i] += factor * tf;
                if field_index < NAMED_FIELDS {
                    scratch.term_named[i] = true;
                }
            }
        }
    }
}

/// The final order: exact first, then literal matches, then score, then id.
pub fn compare(a: &Candidate, b: &Candidate) -> Ordering {
    b.exact
        .cmp(&a.exact)
        .then(b.literal.cmp(&a.literal))
        .then(b.score.total_cmp(&a.score))
        .then(a.ordinal.cmp(&b.ordinal))
}

/// Keep the best `limit` candidates, in order.
pub fn top(mut candidates: Vec<Candidate>, limit: usize) -> Vec<Candidate> {
    if limit == 0 {
        return Vec::new();
    }
    if candidates.len() > limit {
        candidates.select_nth_unstable_by(limit - 1, compare);
        candidates.truncate(limit);
    }
    candidates.sort_by(compare);
    candidates
}
