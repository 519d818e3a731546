//! How a catalog ranks: lexically, or hybrid (the lexical top re-ranked with
//! tool vectors, [`crate::search::hybrid`]) once its vectors are ready. The
//! catalog decides which; the ranking itself is search's, entered once
//! ([`crate::search::SearchIndex::rank`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{check_query, Catalog, CatalogData, CatalogOptions, SearchHit};
use crate::error::{Error, Result};
pub use crate::search::hybrid::QueryVectorSet;
use crate::search::semantic::{
    self, ModelHandle, RankingState, RankingStatus, SemanticModel, VectorTable,
};
use crate::search::{ScoredHit, Semantic};

/// The `ranking` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RankingMode {
    #[default]
    Lexical,
    Hybrid,
}

/// Environment override of the default ranking (`lexical` or `hybrid`).
pub const RANKING_ENV: &str = "OPENCLAW_TOOL_SEARCH_RANKING";

impl RankingMode {
    /// An `OPENCLAW_TOOL_SEARCH_RANKING` value: `lexical` or `hybrid`
    /// (surrounding whitespace ignored); anything else sets no default.
    pub fn parse(value: &str) -> Option<RankingMode> {
        match value.trim() {
            "lexical" => Some(RankingMode::Lexical),
            "hybrid" => Some(RankingMode::Hybrid),
            _ => None,
        }
    }

    /// The ranking `OPENCLAW_TOOL_SEARCH_RANKING` asks for, if it names one.
    pub fn from_env() -> Option<RankingMode> {
        RankingMode::parse(&std::env::var(RANKING_ENV).ok()?)
    }
}

impl CatalogOptions {
    /// The defaults a gateway expects of a catalog without `ranking`:
    /// `preferred` (the environment's), else hybrid when a model folder was
    /// found, else lexical; a hybrid catalog without `model` uses the found folder.
    pub fn apply_ranking_defaults(
        &mut self,
        preferred: Option<RankingMode>,
        found_model: Option<&Path>,
    ) {
        if self.ranking.is_none() {
            self.ranking = Some(preferred.unwrap_or(if found_model.is_some() {
                RankingMode::Hybrid
            } else {
                RankingMode::Lexical
            }));
        }
        if self.ranking == Some(RankingMode::Hybrid) && self.model.is_none() {
            self.model = found_model.map(Path::to_path_buf);
        }
    }
}

/// A catalog's ranking setting, resolved from its options.
#[derive(Clone, Default)]
pub(crate) struct RankingSetting {
    pub mode: RankingMode,
    /// The model (hybrid only); `None`: no model folder was given.
    pub model: Option<Arc<ModelHandle>>,
    pub cache_dir: Option<PathBuf>,
}

impl RankingSetting {
    pub fn of(
        mode: Option<RankingMode>,
        model: Option<&PathBuf>,
        vector_cache: Option<&Value>,
    ) -> Result<RankingSetting> {
        let mode = mode.unwrap_or_default();
        let cache_dir = match vector_cache {
            None | Some(Value::Null) | Some(Value::Bool(true)) => default_cache_dir(),
            Some(Value::Bool(false)) => None,
            Some(Value::String(dir)) if !dir.trim().is_empty() => Some(PathBuf::from(dir)),
            Some(_) => {
                return Err(Error::invalid_catalog(
                    "vectorCache must be a folder path or false",
                ))
            }
        };
        let model = match (mode, model) {
            (RankingMode::Hybrid, Some(dir)) => Some(semantic::model_at(dir)),
            _ => None,
        };
        Ok(RankingSetting {
            mode,
            model,
            cache_dir,
        })
    }
}

/// `$OPENCLAW_TOOL_SEARCH_CACHE_DIR`, else `$XDG_CACHE_HOME/openclaw-tool-search`,
/// else `~/.cache/openclaw-tool-search`.
pub(crate) fn default_cache_dir() -> Option<PathBuf> {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = env("OPENCLAW_TOOL_SEARCH_CACHE_DIR") {
        return Some(dir);
    }
    let base = env("XDG_CACHE_HOME").or_else(|| env("HOME").map(|home| home.join(".cache")))?;
    Some(base.join("openclaw-tool-search"))
}

/// What `rankingStatus()` reports: the configured and the active ranking,
/// and where the tool vectors stand.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogRanking {
    pub ranking: RankingMode,
    /// What a search uses now: hybrid only once the vectors are ready.
    pub active: RankingMode,
    #[serde(flatten)]
    pub vectors: RankingStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// How the catalog's search index came to be (built, loaded, stored).
    pub index: crate::search::IndexCacheOutcome,
}

impl Catalog {
    /// Starts computing tool vectors (hybrid ranking with a model), reusing
    /// those of `previous` (the catalog this one was derived from). Once per
    /// built data; a no-op otherwise.
    pub(crate) fn prepare_ranking(&self, previous: Option<&CatalogData>) {
        let setting = &self.settings.ranking;
        if let (RankingMode::Hybrid, Some(model)) = (setting.mode, &setting.model) {
            let previous = previous
                .and_then(|p| p.vectors.get(model))
                .and_then(|slot| slot.table().cloned());
            semantic::start(
                &self.data,
                Arc::clone(model),
                setting.cache_dir.clone(),
                previous,
            );
        }
    }

    /// The model and this catalog's vectors, when a search can use them.
    pub(super) fn hybrid(&self) -> Option<(&Arc<SemanticModel>, Arc<VectorTable>)> {
        if self.settings.ranking.mode != RankingMode::Hybrid {
            return None;
        }
        let handle = self.settings.ranking.model.as_ref()?;
        let model = handle.get()?;
        let table = self.data.vectors.get(handle)?.table()?.clone();
        (table.model_digest == model.digest()).then_some((model, table))
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

    /// The vectors a hybrid search of `queries` would use, as far as they are
    /// cached (cheap: no embedding). Empty when the catalog ranks lexically
    /// now (no model, or tool vectors not ready). Queries a search would
    /// refuse (too long) are left out.
    pub fn query_vectors<'q>(&self, queries: impl IntoIterator<Item = &'q str>) -> QueryVectorSet {
        let Some((model, _)) = self.hybrid() else {
            return QueryVectorSet::default();
        };
        QueryVectorSet::gather(model, queries, |q| check_query(q).is_ok())
    }

    /// Estimated heap bytes of this catalog's own data (see
    /// [`CatalogData::native_bytes`]), with its tool vectors when it ranks
    /// hybrid (filled in the background, counted from the start).
    pub fn native_bytes(&self) -> usize {
        let setting = &self.settings.ranking;
        let vectors = match (setting.mode, &setting.model) {
            (RankingMode::Hybrid, Some(_)) => {
                self.data.entries.len() * (std::mem::size_of::<semantic::QVec>() + 32)
            }
            _ => 0,
        };
        self.data.native_bytes + vectors
    }

    /// The configured and active ranking and the vectors' progress.
    pub fn ranking_status(&self) -> CatalogRanking {
        let setting = &self.settings.ranking;
        let total = self.data.entries.len();
        let off = |error: Option<String>| RankingStatus {
            state: RankingState::Off,
            total,
            done: 0,
            reused: 0,
            embedded: 0,
            error,
            cache_warning: None,
        };
        let vectors = match (setting.mode, &setting.model) {
            (RankingMode::Lexical, _) => off(None),
            (RankingMode::Hybrid, None) => off(Some(
                "no ranking model: install openclaw-tool-search-model-minilm (see rankingCapability())".into(),
            )),
            (RankingMode::Hybrid, Some(model)) => match self.data.vectors.get(model).and_then(|slot| slot.status()) {
                Some(status) => status,
                None => off(Some(format!("no vectors were started for this catalog (model {})", model.dir().display()))),
            },
        };
        CatalogRanking {
            ranking: setting.mode,
            active: if self.hybrid().is_some() {
                RankingMode::Hybrid
            } else {
                RankingMode::Lexical
            },
            vectors,
            model: setting
                .model
                .as_ref()
                .map(|m| m.dir().display().to_string()),
            cache: setting
                .cache_dir
                .as_ref()
                .filter(|_| setting.mode == RankingMode::Hybrid)
                .map(|d| d.display().to_string()),
            index: self.data.index_cache.clone(),
        }
    }

    /// Calls `listener` with each vector progress status until the vectors
    /// are ready or failed (at once if that already happened, or if the
    /// catalog does not compute vectors).
    pub fn on_ranking_progress(&self, listener: Box<dyn FnMut(&CatalogRanking) + Send>) {
        let status = self.ranking_status();
        if status.vectors.state == RankingState::Off {
            let mut listener = listener;
            return listener(&status);
        }
        let Some(slot) = self
            .settings
            .ranking
            .model
            .as_ref()
            .and_then(|m| self.data.vectors.get(m))
        else {
            let mut listener = listener;
            return listener(&status);
        };
        let view = self.clone();
        let mut listener = listener;
        slot.subscribe(Box::new(move |_| listener(&view.ranking_status())));
    }
}

#[cfg(test)]
mod defaults_tests {
    use super::*;

    #[test]
    fn ranking_env_values() {
        assert_eq!(RankingMode::parse("lexical"), Some(RankingMode::Lexical));
        assert_eq!(RankingMode::parse(" hybrid\n"), Some(RankingMode::Hybrid));
        for other in ["", "Hybrid", "semantic", "lexical,hybrid"] {
            assert_eq!(RankingMode::parse(other), None, "{other:?}");
        }
    }

    #[test]
    fn ranking_defaults_follow_the_model_and_the_preference() {
        let model = Path::new("/models/minilm");
        let defaults = |preferred, found: Option<&Path>| {
            let mut options = CatalogOptions::default();
            options.apply_ranking_defaults(preferred, found);
            (options.ranking, options.model)
        };
        assert_eq!(defaults(None, None), (Some(RankingMode::Lexical), None));
        assert_eq!(
            defaults(None, Some(model)),
            (Some(RankingMode::Hybrid), Some(model.to_path_buf()))
        );
        assert_eq!(
            defaults(Some(RankingMode::Lexical), Some(model)),
            (Some(RankingMode::Lexical), None)
        );
        // Hybrid asked for without a model stays hybrid (the catalog reports it cannot run).
        assert_eq!(
            defaults(Some(RankingMode::Hybrid), None),
            (Some(RankingMode::Hybrid), None)
        );
        // A catalog's own options win.
        let mut options = CatalogOptions {
            ranking: Some(RankingMode::Hybrid),
            model: Some("/elsewhere".into()),
            ..CatalogOptions::default()
        };
        options.apply_ranking_defaults(Some(RankingMode::Lexical), Some(model));
        assert_eq!(
            (options.ranking, options.model),
            (Some(RankingMode::Hybrid), Some("/elsewhere".into()))
        );
    }
}
