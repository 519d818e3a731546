//! The one ranking of a catalog search, assembled: lexical ([`SearchIndex::search`]), hybrid
//! ([`super::hybrid::rerank`], when the catalog hands over the vectors), prerequisites
//! ([`Prerequisites::promote`]). The catalog decides whether a search is hybrid; this decides
//! nothing else but the order of the steps and how deep each one looks.

use super::hybrid;
use super::learned::{self, LearnedPrior, LearnedQuery, LearningParams, LEARNED_DEPTH};
use super::semantic::{HybridParams, QueryVectors, VectorTable};
use super::{Prerequisites, RankingParams, ScoredHit, SearchIndex};
use crate::entry::{EntryDigest, ToolEntry};

/// What a hybrid search re-ranks with: the catalog's entries and tool vectors, and the query's.
#[derive(Clone, Copy)]
pub struct Semantic<'a> {
    pub entries: &'a [ToolEntry],
    pub tools: &'a VectorTable,
    pub query: &'a QueryVectors,
}

/// What a search that learns from its gateway adds: the prior, how it is used, the time, and
/// the catalog's ordinal of a tool digest.
#[derive(Clone, Copy)]
pub struct Learned<'a> {
    pub prior: &'a LearnedPrior,
    pub params: LearningParams,
    /// Seconds since the Unix epoch.
    pub now: u64,
    pub entries: &'a [ToolEntry],
    pub ordinal_of: &'a dyn Fn(&EntryDigest) -> Option<usize>,
}

impl SearchIndex {
    /// The one ranking of a catalog search: the lexical hits (exact id or name first, BM25F,
    /// diversity, weak marks), re-ranked with the encoder when `semantic` holds the vectors,
    /// then each of the top hits followed by the tools of its server that find an identifier
    /// it requires (`prerequisites`, unless the query states one). At most `limit` hits.
    /// `params`: the index's own ([`SearchIndex::params`]), except in the evaluation grid.
    #[allow(clippy::too_many_arguments)]
    pub fn rank(
        &self,
        query: &str,
        limit: usize,
        allowed: &dyn Fn(usize) -> bool,
        semantic: Option<Semantic<'_>>,
        learned: Option<Learned<'_>>,
        prerequisites: &Prerequisites,
        params: &RankingParams,
    ) -> Vec<ScoredHit> {
        let depth = params.prerequisite_depth;
        let mut wanted = limit.max(depth);
        // Learning looks deeper, and only when the prior knows a word of the query: otherwise
        // the ranking is exactly the unlearned one.
        // The query is analyzed for the prior once; the search weighs those words.
        let words = match learned {
            Some(l) if l.params.weight > 0.0 => self.learned_words(query),
            _ => Vec::new(),
        };
        let learned = learned
            .filter(|l| l.params.weight > 0.0 && l.prior.knows_any(&LearnedQuery::uniform(&words)));
        if learned.is_some() {
            wanted = wanted.max(LEARNED_DEPTH);
        }
        let mut weighed = LearnedQuery::default();
        let into = learned
            .is_some()
            .then_some((words.as_slice(), &mut weighed));
        let ranked = match semantic {
            None => self.search_weighed(query, wanted, allowed, params, into),
            Some(semantic) => {
                let fusion = HybridParams::default();
                let lexical =
                    self.search_weighed(query, wanted.max(fusion.depth), allowed, params, into);
                hybrid::rerank(
                    query,
                    lexical,
                    semantic.entries,
                    semantic.tools,
                    semantic.query,
                    &fusion,
                )
            }
        };
        let ranked = match learned {
            Some(l) => {
                let scores: Vec<(usize, f32)> = l
                    .prior
                    .score(&weighed, l.now, &l.params)
                    .into_iter()
                    .filter_map(|s| {
                        (l.ordinal_of)(&s.digest)
                            .filter(|&o| allowed(o))
                            .map(|o| (o, s.strength))
                    })
                    // Strongest first: deeper ones could only enter below the lexical depth.
                    .take(LEARNED_DEPTH)
                    .collect();
                let exact = hybrid::exact_count(query, &ranked, l.entries);
                learned::blend(ranked, exact, &scores, l.params.weight)
            }
            None => ranked,
        };
        prerequisites.promote(query, &ranked, allowed, limit, depth)
    }
}
