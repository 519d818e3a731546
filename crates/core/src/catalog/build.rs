//! Building a catalog: options → the settings it keeps; records → validated, indexed data (cached).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::data::{self, CatalogData};
use super::hybrid::{self, RankingSetting};
use super::learning::{self, LearningSetting};
use super::options::{CatalogOptions, DEFAULT_CORE_TOOLS};
use super::policy::CompiledPolicy;
use super::records::{self, parse_spans, record_spans, RawRecord};
use super::refusal::{ExclusionCode, Refusal};
use super::repair;
use super::search::SearchLimits;
use super::{cache, store, Catalog, ToolEntry};
use crate::error::{Error, Result};
use crate::limits::MAX_CATALOG_TOOLS;
use crate::telemetry::Counters;

/// How a catalog was built, so `append` builds the next one the same way.
#[derive(Clone)]
pub(super) struct BuildSettings {
    pub(super) policy: Arc<CompiledPolicy>,
    pub(super) strict: bool,
    pub(super) repair: bool,
    pub(super) cache: bool,
    pub(super) core_tools: Arc<BTreeSet<String>>,
    pub(super) ranking: RankingSetting,
    /// Where a large catalog's search index is stored ([`CatalogOptions::index_cache`]).
    pub(super) index_cache: Option<Arc<std::path::PathBuf>>,
    /// The learned prior searches read ([`CatalogOptions::learning`]).
    pub(super) learning: Option<Arc<LearningSetting>>,
}

impl BuildSettings {
    pub(super) fn of(options: &CatalogOptions) -> Result<BuildSettings> {
        let ranking = RankingSetting::of(
            options.ranking,
            options.model.as_ref(),
            options.vector_cache.as_ref(),
        )?;
        Ok(BuildSettings {
            policy: Arc::new(options.policy.compile()?),
            strict: options.strict,
            repair: options.repair,
            cache: options.cache.unwrap_or(true) && !options.strict,
            core_tools: Arc::new(match &options.core_tools {
                Some(names) => names.iter().cloned().collect(),
                None => DEFAULT_CORE_TOOLS.iter().map(|n| n.to_string()).collect(),
            }),
            index_cache: index_cache_dir(options.index_cache.as_ref(), &ranking)?,
            learning: learning::learning_setting(options.learning.as_ref(), &ranking)?,
            ranking,
        })
    }
}

/// The folder [`CatalogOptions::index_cache`] names.
fn index_cache_dir(
    setting: Option<&Value>,
    ranking: &RankingSetting,
) -> Result<Option<Arc<std::path::PathBuf>>> {
    Ok(match setting {
        None | Some(Value::Null) => ranking.cache_dir.clone().map(Arc::new),
        Some(Value::Bool(true)) => hybrid::default_cache_dir().map(Arc::new),
        Some(Value::Bool(false)) => None,
        Some(Value::String(dir)) if !dir.trim().is_empty() => {
            Some(Arc::new(std::path::PathBuf::from(dir)))
        }
        Some(_) => {
            return Err(Error::invalid_catalog(
                "indexCache must be a folder path, true or false",
            ))
        }
    })
}

impl Catalog {
    /// Build from catalog text: a JSON array of tool records, or JSON Lines.
    pub fn from_json_text(text: &str, options: &CatalogOptions) -> Result<Catalog> {
        let settings = BuildSettings::of(options)?;
        let limits = SearchLimits::from_options(
            options.search_default_limit.as_ref(),
            options.max_search_limit.as_ref(),
        );
        let data = Catalog::data_for_text(text, &settings)?;
        let counters = Arc::new(Counters::new(&data.fingerprint));
        let catalog = Catalog::with_policy(data, settings, limits, counters);
        catalog.prepare_ranking(None);
        Ok(catalog)
    }

    /// Build from records already in memory (Rust callers, tests, benches).
    pub fn from_records(records: Vec<Value>, options: &CatalogOptions) -> Result<Catalog> {
        let text =
            serde_json::to_string(&records).map_err(|e| Error::invalid_catalog(e.to_string()))?;
        Catalog::from_json_text(&text, options)
    }

    /// Build from stored records, in order: the binding's path, where each
    /// distinct tool object is serialized and stored once ([`store`]). An
    /// unchanged catalog is found from the records' digests alone.
    pub fn from_stored(
        records: Vec<Arc<store::StoredRecord>>,
        options: &CatalogOptions,
    ) -> Result<Catalog> {
        within_tool_cap(records.len(), "has")?;
        let settings = BuildSettings::of(options)?;
        let limits = SearchLimits::from_options(
            options.search_default_limit.as_ref(),
            options.max_search_limit.as_ref(),
        );
        let data = Catalog::data_for_records(records, None, &settings)?;
        let counters = Arc::new(Counters::new(&data.fingerprint));
        let catalog = Catalog::with_policy(data, settings, limits, counters);
        catalog.prepare_ranking(None);
        Ok(catalog)
    }

    /// Built data for `text`: reused when the same text or the same validated
    /// content was built before (and caching is on).
    fn data_for_text(text: &str, settings: &BuildSettings) -> Result<Arc<CatalogData>> {
        let text_key = repair::keyed(
            format!("text:{}", blake3::hash(text.as_bytes()).to_hex()),
            settings.repair,
        );
        if !settings.cache {
            return Catalog::data_for_records(
                store::intern(record_spans(text)?),
                Some(text_key),
                settings,
            );
        }
        if let Some(data) = cache::get(&text_key) {
            return Ok(data);
        }
        let _claim = cache::claim(&text_key);
        // Another thread may have built it while this one waited.
        if let Some(data) = cache::get(&text_key) {
            return Ok(data);
        }
        Catalog::data_for_records(store::intern(record_spans(text)?), Some(text_key), settings)
    }

    /// Built data for these records (in order), cached under their records
    /// key (and `also_key`, the text they came from).
    pub(super) fn data_for_records(
        records: Vec<Arc<store::StoredRecord>>,
        also_key: Option<String>,
        settings: &BuildSettings,
    ) -> Result<Arc<CatalogData>> {
        let key = repair::keyed(store::records_key(&records), settings.repair);
        if settings.cache {
            if let Some(data) = full_build(&key) {
                if let Some(also) = &also_key {
                    cache::put(&[also], &data);
                }
                return Ok(data);
            }
        }
        // Two async builds of the same records: the second waits and reuses.
        let _claim = settings.cache.then(|| cache::claim(&key));
        if let Some(data) = settings.cache.then(|| full_build(&key)).flatten() {
            return Ok(data);
        }
        let mut parsed = parse_spans(records.iter().map(|r| &*r.text));
        let origins = parsed
            .iter()
            .map(|r| {
                r.parsed
                    .as_ref()
                    .ok()
                    .and_then(|(record, _)| data::origin(record))
            })
            .collect();
        if settings.strict {
            reject_unknown_fields(&mut parsed);
        }
        let repairs = settings
            .repair
            .then(|| repair::RepairInput::new(&records, 0));
        let validated = data::validate_records(parsed, settings.strict, repairs)?;
        let digests: Vec<_> = validated.entries.iter().map(ToolEntry::digest).collect();
        let fingerprint = data::fingerprint(
            &digests,
            &validated.excluded,
            &validated.repaired,
            &validated.direct_only,
            &validated.control_named,
        );
        let content_key = format!("content:{fingerprint}");
        let mut keys: Vec<&str> = vec![&key, &content_key];
        keys.extend(also_key.as_deref());
        // The same content from other records stands for these only if each
        // record is indexed as the same entry (a gateway maps its tools by them).
        if let Some(data) = settings
            .cache
            .then(|| full_build(&content_key))
            .flatten()
            .filter(|data| data.record_entries == validated.record_entries(records.len()))
        {
            cache::put(&keys, &data);
            return Ok(data);
        }
        let data = Arc::new(CatalogData::build(
            validated,
            fingerprint,
            records.into(),
            origins,
            settings
                .index_cache
                .as_deref()
                .map(|p| p.as_path())
                .filter(|_| settings.cache),
        )?);
        CatalogData::prepare_names(&data);
        if settings.cache {
            cache::put(&keys, &data);
        }
        Ok(data)
    }
}

/// `strict` builds accept only [`records::KNOWN_FIELDS`]: a record with any
/// other top-level field becomes a bad record (so the build fails on it).
pub(super) fn reject_unknown_fields(records: &mut [RawRecord]) {
    for record in records {
        let unknown = match &record.parsed {
            Ok((tool, _)) if !tool.unknown_fields.is_empty() => tool.unknown_fields.join("\", \""),
            _ => continue,
        };
        record.parsed = Err(Refusal {
            code: ExclusionCode::InvalidField,
            field: None,
            reason: format!(
                "unknown field \"{unknown}\" (a strict catalog accepts only {})",
                records::KNOWN_FIELDS.join(", ")
            ),
        });
    }
}

/// Cached data a full build may use: none of its records owned by an owner
/// they do not name (only live updates adopt unreadable records).
fn full_build(key: &str) -> Option<Arc<CatalogData>> {
    cache::get(key).filter(|data| data.adopted.is_empty())
}

/// INVALID_CATALOG when a catalog that `has` (or `would have`) `count` tools passes the cap.
pub(super) fn within_tool_cap(count: usize, has: &str) -> Result<()> {
    if count > MAX_CATALOG_TOOLS {
        return Err(Error::invalid_catalog(format!(
            "catalog {has} {count} tools; at most {MAX_CATALOG_TOOLS} are accepted"
        )));
    }
    Ok(())
}
