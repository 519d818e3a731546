//! Hybrid ranking from JS: which model folder the package found,
//! `rankingCapability()`, and a catalog's `rankingStatus()`,
//! `whenRankingReady()` and `searchAsync()`.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use serde::Serialize;
use tool_search_core::catalog::{BatchRequest, Catalog, CatalogOptions, RankingMode};
use tool_search_core::search::semantic::RankingState;
use tool_search_core::ErrorCode;

use super::catalog::{batch_request, limit_option, ToolCatalog};
use super::convert::{is_nullish, json_callback, parse_text, parsed, string_arg, JsonCallback};
use super::errors::{from_napi, guard, js_error, to_js, JsCode, JsResult};

/// Environment override of the default ranking (`lexical` or `hybrid`).
const RANKING_ENV: &str = "OPENCLAW_TOOL_SEARCH_RANKING";

/// The model folder index.js found (the optional package, or
/// `OPENCLAW_TOOL_SEARCH_MODEL_DIR`), or why there is none.
#[derive(Clone, Default)]
struct ModelSource {
    dir: Option<PathBuf>,
    reason: Option<String>,
}

fn model_source() -> &'static Mutex<ModelSource> {
    static SOURCE: OnceLock<Mutex<ModelSource>> = OnceLock::new();
    SOURCE.get_or_init(|| {
        Mutex::new(ModelSource {
            dir: None,
            reason: Some("the package did not look for a model".into()),
        })
    })
}

/// Set by index.js at load: the model folder, or why none was found. Internal.
#[napi(js_name = "__setRankingModel", skip_typescript)]
pub fn set_ranking_model(dir: Option<String>, reason: Option<String>) {
    let source = match dir.filter(|d| !d.is_empty()) {
        Some(dir) => match missing_file(Path::new(&dir)) {
            None => ModelSource {
                dir: Some(PathBuf::from(dir)),
                reason: None,
            },
            Some(missing) => ModelSource {
                dir: None,
                reason: Some(missing),
            },
        },
        None => ModelSource {
            dir: None,
            reason: Some(reason.unwrap_or_else(|| "no model folder".into())),
        },
    };
    *model_source().lock().unwrap_or_else(|e| e.into_inner()) = source;
}

/// Why `dir` cannot hold the model: a file missing, or not a regular file
/// inside the folder (a FIFO would block the thread that loads it).
fn missing_file(dir: &Path) -> Option<String> {
    tool_search_core::search::semantic::check_model_dir(dir)
        .err()
        .map(|e| e.to_string())
}

fn env_ranking() -> Option<RankingMode> {
    match std::env::var(RANKING_ENV).ok()?.trim() {
        "lexical" => Some(RankingMode::Lexical),
        "hybrid" => Some(RankingMode::Hybrid),
        _ => None,
    }
}

/// The defaults a gateway expects: hybrid when a model is installed (unless
/// `OPENCLAW_TOOL_SEARCH_RANKING` says otherwise), the found model folder.
pub(crate) fn apply_ranking_defaults(options: &mut CatalogOptions) {
    let source = model_source()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if options.ranking.is_none() {
        options.ranking = Some(env_ranking().unwrap_or(if source.dir.is_some() {
            RankingMode::Hybrid
        } else {
            RankingMode::Lexical
        }));
    }
    if options.ranking == Some(RankingMode::Hybrid) && options.model.is_none() {
        options.model = source.dir;
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RankingCapability {
    /// Whether hybrid ranking can run (a model was found).
    hybrid: bool,
    /// What a catalog built without a `ranking` option uses.
    default_ranking: RankingMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// Whether hybrid ranking is available here and why not: the model package
/// (`openclaw-tool-search-model-minilm`) or `OPENCLAW_TOOL_SEARCH_MODEL_DIR`.
/// Only checks the files; the model loads on a background thread with the
/// first hybrid catalog.
#[napi(ts_return_type = "RankingCapability")]
pub fn ranking_capability(env: &Env) -> Result<Unknown<'_>, JsCode> {
    guard(|| {
        let mut source = model_source()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        // Checked again: the folder may have changed since the package was loaded.
        if let Some(reason) = source.dir.as_deref().and_then(missing_file) {
            source = ModelSource {
                dir: None,
                reason: Some(reason),
            };
        }
        let mut defaults = CatalogOptions::default();
        apply_ranking_defaults(&mut defaults);
        parsed(
            env,
            &RankingCapability {
                hybrid: source.dir.is_some(),
                default_ranking: defaults.ranking.unwrap_or_default(),
                model: source.dir.map(|d| d.display().to_string()),
                reason: source.reason,
            },
        )
    })
}

fn progress_sink(env: &Env, callback: Unknown) -> JsResult<JsonCallback> {
    if callback.get_type().map_err(from_napi)? != ValueType::Function {
        return Err(js_error(
            ErrorCode::InvalidRequest,
            "onProgress must be a function",
        ));
    }
    // Weak: progress alone does not keep the process alive (the promise does).
    json_callback(env, callback)
}

/// `searchAsync` and `searchBatchAsync`: the ranked search on a libuv worker,
/// embedding queries whose vectors are not cached there.
pub struct SearchTask {
    catalog: Catalog,
    request: SearchKind,
}

enum SearchKind {
    Single { query: String, limit: Option<f64> },
    Batch(BatchRequest),
}

/// Search hits as JSON, converted to JS objects on the event loop.
pub struct Hits(serde_json::Value);

impl TypeName for Hits {
    fn type_name() -> &'static str {
        "SearchHit[]"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for Hits {
    // SAFETY: called by napi-rs with the env of the task's completion callback; delegates
    // to serde_json's conversion under the same contract.
    unsafe fn to_napi_value(env: napi::sys::napi_env, hits: Self) -> Result<napi::sys::napi_value> {
        serde_json::Value::to_napi_value(env, hits.0)
    }
}

impl Task for SearchTask {
    type Output = std::result::Result<Hits, (JsCode, String)>;
    type JsValue = Hits;

    fn compute(&mut self) -> Result<Self::Output> {
        let outcome = guard(|| {
            let catalog = &self.catalog;
            // On the worker: queries whose vectors are not cached are embedded here.
            let hits = match &self.request {
                SearchKind::Single { query, limit } => {
                    let vectors = catalog.query_vectors([query.as_str()]).complete();
                    serde_json::to_value(
                        catalog
                            .search_with(query, *limit, &vectors)
                            .map_err(to_js)?,
                    )
                }
                SearchKind::Batch(request) => {
                    let queries = catalog.batch_queries(request);
                    let vectors = catalog
                        .query_vectors(queries.iter().map(String::as_str))
                        .complete();
                    serde_json::to_value(
                        catalog
                            .search_batch_with(request, &vectors)
                            .map_err(to_js)?,
                    )
                }
            };
            hits.map(Hits)
                .map_err(|e| js_error(ErrorCode::Internal, e.to_string()))
        });
        Ok(outcome.map_err(|e| (e.status, e.reason.clone())))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        // Rejected with the same coded error the sync `search` throws.
        output.map_err(|(code, message)| {
            napi::Error::from(JsError::from(napi::Error::new(code, message)).into_unknown(env))
        })
    }
}

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
            let sink = match on_progress {
                Some(callback) if !is_nullish(&callback)? => Some(progress_sink(env, callback)?),
                _ => None,
            };
            let (sender, receiver) = tokio::sync::oneshot::channel::<String>();
            let mut sender = Some(sender);
            self.inner.on_ranking_progress(Box::new(move |status| {
                let text = serde_json::to_string(status).unwrap_or_else(|_| "null".into());
                if let Some(sink) = &sink {
                    sink.call(text.clone(), ThreadsafeFunctionCallMode::NonBlocking);
                }
                let settled = !matches!(
                    status.vectors.state,
                    RankingState::Pending | RankingState::Embedding
                );
                if settled {
                    if let Some(sender) = sender.take() {
                        let _ = sender.send(text);
                    }
                }
            }));
            let future = async move { Ok(receiver.await.unwrap_or_else(|_| "null".into())) };
            env.spawn_future_with_callback(future, |env, text| {
                parse_text(env, text)
                    .map_err(|e| napi::Error::new(Status::GenericFailure, e.reason.clone()))
            })
            .map_err(from_napi)
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
            let limit = limit_option(options)?;
            Ok(AsyncTask::new(SearchTask {
                catalog: self.inner.clone(),
                request: SearchKind::Single { query, limit },
            }))
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
            let request = batch_request(env, request)?;
            Ok(AsyncTask::new(SearchTask {
                catalog: self.inner.clone(),
                request: SearchKind::Batch(request),
            }))
        })
    }
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
        parsed(
            env,
            &serde_json::json!({ "embedded": embedded, "onThisThread": here }),
        )
    })
}
