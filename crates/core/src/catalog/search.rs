//! Searching a catalog: the one search function, its options and the limits it applies.

use std::marker::PhantomData;

use serde_json::Value;

use super::data::CatalogData;
use super::hits::SearchHit;
use super::Catalog;
use crate::config::{MAX_SEARCH_LIMIT_CAP, MAX_SEARCH_LIMIT_DEFAULT, SEARCH_DEFAULT_LIMIT_DEFAULT};
use crate::error::{Error, ErrorCode, Result};
use crate::limits::MAX_QUERY_CHARS;
use crate::search::hybrid::QueryVectorSet;
use crate::search::{ScoredHit, Semantic};

/// The limits a search applies (resolved config values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchLimits {
    pub default_limit: u32,
    pub max_limit: u32,
}

impl Default for SearchLimits {
    fn default() -> Self {
        SearchLimits {
            default_limit: SEARCH_DEFAULT_LIMIT_DEFAULT,
            max_limit: MAX_SEARCH_LIMIT_DEFAULT,
        }
    }
}

impl SearchLimits {
    /// Clamp as the config does (contract §4).
    pub fn from_options(default_limit: Option<&Value>, max_limit: Option<&Value>) -> SearchLimits {
        let mut raw = serde_json::Map::new();
        raw.insert("mode".into(), Value::from("tools"));
        if let Some(v) = default_limit {
            raw.insert("searchDefaultLimit".into(), v.clone());
        }
        if let Some(v) = max_limit {
            raw.insert("maxSearchLimit".into(), v.clone());
        }
        let resolved =
            crate::config::resolve_labeled(&Value::Object(raw), false, "catalog options");
        SearchLimits {
            default_limit: resolved.search_default_limit,
            max_limit: resolved.max_search_limit,
        }
    }

    /// Contract §3: omitted → default; non-integer or < 1 → error; above max → capped.
    pub fn effective(&self, requested: Option<f64>) -> Result<usize> {
        match requested {
            None => Ok(self.default_limit as usize),
            Some(l) if l.is_finite() && l >= 1.0 && l.fract() == 0.0 => {
                Ok((l.min(f64::from(self.max_limit.min(MAX_SEARCH_LIMIT_CAP)))) as usize)
            }
            Some(_) => Err(Error::new(
                ErrorCode::InvalidLimit,
                "limit must be a positive integer.",
            )),
        }
    }
}

/// How [`Catalog::search`] searches, and what it returns per hit (`R`, see [`Found`]).
///
/// - `SearchOptions::hits(limit)`: what the model sees, `limit` as it asked; counted;
/// - `SearchOptions::hits(limit).with_vectors(&vectors)`: the same, query vectors embedded
///   ahead off the event loop;
/// - `SearchOptions::ordinals(n).lexical_only()`: cheap, for prompts read whole; not counted.
pub struct SearchOptions<'v, R = SearchHit> {
    limit: Limit,
    ranking: Ranking<'v>,
    found: PhantomData<fn() -> R>,
}

/// How many hits a search returns.
enum Limit {
    /// As a model asked: omitted → the catalog's default; not a positive integer →
    /// INVALID_LIMIT; above the catalog's maximum → capped ([`SearchLimits::effective`]).
    Asked(Option<f64>),
    /// At most this many, taken as given (internal callers, a batch that checked its own).
    AtMost(usize),
}

/// Which ranking a search uses.
enum Ranking<'v> {
    /// The catalog's: hybrid once its tool vectors are ready, the learned prior, the
    /// prerequisites. The query's vectors come from the set if given, then the model's cache;
    /// without a set, a query found in neither is embedded on the calling thread, so it ranks
    /// the same whatever the cache holds.
    Catalog(Option<&'v QueryVectorSet>),
    /// Lexical relevance alone (no vectors, learned prior or prerequisites): cheap, for text
    /// read whole (surfaces, hydration).
    LexicalOnly,
}

impl SearchOptions<'static, SearchHit> {
    /// Hits as the model and the gateway see them, `limit` as the model asked (omitted: the
    /// catalog's default; not a positive integer: INVALID_LIMIT; above the maximum: capped).
    /// The search counts as one in the catalog's telemetry.
    pub fn hits(limit: Option<f64>) -> Self {
        SearchOptions::new(Limit::Asked(limit))
    }
}

impl SearchOptions<'static, ScoredHit> {
    /// At most `limit` ranked hits with their score, match strength and weak mark (not
    /// counted as a search).
    pub fn scored(limit: usize) -> Self {
        SearchOptions::new(Limit::AtMost(limit))
    }
}

impl SearchOptions<'static, usize> {
    /// The ordinals of at most `limit` ranked hits (not counted as a search).
    pub fn ordinals(limit: usize) -> Self {
        SearchOptions::new(Limit::AtMost(limit))
    }
}

impl<R> SearchOptions<'static, R> {
    fn new(limit: Limit) -> Self {
        SearchOptions {
            limit,
            ranking: Ranking::Catalog(None),
            found: PhantomData,
        }
    }
}

impl<'v, R> SearchOptions<'v, R> {
    /// At most `limit` hits, taken as given: for a caller that checked the limit itself.
    pub fn at_most(mut self, limit: usize) -> Self {
        self.limit = Limit::AtMost(limit);
        self
    }

    /// Lexical relevance alone: no tool vectors, learned prior or prerequisites. Cheap, for
    /// text read whole (surfaces, hydration), whatever the catalog's ranking.
    pub fn lexical_only(mut self) -> Self {
        self.ranking = Ranking::LexicalOnly;
        self
    }

    /// The query's vectors for a hybrid search taken from `vectors` (from
    /// [`Catalog::query_vectors`] and [`QueryVectorSet::complete`], run off the event loop),
    /// then from the model's cache; a query in neither ranks lexically unless the set allows
    /// embedding it here. Without this, such a query is embedded on the calling thread.
    pub fn with_vectors<'w>(self, vectors: &'w QueryVectorSet) -> SearchOptions<'w, R> {
        SearchOptions {
            limit: self.limit,
            ranking: Ranking::Catalog(Some(vectors)),
            found: PhantomData,
        }
    }
}

/// What a search returns per hit: [`SearchHit`] (compact, as the model sees it; the search
/// counts as one), [`ScoredHit`] (ordinal, score, strength, weak mark) or `usize` (the
/// ordinal). Implemented for those three only.
pub trait Found: sealed::Sealed + Sized {
    /// Whether a search returning these counts in the catalog's telemetry.
    #[doc(hidden)]
    const COUNTED: bool;
    #[doc(hidden)]
    fn found(data: &CatalogData, hit: ScoredHit) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::SearchHit {}
    impl Sealed for super::ScoredHit {}
    impl Sealed for usize {}
}

impl Found for SearchHit {
    const COUNTED: bool = true;
    fn found(data: &CatalogData, hit: ScoredHit) -> Self {
        data.ranked_hit(&hit)
    }
}

impl Found for ScoredHit {
    const COUNTED: bool = false;
    fn found(_: &CatalogData, hit: ScoredHit) -> Self {
        hit
    }
}

impl Found for usize {
    const COUNTED: bool = false;
    fn found(_: &CatalogData, hit: ScoredHit) -> Self {
        hit.ordinal
    }
}

impl Catalog {
    /// The one search of a catalog: the tools this view allows and that can run now, best
    /// first, ranked and returned as `options` say. In the catalog's ranking (hybrid once ready,
    /// see [`Catalog::hybrid_vectors`]) each of the top hits is followed by the tools that find
    /// the identifiers it requires. Errors: INVALID_LIMIT (a limit as asked), INVALID_QUERY (a
    /// query over [`MAX_QUERY_CHARS`]).
    pub fn search<R: Found>(&self, query: &str, options: &SearchOptions<'_, R>) -> Result<Vec<R>> {
        let limit = match options.limit {
            Limit::Asked(limit) => self.limits.effective(limit)?,
            Limit::AtMost(limit) => limit,
        };
        check_query(query)?;
        let searchable = |o| self.is_searchable(o);
        let ranked = match options.ranking {
            Ranking::LexicalOnly => self.data.index.search(query, limit, &searchable),
            Ranking::Catalog(Some(given)) => self.rank(query, limit, given),
            Ranking::Catalog(None) => self.rank(query, limit, &QueryVectorSet::embed_here()),
        };
        if R::COUNTED {
            self.counters.record_search(1);
        }
        Ok(ranked
            .into_iter()
            .map(|hit| R::found(&self.data, hit))
            .collect())
    }

    /// The catalog's ranking of `query`: hybrid when [`Catalog::hybrid_vectors`] has vectors
    /// for it, else lexical; search ranks, in one call.
    fn rank(&self, query: &str, limit: usize, given: &QueryVectorSet) -> Vec<ScoredHit> {
        let vectors = self.hybrid_vectors(query, given);
        let semantic = vectors.as_ref().map(|(tools, query_vectors)| Semantic {
            entries: &self.data.entries,
            tools,
            query: query_vectors,
        });
        let index = &self.data.index;
        let ordinal_of = |digest: &crate::entry::EntryDigest| self.data.ordinal_of_digest(digest);
        index.rank(
            query,
            limit,
            &|o| self.is_searchable(o),
            semantic,
            self.learned_for_search(&ordinal_of),
            &self.data.prerequisites,
            index.params(),
        )
    }
}

impl Catalog {
    /// [`Catalog::search`]'s hits on a worker thread (`searchAsync`): a hybrid catalog makes
    /// the vectors of a query not cached first, here, off the caller's event loop; the same
    /// hits as a search with [`SearchOptions::hits`].
    pub fn search_on_worker(&self, query: &str, limit: Option<f64>) -> Result<Vec<SearchHit>> {
        let vectors = self.query_vectors([query]).complete();
        self.search(query, &SearchOptions::hits(limit).with_vectors(&vectors))
    }
}

/// INVALID_QUERY for a query longer than a search takes.
pub(super) fn check_query(query: &str) -> Result<()> {
    // Counted as the tool_search schema's `maxLength` counts (JSON Schema: Unicode code points),
    // so a query the schema allows is never refused here.
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(Error::new(
            ErrorCode::InvalidQuery,
            format!("query must be at most {MAX_QUERY_CHARS} characters; describe the capability you need in a few words."),
        ));
    }
    Ok(())
}
