//! `__setRankingModel` and `rankingCapability()` over `tool_search_gateway::model`.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::convert::parsed;
use super::errors::{guard, JsCode};

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
