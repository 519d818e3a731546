//! Learned ranking from JS: `recordOutcome`, `learnedParts`, `learningStatus`,
//! `resetLearning`, `flushLearning` on a catalog, and the folder-wide
//! `learningFiles` / `resetLearningFolder` the CLI uses.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tool_search_core::catalog::Outcome;
use tool_search_core::search::learned;
use tool_search_core::ErrorCode;

use super::catalog::{held, ToolCatalog};
use super::convert::{answer, dto, parsed, string_arg};
use super::errors::{guard, invalid, to_js, JsCode, JsResult};
use super::promise::blocking_promise;

#[napi]
impl ToolCatalog {
    /// A call the gateway saw after a search: `id` was called after searching `query` and
    /// succeeded (`ok`) or not. Learns only from a successful call of a tool this catalog's
    /// policy lets a search return, when the catalog was built with `learning`.
    #[napi(
        ts_args_type = "outcome: SearchOutcome",
        ts_return_type = "OutcomeRecorded"
    )]
    pub fn record_outcome<'env>(
        &self,
        env: &'env Env,
        outcome: Unknown,
    ) -> Result<Unknown<'env>, JsCode> {
        guard(|| {
            let what = "outcome must be { query, id, ok }";
            let outcome: Outcome = dto(env, Some(outcome), ErrorCode::InvalidRequest, what)?;
            answer(env, self.inner.record_outcome(&outcome))
        })
    }

    /// This catalog learning in `scope` (e.g. an agent id): the same index, vectors, policy and
    /// counters, nothing rebuilt, but its searches read and its outcomes teach that scope's
    /// prior. INVALID_REQUEST when learning is off or the scope is not 1 to 200 characters
    /// without control characters.
    #[napi(ts_args_type = "scope: string")]
    pub fn with_learning_scope(&self, env: Env, scope: Unknown) -> Result<ToolCatalog, JsCode> {
        guard(|| {
            let scope = string_arg(scope, ErrorCode::InvalidRequest, "scope")?;
            held(&env, self.inner.with_learning_scope(&scope))
        })
    }

    /// The learned part of each tool's score for `query` (what learning adds), strongest first.
    #[napi(ts_args_type = "query: string", ts_return_type = "LearnedPart[]")]
    pub fn learned_parts<'env>(
        &self,
        env: &'env Env,
        query: Unknown,
    ) -> Result<Unknown<'env>, JsCode> {
        guard(|| {
            let query = string_arg(query, ErrorCode::InvalidQuery, "query")?;
            answer(env, self.inner.learned_parts(&query))
        })
    }

    /// The learned prior this catalog reads and teaches; `null` when learning is off.
    #[napi(ts_return_type = "LearningStatus | null")]
    pub fn learning_status<'env>(&self, env: &'env Env) -> Result<Unknown<'env>, JsCode> {
        guard(|| parsed(env, &self.inner.learning_status()))
    }

    /// Forgets what this catalog's learning scope learned, in memory and on disk.
    #[napi]
    pub fn reset_learning(&self) -> Result<(), JsCode> {
        guard(|| self.inner.reset_learning().map_err(to_js))
    }

    /// Writes what was learned now, off the event loop (it is written a moment after each
    /// change anyway; call this before a process exits).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn flush_learning<'env>(
        &self,
        env: &'env Env,
    ) -> Result<PromiseRaw<'env, Unknown<'env>>, JsCode> {
        let catalog = self.inner.clone();
        blocking_promise(env, move || catalog.flush_learning())
    }
}

/// What the learned priors kept in `folder` hold (one per scope).
#[napi(ts_args_type = "folder: string", ts_return_type = "LearningStatus[]")]
pub fn learning_files<'env>(env: &'env Env, folder: Unknown) -> Result<Unknown<'env>, JsCode> {
    guard(|| {
        let files = learned::folder_status(&folder_arg(folder)?).map_err(invalid)?;
        parsed(env, &files)
    })
}

/// Forgets every learned prior kept in `folder` (all scopes; open catalogs of this process
/// too). Returns how many files were removed.
#[napi(ts_args_type = "folder: string")]
pub fn reset_learning_folder(folder: Unknown) -> Result<u32, JsCode> {
    guard(|| {
        let removed = learned::reset_folder(&folder_arg(folder)?).map_err(invalid)?;
        Ok(removed as u32)
    })
}

/// The `folder` argument of the folder-wide functions.
fn folder_arg(folder: Unknown) -> JsResult<std::path::PathBuf> {
    string_arg(folder, ErrorCode::InvalidRequest, "folder").map(Into::into)
}
