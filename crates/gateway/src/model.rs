//! Which ranking model the package found (set once by index.js at load: the optional model
//! package or `OPENCLAW_TOOL_SEARCH_MODEL_DIR`), the ranking defaults a catalog gets from it,
//! and what `rankingCapability()` reports.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::Serialize;
use tool_search_core::catalog::{Catalog, CatalogOptions, CatalogRanking, RankingMode};
use tool_search_core::search::semantic::RankingState;

/// The model folder, or why there is none.
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

fn current() -> ModelSource {
    model_source()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// Records the model folder the package found (`dir`), or why none was found (`reason`). A
/// folder missing a model file counts as none, with that file named.
pub fn set_model_source(dir: Option<String>, reason: Option<String>) {
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

/// Why `dir` cannot hold the model: a file missing, or not a regular file inside the folder (a
/// FIFO would block the thread that loads it).
fn missing_file(dir: &Path) -> Option<String> {
    tool_search_core::search::semantic::check_model_dir(dir)
        .err()
        .map(|e| e.to_string())
}

/// The defaults a gateway expects (`CatalogOptions::apply_ranking_defaults`) with the model
/// folder the package found.
pub fn apply_ranking_defaults(options: &mut CatalogOptions) {
    options.apply_ranking_defaults(RankingMode::from_env(), current().dir.as_deref());
}

/// `rankingCapability()`.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct RankingCapability {
    /// Whether hybrid ranking can run (a model was found).
    pub hybrid: bool,
    /// What a catalog built without a `ranking` option uses.
    pub default_ranking: RankingMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Whether hybrid ranking is available here and why not. Only checks the files (again: the
/// folder may have changed since the package was loaded); the model loads on a background
/// thread with the first hybrid catalog.
pub fn ranking_capability() -> RankingCapability {
    let mut source = current();
    if let Some(reason) = source.dir.as_deref().and_then(missing_file) {
        source = ModelSource {
            dir: None,
            reason: Some(reason),
        };
    }
    let mut defaults = CatalogOptions::default();
    apply_ranking_defaults(&mut defaults);
    RankingCapability {
        hybrid: source.dir.is_some(),
        default_ranking: defaults.ranking.unwrap_or_default(),
        model: source.dir.map(|d| d.display().to_string()),
        reason: source.reason,
    }
}

/// `catalog`'s final ranking status, once its tool vectors are ready or failed (at once for a
/// lexical catalog); `progress` is told each status on the way. `None` if the ranking ended
/// without a final status.
pub fn ranking_settled(
    catalog: &Catalog,
    mut progress: impl FnMut(&CatalogRanking) + Send + 'static,
) -> impl std::future::Future<Output = Option<CatalogRanking>> + Send + 'static {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let mut sender = Some(sender);
    catalog.on_ranking_progress(Box::new(move |status| {
        progress(status);
        let settled = !matches!(
            status.vectors.state,
            RankingState::Pending | RankingState::Embedding
        );
        if let Some(sender) = sender.take_if(|_| settled) {
            let _ = sender.send(status.clone());
        }
    }));
    async move { receiver.await.ok() }
}
