//! What a caller asks of a catalog: its options (policy, limits, ranking, caches) and defaults.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::policy::Policy;

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

/// How a catalog is built.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CatalogOptions {
    #[serde(default)]
    pub policy: Policy,
    /// Throw INVALID_CATALOG on the first bad record instead of excluding it.
    #[serde(default)]
    pub strict: bool,
    /// Index a record the catalog would refuse in a safe form where its
    /// refusal has a repair (see [`Catalog::repaired`]); derived versions too.
    #[serde(default)]
    pub repair: bool,
    /// Reuse built data for an unchanged catalog (default true).
    pub cache: Option<bool>,
    pub search_default_limit: Option<Value>,
    pub max_search_limit: Option<Value>,
    /// Names of the core coding tools (source `openclaw`, owner `core`) that
    /// stay directly visible in tools and directory modes while staying
    /// cataloged. Default [`DEFAULT_CORE_TOOLS`]; `[]` defers them all.
    pub core_tools: Option<Vec<String>>,
    /// `lexical` (the default here) or `hybrid`: the lexical top re-ranked
    /// with tool vectors once they are computed (needs `model`).
    pub ranking: Option<RankingMode>,
    /// The sentence encoder's folder (config.json, vocab.txt, model.safetensors).
    pub model: Option<std::path::PathBuf>,
    /// Folder of the on-disk vector cache; `false`: memory only. Default:
    /// `$OPENCLAW_TOOL_SEARCH_CACHE_DIR`, else the user's cache folder.
    pub vector_cache: Option<Value>,
    /// Folder where large catalogs' search indexes are stored for the next
    /// process; `false`: built in each process. Default: the vector cache's
    /// folder (off when `vectorCache` is `false`); `true`: the default folder.
    pub index_cache: Option<Value>,
    /// Ranking that learns from the gateway's successful calls after searches: `false` or
    /// absent: off (today's ranking exactly); `true`; or `{ folder, scope, weight,
    /// halfLifeDays }` (see [`learning`]).
    pub learning: Option<Value>,
}

/// Core coding tools a model expects in front of it (OpenClaw keeps them visible).
pub const DEFAULT_CORE_TOOLS: &[&str] =
    &["read", "write", "edit", "exec", "process", "apply_patch"];

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

#[cfg(test)]
mod tests {
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
