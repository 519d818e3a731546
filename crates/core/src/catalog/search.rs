//! Searching a catalog: the one search function, its options and the limits it applies.

use serde_json::Value;

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

impl Catalog {
    /// Ranked compact hits. Counts as one search.
    pub fn search(&self, query: &str, limit: Option<f64>) -> Result<Vec<SearchHit>> {
        let limit = self.limits.effective(limit)?;
        let hits = self.ranked_hits(query, limit)?;
        self.counters.record_search(1);
        Ok(hits.iter().map(|h| self.data.ranked_hit(h)).collect())
    }

    /// `search` with the vectors of `given` (from [`Catalog::query_vectors`]
    /// and [`QueryVectorSet::complete`], run off the event loop).
    pub fn search_with(
        &self,
        query: &str,
        limit: Option<f64>,
        given: &QueryVectorSet,
    ) -> Result<Vec<SearchHit>> {
        let limit = self.limits.effective(limit)?;
        let hits = self.ranked_hits_with(query, limit, given)?;
        self.counters.record_search(1);
        Ok(hits.iter().map(|h| self.data.ranked_hit(h)).collect())
    }

    /// Ranked ordinals without rendering or counting (surfaces, hydration).
    pub fn search_ordinals(&self, query: &str, limit: usize) -> Result<Vec<usize>> {
        Ok(self
            .search_ranked(query, limit)?
            .into_iter()
            .map(|h| h.ordinal)
            .collect())
    }

    /// Lexically ranked hits with their match strength and weak mark,
    /// without rendering or counting (surfaces, hydration; `search` and
    /// `search_batch` go through [`Catalog::ranked_hits`], which re-ranks
    /// these when the catalog's ranking is hybrid).
    pub fn search_ranked(&self, query: &str, limit: usize) -> Result<Vec<ScoredHit>> {
        check_query(query)?;
        Ok(self
            .data
            .index
            .search(query, limit, &|o| self.is_searchable(o)))
    }

    /// Ranked hits of the searchable entries in the catalog's ranking
    /// (hybrid once ready), each of the top hits followed by the tools that
    /// find the identifiers it requires, for `search` and `search_batch`:
    /// what the model and the gateway see. A hybrid catalog embeds a query
    /// whose vectors are not cached on the calling thread, so a query ranks the
    /// same whatever the cache holds ([`Catalog::ranked_hits_with`] takes
    /// vectors embedded elsewhere). Surfaces and hydration use the lexical
    /// [`Catalog::search_ranked`]: they read whole prompts, and must stay cheap.
    pub(crate) fn ranked_hits(&self, query: &str, limit: usize) -> Result<Vec<ScoredHit>> {
        self.ranked_hits_with(query, limit, &QueryVectorSet::embed_here())
    }

    /// [`Catalog::ranked_hits`] with the query's vectors taken from `given`
    /// first, then from the model's cache, then embedded here if `given`
    /// allows it (else the query ranks lexically). The catalog decides whether
    /// the search is hybrid (its setting, the model, its vectors ready, the
    /// query's vectors); search ranks, in one call.
    pub(crate) fn ranked_hits_with(
        &self,
        query: &str,
        limit: usize,
        given: &QueryVectorSet,
    ) -> Result<Vec<ScoredHit>> {
        check_query(query)?;
        let hybrid = self.hybrid();
        let query_vectors = hybrid
            .as_ref()
            .and_then(|(model, _)| given.vectors_for(query, model));
        let semantic = match (&hybrid, &query_vectors) {
            (Some((_, tools)), Some(query)) => Some(Semantic {
                entries: &self.data.entries,
                tools,
                query,
            }),
            _ => None,
        };
        let index = &self.data.index;
        let ordinal_of = |digest: &crate::entry::EntryDigest| self.data.ordinal_of_digest(digest);
        Ok(index.rank(
            query,
            limit,
            &|o| self.is_searchable(o),
            semantic,
            self.learned_for_search(&ordinal_of),
            &self.data.prerequisites,
            index.params(),
        ))
    }
}

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
