//! BM25F scoring over the tantivy postings, then ordering:
//! exact name/id match, then "matched a term the caller typed", then score,
//! then ordinal (= id order, since entries are sorted by id).

use std::cell::RefCell;
use std::cmp::Ordering;

use tantivy::postings::Postings;
use tantivy::schema::{IndexRecordOption, Term};
use tantivy::{DocSet, TERMINATED};

use super::fields::{RankingParams, FIELD_COUNT};
use super::index::{field_factors, IndexData};
use super::query::QueryPlan;

/// Per-thread scratch arrays sized to the catalog, reset after each use via
/// the touched lists (so a query costs what it touches, not the catalog size).
#[derive(Default)]
struct Scratch {
    /// BM25F pseudo term frequency of the current term, per ordinal.
    term_tf: Vec<f32>,
    term_touched: Vec<u32>,
    score: Vec<f32>,
    /// Bit 0: matched a literal term; bit 1: matched anything.
    flags: Vec<u8>,
    touched: Vec<u32>,
    /// Set while in use; a scratch found dirty (after a panic) is fully reset.
    dirty: bool,
}

const MATCHED: u8 = 0b10;
const LITERAL: u8 = 0b01;

impl Scratch {
    fn prepare(&mut self, size: usize) {
        if self.dirty || self.score.len() < size {
            self.term_tf = vec![0.0; size];
            self.score = vec![0.0; size];
            self.flags = vec![0; size];
            self.term_touched.clear();
            self.touched.clear();
        }
        self.dirty = true;
    }

    fn reset(&mut self) {
        for &ordinal in &self.touched {
            self.score[ordinal as usize] = 0.0;
            self.flags[ordinal as usize] = 0;
        }
        self.touched.clear();
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
    pub exact: bool,
    pub literal: bool,
}

/// Score every entry matching at least one plan term; returns candidates
/// (unordered) for which `allowed` holds.
pub fn score(
    data: &IndexData,
    plan: &QueryPlan,
    params: &RankingParams,
    allowed: &dyn Fn(usize) -> bool,
) -> Vec<Candidate> {
    SCRATCH.with(|cell| {
        let mut scratch = cell.borrow_mut();
        scratch.prepare(data.doc_count);
        let n = data.doc_count as f32;
        for term in &plan.terms {
            accumulate_term(data, &term.text, params, &mut scratch);
            let df = scratch.term_touched.len() as f32;
            if df == 0.0 {
                continue;
            }
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            let flag = MATCHED | if term.literal { LITERAL } else { 0 };
            let Scratch { term_tf, term_touched, score, flags, touched, .. } = &mut *scratch;
            for &ordinal in term_touched.iter() {
                let i = ordinal as usize;
                let tf = term_tf[i];
                term_tf[i] = 0.0;
                let saturated = tf * (params.k1 + 1.0) / (params.k1 + tf);
                if flags[i] == 0 {
                    touched.push(ordinal);
                }
                flags[i] |= flag;
                score[i] += term.weight * idf * saturated;
            }
            term_touched.clear();
        }
        let mut out = Vec::with_capacity(scratch.touched.len());
        for &ordinal in &scratch.touched {
            if allowed(ordinal as usize) {
                let i = ordinal as usize;
                out.push(Candidate {
                    ordinal,
                    score: scratch.score[i],
                    exact: false,
                    literal: scratch.flags[i] & LITERAL != 0,
                });
            }
        }
        scratch.reset();
        out
    })
}

/// Sum the length-normalized, weighted frequency of one term over all fields
/// into `scratch.term_tf` (BM25F), listing touched ordinals once.
fn accumulate_term(data: &IndexData, text: &str, params: &RankingParams, scratch: &mut Scratch) {
    // Precomputed factors serve the index's own parameters; others (the
    // evaluation grid) are computed per posting.
    let precomputed = *params == data.params;
    for segment in &data.segments {
        for field_index in 0..FIELD_COUNT {
            if params.weight[field_index] <= 0.0 {
                continue;
            }
            let term = Term::from_field_text(data.fields[field_index], text);
            let Ok(Some(mut postings)) = segment.fields[field_index].read_postings(&term, IndexRecordOption::WithFreqs)
            else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                let Some(&ordinal) = segment.ordinal_of_doc.get(doc as usize) else { break };
                let i = ordinal as usize;
                let factor = if precomputed {
                    data.field_factor.get(i).map_or(0.0, |f| f[field_index])
                } else {
                    data.field_len.get(i).map_or(0.0, |lens| field_factors(lens, &data.avg_len, params)[field_index])
                };
                let tf = postings.term_freq() as f32;
                if scratch.term_tf[i] == 0.0 {
                    scratch.term_touched.push(ordinal);
                }
                scratch.term_tf[i] += factor * tf;
                doc = postings.advance();
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
