//! A catalog's part in learned ranking: which prior its searches read
//! ([`CatalogOptions::learning`]), recording what the gateway's agents called
//! after a search, and showing what was learned.
//!
//! Only a successful call of a tool this catalog holds and its policy allows,
//! after a search for `query`, teaches anything; the gateway (the session's
//! dispatch, the OpenClaw plugin) decides which search a call followed.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hybrid::{default_cache_dir, RankingSetting};
use super::search::check_query;
use super::{Catalog, LookupStyle};
use crate::error::{Error, ErrorCode, Result};
use crate::search::learned::{self, LearnedPrior, LearningParams, LearningStatus, MAX_SCOPE_CHARS};
use crate::search::Learned;

/// The scope a catalog learns in when none is named: the whole gateway.
pub const DEFAULT_SCOPE: &str = "gateway";

/// `learning` in the catalog options, as given.
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LearningOptions {
    /// Folder of the prior's file; `false`: memory only. Default: the vector cache's folder.
    folder: Option<Value>,
    /// Whose searches teach and read the prior (an agent id); default [`DEFAULT_SCOPE`].
    scope: Option<String>,
    weight: Option<f64>,
    half_life_days: Option<f64>,
}

/// The prior a catalog's searches read, and how.
pub(crate) struct LearningSetting {
    pub(crate) prior: Arc<LearnedPrior>,
    pub(crate) params: LearningParams,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::invalid_catalog(message)
}

/// `learning`: absent or `false`: off (the ranking is exactly the unlearned one); `true`: on
/// with the defaults; an object: on with its settings.
pub(crate) fn learning_setting(
    value: Option<&Value>,
    ranking: &RankingSetting,
) -> Result<Option<Arc<LearningSetting>>> {
    let options = match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Bool(true)) => LearningOptions::default(),
        Some(object @ Value::Object(_)) => {
            serde_json::from_value(object.clone()).map_err(|e| invalid(format!("learning: {e}")))?
        }
        Some(_) => return Err(invalid("learning must be true, false or an object")),
    };
    let folder: Option<PathBuf> = match &options.folder {
        None | Some(Value::Null) => ranking.cache_dir.clone().or_else(default_cache_dir),
        Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => default_cache_dir(),
        Some(Value::String(dir)) if !dir.trim().is_empty() => Some(PathBuf::from(dir)),
        Some(_) => {
            return Err(invalid(
                "learning.folder must be a folder path, true or false",
            ))
        }
    };
    let scope = options.scope.unwrap_or_else(|| DEFAULT_SCOPE.to_string());
    check_scope(&scope).map_err(|why| invalid(format!("learning.{why}")))?;
    let mut params = LearningParams::default();
    if let Some(weight) = options.weight {
        if !(0.0..=f64::from(learned::MAX_WEIGHT)).contains(&weight) {
            return Err(invalid(format!(
                "learning.weight must be between 0 and {}",
                learned::MAX_WEIGHT
            )));
        }
        params.weight = weight as f32;
    }
    if let Some(days) = options.half_life_days {
        if !(days.is_finite() && (0.01..=3650.0).contains(&days)) {
            return Err(invalid(
                "learning.halfLifeDays must be between 0.01 and 3650",
            ));
        }
        params.half_life_secs = days * 86_400.0;
    }
    Ok(Some(Arc::new(LearningSetting {
        prior: LearnedPrior::open(folder.as_deref(), &scope),
        params,
    })))
}

/// A scope's name: 1 to [`MAX_SCOPE_CHARS`] characters, none a control character.
fn check_scope(scope: &str) -> std::result::Result<(), String> {
    if scope.is_empty()
        || scope.chars().count() > MAX_SCOPE_CHARS
        || scope.chars().any(char::is_control)
    {
        return Err(format!(
            "scope must be 1 to {MAX_SCOPE_CHARS} characters without control characters"
        ));
    }
    Ok(())
}

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A call the gateway saw after a search: `id` (or its name) was called after searching
/// `query`, and succeeded (`ok`) or not.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Outcome {
    pub query: String,
    pub id: String,
    pub ok: bool,
}

/// What recording an outcome did.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct OutcomeRecorded {
    /// The prior learned from it.
    pub learned: bool,
    /// Why not, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl OutcomeRecorded {
    fn not(reason: &str) -> OutcomeRecorded {
        OutcomeRecorded {
            learned: false,
            reason: Some(reason.to_string()),
        }
    }
}

/// The learned part of one tool's score for a query (`explain`).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LearnedPart {
    pub id: String,
    /// What learning adds to the tool's score, as a share of the query's top score.
    pub bonus: f32,
    /// Cosine between the query's words and the words that led to the tool's calls.
    pub similarity: f32,
    /// Successful calls learned, decayed to now.
    pub events: f32,
}

impl Catalog {
    fn learning(&self) -> Option<&LearningSetting> {
        self.settings.learning.as_deref()
    }

    /// What a search passes to the ranking when this catalog learns.
    pub(crate) fn learned_for_search<'a>(
        &'a self,
        ordinal_of: &'a dyn Fn(&crate::entry::EntryDigest) -> Option<usize>,
    ) -> Option<Learned<'a>> {
        let setting = self.learning()?;
        Some(Learned {
            prior: &setting.prior,
            params: setting.params,
            now: now_secs(),
            entries: &self.data.entries,
            ordinal_of,
        })
    }

    /// Learns from a call that followed a search (see [`Outcome`]). Teaches nothing (and says
    /// why) when learning is off, the call failed, or the tool is not one this catalog lets a
    /// search return (policy, an unavailable server). Errors: an unknown or ambiguous tool, a
    /// query longer than a search allows.
    pub fn record_outcome(&self, outcome: &Outcome) -> Result<OutcomeRecorded> {
        check_query(&outcome.query)?;
        let ordinal = self.resolve_ordinal(&outcome.id, LookupStyle::Structured)?;
        let Some(setting) = self.learning() else {
            return Ok(OutcomeRecorded::not("learning is off for this catalog"));
        };
        if !self.is_searchable(ordinal) {
            setting.prior.ignore();
            return Ok(OutcomeRecorded::not(
                "the tool is not allowed or not available in this catalog",
            ));
        }
        if !outcome.ok {
            setting.prior.ignore();
            return Ok(OutcomeRecorded::not("the call did not succeed"));
        }
        let query = self.data.index.learned_query(&outcome.query);
        if query.is_empty() {
            setting.prior.ignore();
            return Ok(OutcomeRecorded::not("the query has no words to learn from"));
        }
        let digest = self.data.entries[ordinal].digest();
        setting
            .prior
            .record(digest, &query, now_secs(), &setting.params);
        Ok(OutcomeRecorded {
            learned: true,
            reason: None,
        })
    }

    /// The learned part of each tool's score for `query` that learning moves (strongest
    /// first): what `explain` shows. Empty when learning is off or knows nothing like it.
    pub fn learned_parts(&self, query: &str) -> Result<Vec<LearnedPart>> {
        check_query(query)?;
        let Some(setting) = self.learning() else {
            return Ok(Vec::new());
        };
        let index = &self.data.index;
        let words = index.learned_words(query);
        let mut weighed = learned::LearnedQuery::default();
        index.search_weighed(
            query,
            1,
            &|_| false,
            index.params(),
            Some((&words, &mut weighed)),
        );
        Ok(setting
            .prior
            .score(&weighed, now_secs(), &setting.params)
            .into_iter()
            .filter_map(|s| {
                let ordinal = self.data.ordinal_of_digest(&s.digest)?;
                self.is_searchable(ordinal).then(|| LearnedPart {
                    id: self.data.entries[ordinal].id.to_string(),
                    bonus: setting.params.weight * s.strength,
                    similarity: s.similarity,
                    events: s.events,
                })
            })
            .collect())
    }

    /// This catalog learning in `scope` (e.g. one agent's): the same index, vectors, policy,
    /// counters and learning settings, but its searches read, and its outcomes teach, that
    /// scope's prior (kept beside this one's, opened once per process). Nothing is rebuilt,
    /// and later versions (`append`, `update`, ...) of either learn in their own scope.
    /// Errors: learning is off for this catalog; a scope that is empty, too long or holds a
    /// control character.
    pub fn with_learning_scope(&self, scope: &str) -> Result<Catalog> {
        let Some(setting) = self.learning() else {
            return Err(Error::invalid_request(
                "learning is off for this catalog: build it with `learning` to give it a scope",
            ));
        };
        check_scope(scope).map_err(Error::invalid_request)?;
        let mut scoped = self.clone();
        if setting.prior.scope() != scope {
            scoped.settings.learning = Some(Arc::new(LearningSetting {
                prior: LearnedPrior::open(setting.prior.dir(), scope),
                params: setting.params,
            }));
        }
        Ok(scoped)
    }

    /// Whether this catalog learns from outcomes.
    pub fn learns(&self) -> bool {
        self.learning().is_some()
    }

    /// The prior this catalog learns in; `None` when learning is off.
    pub fn learning_status(&self) -> Option<LearningStatus> {
        self.learning().map(|s| s.prior.status())
    }

    /// Forgets what this catalog's scope learned (in memory and on disk).
    pub fn reset_learning(&self) -> Result<()> {
        match self.learning() {
            Some(setting) => setting
                .prior
                .reset()
                .map_err(|why| Error::new(ErrorCode::Internal, why)),
            None => Ok(()),
        }
    }

    /// Writes what was learned now (it is written in the background a moment after each
    /// change anyway). Blocks: call it off the event loop.
    pub fn flush_learning(&self) -> Result<()> {
        match self.learning() {
            Some(setting) => setting
                .prior
                .flush()
                .map_err(|why| Error::new(ErrorCode::Internal, why)),
            None => Ok(()),
        }
    }
}
