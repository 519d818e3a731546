//! Which model folder the package found (set by index.js at load), the
//! ranking defaults a catalog gets from it, and `rankingCapability()`.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde::Serialize;
use tool_search_core::catalog::{CatalogOptions, RankingMode};

use super::convert::parsed;
use super::errors::{guard, JsCode};

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

/// The defaults a gateway expects (`CatalogOptions::apply_ranking_defaults`)
/// with the model folder index.js found.
pub(crate) fn apply_ranking_defaults(options: &mut CatalogOptions) {
    let source = model_source()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    options.apply_ranking_defaults(RankingMode::from_env(), source.dir.as_deref());
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
