//! The one ranking of a catalog search, assembled: lexical ([`SearchIndex::search`]), hybrid
//! ([`super::hybrid::rerank`], when the catalog hands over the vectors), prerequisites
//! ([`Prerequisites::promote`]). The catalog decides whether a search is hybrid; this decides
//! nothing else but the order of the steps and how deep each one looks.

use super::hybrid;
use super::semantic::{HybridParams, QueryVectors, VectorTable};
use super::{Prerequisites, RankingParams, ScoredHit, SearchIndex};
use crate::entry::ToolEntry;

/// What a hybrid search re-ranks with: the catalog's entries and tool vectors, and the query's.
#[derive(Clone, Copy)]
pub struct Semantic<'a> {
    pub entries: &'a [ToolEntry],
    pub tools: &'a VectorTable,
    pub query: &'a QueryVectors,
}

impl SearchIndex {
    /// The one ranking of a catalog search: the lexical hits (exact id or name first, BM25F,
    /// diversity, weak marks), re-ranked with the encoder when `semantic` holds the vectors,
    /// then each of the top hits followed by the tools of its server that find an identifier
    /// it requires (`prerequisites`, unless the query states one). At most `limit` hits.
    /// `params`: the index's own ([`SearchIndex::params`]), except in the evaluation grid.
    pub fn rank(
        &self,
        query: &str,
        limit: usize,
        allowed: &dyn Fn(usize) -> bool,
        semantic: Option<Semantic<'_>>,
        prerequisites: &Prerequisites,
        params: &RankingParams,
    ) -> Vec<ScoredHit> {
        let depth = params.prerequisite_depth;
        let wanted = limit.max(depth);
        let ranked = match semantic {
            None => self.search_with(query, wanted, allowed, params),
            Some(semantic) => {
                let fusion = HybridParams::default();
                let lexical = self.search_with(query, wanted.max(fusion.depth), allowed, params);
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
        prerequisites.promote(query, &ranked, allowed, limit, depth)
    }
}
