//! Searching a catalog off the event loop and its ranking from JS: `searchAsync()`,
//! `searchBatchAsync()`, `rankingStatus()`, `whenRankingReady()`, `queryEmbeddings()`, and the
//! ranking model (`__setRankingModel`, `rankingCapability()`) over `tool_search_gateway::model`.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tool_search_core::ErrorCode;

use super::catalog::{batch_request, limit_option, ToolCatalog};
use super::convert::{function_arg, json_text, parsed, string_arg};
use super::errors::{guard, to_js, JsCode};
use super::promise::{internal_failure, json_promise, on_worker, JsonText, Worker};

/// `searchAsync` and `searchBatchAsync`: the ranked search on a libuv worker,
/// embedding queries whose vectors are not cached there; the hits as JSON text.
type SearchTask = Worker<String, JsonText>;

#[napi]
impl ToolCatalog {
    /// The configured and active ranking (`hybrid` only once the tool vectors
    /// are ready) and the vectors' progress.
    #[napi(ts_return_type = "RankingStatus")]
    pub fn ranking_status<'env>(&self, env: &'env Env) -> Result<Unknown<'env>, JsCode> {
        guard(|| parsed(env, &self.inner.ranking_status()))
    }

    /// Resolves when the tool vectors are ready or failed (at once for a
    /// lexical catalog), with the final status; `onProgress` gets each
    /// status on the way (about every 32 tools embedded).
    #[napi(
        ts_args_type = "onProgress?: ((status: RankingStatus) => void) | null",
        ts_return_type = "Promise<RankingStatus>"
    )]
    pub fn when_ranking_ready<'env>(
        &self,
        env: &'env Env,
        on_progress: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, Unknown<'env>>, JsCode> {
        guard(|| {
            // Weak: progress alone does not keep the process alive (the promise does).
            let sink = function_arg(on_progress, "onProgress")?;
            let sink = sink.map(|f| super::port::listener(env, f)).transpose()?;
            let inner = &self.inner;
            let settled = tool_search_gateway::model::ranking_settled(inner, move |status| {
                // Not delivered when it cannot be serialized (the final status
                // still settles the promise, or rejects it).
                if let Some(sink) = &sink {
                    super::port::notify(sink, status, "ranking progress");
                }
            });
            let why = "the ranking ended without a final status";
            let future = async move { settled.await.ok_or_else(|| internal_failure(why)) };
            json_promise(env, Ok(future), None)
        })
    }

    /// `search` on a libuv worker, in the catalog's ranking: a hybrid catalog
    /// embeds a query whose vectors are not cached there (1-4 ms, tens of ms
    /// for a long request) instead of on the event loop. Same hits as `search`.
    #[napi(
        ts_args_type = "query: string, options?: { limit?: number | null } | null",
        ts_return_type = "Promise<SearchHit[]>"
    )]
    pub fn search_async(
        &self,
        query: Unknown,
        options: Option<Unknown>,
    ) -> Result<AsyncTask<SearchTask>, JsCode> {
        guard(|| {
            let query = string_arg(query, ErrorCode::InvalidQuery, "query")?;
            let (catalog, limit) = (self.inner.clone(), limit_option(options)?);
            Ok(search_task(move || catalog.search_on_worker(&query, limit)))
        })
    }

    /// `searchBatch` on a libuv worker, embedding as `searchAsync` does.
    #[napi(
        ts_args_type = "request: SearchBatchRequest",
        ts_return_type = "Promise<SearchBatchResult>"
    )]
    pub fn search_batch_async(
        &self,
        env: &Env,
        request: Unknown,
    ) -> Result<AsyncTask<SearchTask>, JsCode> {
        guard(|| {
            let (catalog, request) = (self.inner.clone(), batch_request(env, request)?);
            Ok(search_task(move || {
                catalog.search_batch_on_worker(&request)
            }))
        })
    }
}

/// A search on a libuv worker, its result serialized there.
fn search_task<T: serde::Serialize>(
    search: impl FnOnce() -> tool_search_core::Result<T> + Send + 'static,
) -> AsyncTask<SearchTask> {
    on_worker(
        Ok(move || json_text(&search().map_err(to_js)?)),
        |_, text| JsonText(text),
    )
}

/// Query embeddings done by this process (`embedded`) and on the calling
/// thread (`onThisThread`), for diagnostics: a gateway whose event loop sees
/// `onThisThread` grow is calling the synchronous `search`/`searchBatch` of a
/// hybrid catalog with new queries. `searchAsync`, `searchBatchAsync` and a
/// session's searches (tool_search, code-mode lookups) embed on other threads.
#[napi(ts_return_type = "{ embedded: number; onThisThread: number }")]
pub fn query_embeddings<'env>(env: &'env Env) -> Result<Unknown<'env>, JsCode> {
    guard(|| {
        let (embedded, here) = tool_search_core::search::semantic::query_embeddings();
        let counts = serde_json::json!({ "embedded": embedded, "onThisThread": here });
        parsed(env, &counts)
    })
}

/// Set by index.js at load: the model folder, or why none was found. Internal.
#[napi(js_name = "__setRankingModel", skip_typescript)]
pub fn set_ranking_model(dir: Option<String>, reason: Option<String>) {
    tool_search_gateway::model::set_model_source(dir, reason);
}

/// Whether hybrid ranking is available here and why not: the model package
/// (`openclaw-tool-search-model-minilm`) or `OPENCLAW_TOOL_SEARCH_MODEL_DIR`.
/// Only checks the files; the model loads on a background thread with the
/// first hybrid catalog.
#[napi(ts_return_type = "RankingCapability")]
pub fn ranking_capability(env: &Env) -> Result<Unknown<'_>, JsCode> {
    guard(|| parsed(env, &tool_search_gateway::model::ranking_capability()))
}
