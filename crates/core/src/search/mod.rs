//! Search: the tantivy index over catalog entries and its ranking.
//!
//! INTERFACE (owned by the search module; the catalog depends only on this):
//! - `SearchIndex::build(entries)` indexes entries by ordinal (their position
//!   in the id-sorted slice).
//! - `SearchIndex::search(query, limit, allowed)` returns at most `limit`
//!   ordinals, best first, only those with `allowed(ordinal) == true`.
//!   Exact name / id matches (ignoring case) come first; an empty or all-stopword query
//!   returns nothing unless it is an exact name or id; ties break by id.
//!
//! Layout: [`analyze`] (tokenizer, shared by both sides) → [`index`] (tantivy
//! build + side tables; a live catalog's update parts keep their [`postings`] in memory) → [`query`] (terms, [`expand`]ed at a discount, unknown
//! words joined by name words one edit away: [`typo`]) →
//! [`bm25f`] (BM25F over the postings, ordering) → [`diversify`] (near-duplicates
//! yield to other tools). Field weights: [`fields`]. Optional hybrid
//! re-ranking with a sentence encoder: [`semantic`]. Then the tools that find
//! an identifier a top hit requires follow it: [`prerequisites`].
//!
//! One entry assembles them for a catalog search: `SearchIndex::rank` in
//! [`pipeline`] (lexical, hybrid when given the vectors, prerequisites). The lexical part alone
//! ([`SearchIndex::search`]) serves surfaces and hydration.

mod analyze;
mod bm25f;
mod cache_folder;
mod diversify;
mod expand;
mod fields;
mod fold;
pub mod hybrid;
mod index;
pub mod learned;
mod params;
mod pipeline;
mod postings;
mod prerequisites;
mod query;
pub mod semantic;
mod signature;
mod stopwords;
mod stored;
mod strength;
mod typo;

pub use fields::{FieldKind, RankingParams, FIELD_COUNT};
pub use fold::Folder;
pub use index::{map_in_halves, second_thread_allowed, with_second_thread};
pub use pipeline::{Learned, Semantic};
pub use prerequisites::{Prerequisites, MAX_SERVER_TOOLS, PREREQUISITE_DEPTH};
pub use query::{clauses, MAX_CLAUSES};
pub use stored::{IndexCacheOutcome, IndexCacheState, STORED_MIN_ENTRIES};

use crate::entry::ToolEntry;
use crate::error::Result;
use bm25f::Candidate;
use index::{Exact, IndexData};

/// One ranked result: the entry's ordinal in the catalog and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredHit {
    pub ordinal: usize,
    pub score: f32,
    /// How much distinctive query text the hit matched in its name, label or
    /// description, in [0, 1]: 1 for a word found in one tool only, or an
    /// exact name/id match (see strength.rs).
    pub strength: f32,
    /// Matched only incidental common words ([`strength`](Self::strength)
    /// below the calibrated threshold); never for an exact name/id match.
    pub weak: bool,
    /// Placed by [`prerequisites`]: the ordinal of the hit above it that
    /// requires an identifier this tool finds.
    pub needed_by: Option<u32>,
}

/// The search index of one catalog. Immutable once built; Send + Sync.
pub struct SearchIndex {
    data: IndexData,
    params: RankingParams,
}

impl SearchIndex {
    pub fn build(entries: &[ToolEntry]) -> Result<SearchIndex> {
        SearchIndex::build_with(entries, RankingParams::default())
    }

    /// `build`, loaded from (or stored for the next process in) the cache
    /// folder `dir` when the catalog is large enough: see [`stored`].
    pub fn build_stored(
        entries: &[ToolEntry],
        dir: Option<&std::path::Path>,
    ) -> Result<(SearchIndex, IndexCacheOutcome)> {
        let params = RankingParams::default();
        let (data, outcome) = stored::build_stored(entries, &params, dir)?;
        Ok((SearchIndex { data, params }, outcome))
    }

    /// `build` with explicit ranking parameters (for the evaluation grid).
    pub fn build_with(entries: &[ToolEntry], params: RankingParams) -> Result<SearchIndex> {
        Ok(SearchIndex {
            data: index::build(entries, &params)?,
            params,
        })
    }

    /// The index of `entries`, a new version of this index's catalog:
    /// `reused[ordinal]` is the ordinal here of an entry whose indexed text
    /// (name, label, description, input schema, owner) is unchanged. Only the
    /// other entries are indexed; ranking is identical to [`SearchIndex::build`].
    pub fn derive(&self, entries: &[ToolEntry], reused: &[Option<u32>]) -> Result<SearchIndex> {
        Ok(SearchIndex {
            data: index::derive(&self.data, entries, reused, &self.params)?,
            params: self.params.clone(),
        })
    }

    /// The ranking parameters this index searches with.
    pub fn params(&self) -> &RankingParams {
        &self.params
    }

    /// How many shared index parts this version reads (1 after a full build).
    pub fn part_count(&self) -> usize {
        self.data.part_count()
    }

    /// How alike two entries' name, label and description terms are (Jaccard
    /// of their signatures, 0..1; 0 for an unknown ordinal).
    pub fn text_overlap(&self, a: usize, b: usize) -> f32 {
        match (self.data.signatures.get(a), self.data.signatures.get(b)) {
            (Some(x), Some(y)) => signature::jaccard(x, y),
            _ => 0.0,
        }
    }

    /// Number of indexed entries.
    pub fn len(&self) -> usize {
        self.data.doc_count
    }

    pub fn is_empty(&self) -> bool {
        self.data.doc_count == 0
    }

    pub fn search(
        &self,
        query: &str,
        limit: usize,
        allowed: &dyn Fn(usize) -> bool,
    ) -> Vec<ScoredHit> {
        self.search_with(query, limit, allowed, &self.params)
    }

    /// `search` with explicit ranking parameters (for the evaluation grid).
    pub fn search_with(
        &self,
        query: &str,
        limit: usize,
        allowed: &dyn Fn(usize) -> bool,
        params: &RankingParams,
    ) -> Vec<ScoredHit> {
        self.search_weighed(query, limit, allowed, params, None)
    }

    /// `search_with`; with `learned` (the query's words from
    /// [`SearchIndex::learned_words`] and where to put them), also the query as
    /// a learned prior reads it, its words weighted by their rarity in this
    /// catalog (a word no tool has weighs as much as one only one tool has).
    pub(crate) fn search_weighed(
        &self,
        query: &str,
        limit: usize,
        allowed: &dyn Fn(usize) -> bool,
        params: &RankingParams,
        learned: Option<(&[String], &mut learned::LearnedQuery)>,
    ) -> Vec<ScoredHit> {
        if limit == 0 {
            return Vec::new();
        }
        let query = bounded(query);
        let exact = self.exact_matches(query, allowed);
        let mut plan = query::plan(query, params);
        typo::correct(&self.data, &mut plan, params);
        let (mut candidates, idf) = if plan.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            bm25f::score(&self.data, &plan, params, allowed)
        };
        if let Some((words, learned)) = learned {
            let rarest = strength::idf_of(1.0, self.data.doc_count as f32);
            let weight_of = |text: &str| {
                plan.terms
                    .iter()
                    .zip(&idf)
                    .find(|(t, _)| t.text == text)
                    .map(|(_, &w)| w)
                    .filter(|&w| w > 0.0)
                    .unwrap_or(rarest)
            };
            *learned = learned::LearnedQuery::new(
                words
                    .iter()
                    .map(|text| (learned::term_hash(text), weight_of(text))),
            );
        }
        if !exact.is_empty() {
            for candidate in candidates.iter_mut() {
                if let Some(&(_, how)) = exact.iter().find(|(o, _)| *o == candidate.ordinal) {
                    candidate.exact = how;
                }
            }
            for &(ordinal, how) in &exact {
                if !candidates.iter().any(|c| c.ordinal == ordinal) {
                    candidates.push(Candidate::exact_only(ordinal, how));
                }
            }
        }
        // Only the best `diversity_depth` are re-picked; deeper candidates follow
        // in score order, so a short page is always a prefix of a longer one.
        let mut pool = bm25f::top(candidates, limit.max(params.diversity_depth));
        let deeper = pool.split_off(pool.len().min(params.diversity_depth));
        let mut hits = diversify::select(pool, limit, params.diversity, &self.data.signatures);
        hits.extend(deeper);
        hits.truncate(limit);
        let mass = strength::QueryMass::new(&plan, &idf, self.data.doc_count, params.common_share);
        hits.into_iter()
            .map(|c| {
                let exact = c.exact.is_exact();
                let strength = if exact { 1.0 } else { mass.strength(c.named) };
                let weak = strength::is_weak(strength, exact, params.weak_below);
                ScoredHit {
                    ordinal: c.ordinal as usize,
                    score: c.score,
                    strength,
                    weak,
                    needed_by: None,
                }
            })
            .collect()
    }

    /// Entries whose id or name equals the trimmed query ignoring case
    /// (`harvest` and `HARVEST` are both exact for "Harvest"), each saying
    /// whether it is spelled as typed: that one leads its case twins. Only
    /// allowed ordinals.
    fn exact_matches(&self, query: &str, allowed: &dyn Fn(usize) -> bool) -> Vec<(u32, Exact)> {
        let trimmed = query.trim();
        if trimmed.is_empty() {
            return Vec::new();
        }
        let mut exact = self.data.exact(&trimmed.to_lowercase(), trimmed);
        exact.retain(|&(o, _)| allowed(o as usize));
        exact
    }
}

impl SearchIndex {
    /// The words a learned prior keys a query by: its distinct literal words,
    /// analyzed as the index analyzes them.
    pub(crate) fn learned_words(&self, query: &str) -> Vec<String> {
        query::literal_terms(bounded(query), &self.params)
    }

    /// The query as a learned prior records it: its words, equally weighted.
    pub fn learned_query(&self, query: &str) -> learned::LearnedQuery {
        learned::LearnedQuery::uniform(&self.learned_words(query))
    }
}

/// The query cut to [`crate::limits::MAX_QUERY_CHARS`] on a char boundary: the catalog
/// already rejects longer ones, this only bounds work for other callers.
fn bounded(query: &str) -> &str {
    tool_search_base::text::prefix(query, crate::limits::MAX_QUERY_CHARS)
}

/// Shared with other modules' tests: `tests::status_tools`.
#[cfg(test)]
pub(crate) mod tests;
