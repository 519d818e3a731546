//! Hybrid fusion: the lexical top of a query re-ranked with tool vectors
//! ([`super::semantic`]), and the query vectors a search uses. The catalog
//! decides whether a search is hybrid (its ranking setting, its vectors being
//! ready); everything after that decision lives here.

use std::collections::HashMap;
use std::sync::Arc;

use super::semantic::{fuse, HybridParams, QueryVectors, SemanticModel, VectorTable};
use super::ScoredHit;
use crate::entry::ToolEntry;

/// Query vectors for a hybrid search, gathered before it: cached ones at
/// once ([`QueryVectorSet::gather`]), the rest embedded by
/// [`QueryVectorSet::complete`] on a thread that may block (a libuv worker,
/// the session's blocking pool), never on the event loop. A search given the
/// set uses its vectors even if the model's cache dropped them meanwhile.
#[derive(Default, Clone)]
pub struct QueryVectorSet {
    model: Option<Arc<SemanticModel>>,
    vectors: HashMap<String, Arc<QueryVectors>>,
    missing: Vec<String>,
    /// Embed a query found nowhere on the searching thread (the synchronous
    /// API); otherwise such a query ranks lexically.
    embed_missing: bool,
}

impl QueryVectorSet {
    /// No vectors given: a search embeds what is not cached on its own thread.
    pub fn embed_here() -> QueryVectorSet {
        QueryVectorSet {
            embed_missing: true,
            ..QueryVectorSet::default()
        }
    }

    /// The vectors `model` has cached for `queries`; the others are listed as
    /// missing. Queries `searchable` refuses (a search would) are left out.
    pub fn gather<'q>(
        model: &Arc<SemanticModel>,
        queries: impl IntoIterator<Item = &'q str>,
        searchable: impl Fn(&str) -> bool,
    ) -> QueryVectorSet {
        let mut set = QueryVectorSet {
            model: Some(Arc::clone(model)),
            ..QueryVectorSet::default()
        };
        for query in queries {
            if !searchable(query)
                || set.vectors.contains_key(query)
                || set.missing.iter().any(|m| m == query)
            {
                continue;
            }
            match model.cached_query(query) {
                Some(vectors) => {
                    set.vectors.insert(query.to_string(), vectors);
                }
                None => set.missing.push(query.to_string()),
            }
        }
        set
    }

    /// Whether every query has its vectors (nothing to embed).
    pub fn is_complete(&self) -> bool {
        self.missing.is_empty()
    }

    /// Embeds the missing queries on the calling thread (1-4 ms each for dev
    /// queries, tens of ms for a long request): call it where blocking is fine.
    pub fn complete(mut self) -> QueryVectorSet {
        if let Some(model) = self.model.clone() {
            for query in std::mem::take(&mut self.missing) {
                let vectors = model.embed_query(&query);
                self.vectors.insert(query, vectors);
            }
        }
        self.missing.clear();
        self
    }

    /// The vectors of `query` if they were computed by `model`.
    fn get(&self, query: &str, model: &Arc<SemanticModel>) -> Option<Arc<QueryVectors>> {
        let same = self
            .model
            .as_ref()
            .is_some_and(|m| Arc::ptr_eq(m, model) || m.digest() == model.digest());
        same.then(|| self.vectors.get(query).cloned()).flatten()
    }

    /// The vectors a search of `query` uses: from this set first, then from
    /// the model's cache, then embedded here if the set allows it; `None`:
    /// the query ranks lexically.
    pub fn vectors_for(
        &self,
        query: &str,
        model: &Arc<SemanticModel>,
    ) -> Option<Arc<QueryVectors>> {
        let found = self.get(query, model).or_else(|| model.cached_query(query));
        found.or_else(|| self.embed_missing.then(|| model.embed_query(query)))
    }
}

/// Re-ranks the lexical hits `ranked` (of `query`, ordinals into `entries`)
/// with the tool vectors of `table`; exact id / name matches stay first, as
/// in lexical ranking.
pub fn rerank(
    query: &str,
    ranked: Vec<ScoredHit>,
    entries: &[ToolEntry],
    table: &VectorTable,
    query_vectors: &QueryVectors,
    params: &HybridParams,
) -> Vec<ScoredHit> {
    if ranked.is_empty() {
        return ranked;
    }
    let exact = exact_count(query, &ranked, entries);
    let mut out = ranked[..exact].to_vec();
    out.extend(fuse(
        &ranked[exact..],
        |h: ScoredHit| h.score,
        |h: ScoredHit| table.similarity(h.ordinal, query_vectors),
        params,
    ));
    out
}

/// How many of the first `ranked` hits are exact id / name matches of `query` (ignoring
/// case): the lexical ranking puts them first, and re-rankings keep them there.
pub fn exact_count(query: &str, ranked: &[ScoredHit], entries: &[ToolEntry]) -> usize {
    let folded = query.trim().to_lowercase();
    ranked
        .iter()
        .take_while(|h| {
            let entry = &entries[h.ordinal];
            entry.id.to_lowercase() == folded || entry.name.to_lowercase() == folded
        })
        .count()
}
