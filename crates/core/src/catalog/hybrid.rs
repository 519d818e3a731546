//! Whether a catalog's search is hybrid: its ranking setting, model and tool vectors' status.
//!
//! Hybrid: the lexical top re-ranked with tool vectors ([`crate::search::hybrid`]) once they are
//! ready and the query has vectors. The catalog decides ([`Catalog::hybrid_vectors`]); the
//! ranking itself is search's, entered once ([`crate::search::SearchIndex::rank`]).

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::data::CatalogData;
use super::options::RankingMode;
use super::search::check_query;
use super::Catalog;
use crate::error::{Error, Result};
pub use crate::search::hybrid::QueryVectorSet;
use crate::search::semantic::{
    self, ModelHandle, QueryVectors, RankingState, RankingStatus, SemanticModel, VectorTable,
};

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

    /// The tool vectors and the query's vectors a search of `query` ranks hybrid with; `None`:
    /// it ranks lexically (a lexical catalog, no model, tool vectors not ready, or no vectors
    /// for the query: taken from `given`, then the model's cache, then embedded here if
    /// `given` allows it).
    pub(super) fn hybrid_vectors(
        &self,
        query: &str,
        given: &QueryVectorSet,
    ) -> Option<(Arc<VectorTable>, Arc<QueryVectors>)> {
        let (model, tools) = self.hybrid()?;
        let query = given.vectors_for(query, model)?;
        Some((tools, query))
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
