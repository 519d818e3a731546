//! The run's tool catalog: validated entries in id order, the policy mask, the
//! search index, and the operations the model reaches (search, describe,
//! argument validation). A `Catalog` is a cheap view: clones and `restrict`ed
//! views share the built data and the telemetry counters.

mod audit;
mod batch;
mod cache;
mod data;
mod exact;
mod hits;
mod learning;
mod lookup;
mod policy;
mod ranking;
mod records;
mod refusal;
mod release;
mod repair;
mod slots;
pub mod store;
pub(crate) mod text;
mod update;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::entry::CONTROL_TOOL_NAMES;
pub use crate::entry::{safe_server_name, EntryFields, McpInfo, Source, ToolEntry, ToolRecord};
pub use audit::{AuditOptions, CatalogAudit, Problem, ToolAudit, FINDABLE_RANK};
pub use batch::{BatchQuery, BatchRequest, BatchResult, BatchResultGroup};
pub use data::{CatalogData, DirectOnlyTool, ExcludedTool};
pub use hits::{SearchHit, ToolDescription};
pub use learning::{LearnedPart, Outcome, OutcomeRecorded, DEFAULT_SCOPE};
pub use lookup::LookupStyle;
pub use policy::{CompiledPolicy, Policy, PolicyLayer};
pub use ranking::{CatalogRanking, QueryVectorSet, RankingMode};
pub use records::{
    parse_catalog_text, parse_spans, record_spans, unreadable_record, RawRecord, KNOWN_FIELDS,
    UNREADABLE, UNREADABLE_FIELDS,
};
pub use refusal::{ExclusionCode, Refusal};
pub use repair::RepairedTool;
pub use slots::FromSlots;

use crate::config::{MAX_SEARCH_LIMIT_CAP, MAX_SEARCH_LIMIT_DEFAULT, SEARCH_DEFAULT_LIMIT_DEFAULT};
use crate::error::{Error, ErrorCode, Result};
use crate::limits::{MAX_CATALOG_TOOLS, MAX_QUERY_CHARS};
use crate::schema::ArgumentIssue;
use crate::search::ScoredHit;
use crate::telemetry::{CatalogTelemetry, Counters, SourceCounts};

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

/// One source's owner: the unit a live catalog replaces (an MCP server's
/// tools are source `mcp`, owner = the server).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSelector {
    pub source: Source,
    pub owner: String,
}

/// The fields of a record [`SourceSelector::claim`] reads; the rest of the
/// record is skipped unparsed (a server's update claims every tool).
#[derive(Deserialize)]
struct ClaimedFields {
    #[serde(default, deserialize_with = "present")]
    source: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    owner: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    mcp: Option<Value>,
}

/// A field that is there, `null` included (`Option<Value>` alone reads `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl SourceSelector {
    /// `span` as a record of this source and owner: missing `source` /
    /// `owner` filled in (added at the end of the object), others refused.
    /// Text that is not a JSON object is passed on as is (the build excludes
    /// it alone, with the reason).
    fn claim<'a>(&self, index: usize, span: &'a str) -> Result<std::borrow::Cow<'a, str>> {
        let object = span.trim_start().starts_with('{');
        // Anything unusual (not an object, a duplicate or `null` field) takes the general path.
        let fields = match serde_json::from_str::<ClaimedFields>(span) {
            Ok(fields)
                if object && ![&fields.source, &fields.owner].contains(&&Some(Value::Null)) =>
            {
                fields
            }
            _ => return self.claim_parsed(index, span),
        };
        let mut missing: Vec<(&str, &str)> = Vec::new();
        for (key, given, wanted) in [
            ("source", &fields.source, self.source.as_str()),
            ("owner", &fields.owner, self.owner.as_str()),
        ] {
            if self.is_missing(index, key, given.as_ref(), wanted)? {
                missing.push((key, wanted));
            }
        }
        if let Some(Value::Object(mcp)) = &fields.mcp {
            self.check_routing(index, mcp)?;
        }
        if missing.is_empty() {
            return Ok(std::borrow::Cow::Borrowed(span));
        }
        let body = span.trim_end();
        let Some(inner) = body.strip_suffix('}') else {
            return self.claim_parsed(index, span);
        };
        let mut text = String::with_capacity(span.len() + 64);
        text.push_str(inner);
        let mut first = inner
            .trim_start()
            .strip_prefix('{')
            .is_some_and(|rest| rest.trim().is_empty());
        for (key, wanted) in missing {
            text.push_str(if first { "\"" } else { ",\"" });
            first = false;
            text.push_str(key);
            text.push_str("\":");
            text.push_str(&Value::from(wanted).to_string());
        }
        text.push('}');
        Ok(std::borrow::Cow::Owned(text))
    }

    /// [`Self::claim`] through a parsed record (re-serialized when changed).
    fn claim_parsed<'a>(&self, index: usize, span: &'a str) -> Result<std::borrow::Cow<'a, str>> {
        let Ok(Value::Object(mut record)) = serde_json::from_str::<Value>(span) else {
            return Ok(std::borrow::Cow::Borrowed(span));
        };
        let mut changed = false;
        for (key, wanted) in [
            ("source", self.source.as_str()),
            ("owner", self.owner.as_str()),
        ] {
            if self.is_missing(index, key, record.get(key), wanted)? {
                record.insert(key.to_string(), Value::from(wanted));
                changed = true;
            }
        }
        if let Some(Value::Object(mcp)) = record.get("mcp") {
            self.check_routing(index, mcp)?;
        }
        Ok(if changed {
            std::borrow::Cow::Owned(Value::Object(record).to_string())
        } else {
            std::borrow::Cow::Borrowed(span)
        })
    }

    /// The one rule for a claimed record's `source` / `owner`: absent or
    /// `null` is filled in (true), the selector's own value is kept, any
    /// other value is refused.
    fn is_missing(
        &self,
        index: usize,
        key: &str,
        given: Option<&Value>,
        wanted: &str,
    ) -> Result<bool> {
        match given {
            None | Some(Value::Null) => Ok(true),
            Some(Value::String(given)) if given == wanted => Ok(false),
            Some(given) => Err(Error::invalid_catalog(format!(
                "tool #{index} names {key} {given}, not the replaced {key} \"{wanted}\""
            ))),
        }
    }

    /// Routing data names a server: a tool sent as this owner's may only name this owner.
    fn check_routing(&self, index: usize, mcp: &serde_json::Map<String, Value>) -> Result<()> {
        let named = |key: &str| mcp.get(key).and_then(Value::as_str);
        let Some(server) = named("serverName") else {
            return Ok(());
        };
        let safe = named("safeServerName");
        let owner = self.owner.as_str();
        let wrong = if !names_server(owner, server) {
            Some(("serverName", server))
        } else {
            safe.filter(|safe| *safe != owner && !names_server(safe, server))
                .map(|safe| ("safeServerName", safe))
        };
        match wrong {
            Some((key, named)) => Err(Error::invalid_catalog(format!(
                "tool #{index} names MCP server \"{}\" (mcp.{key}), not the replaced owner \"{}\"",
                tool_search_base::text::clip(named, 80),
                tool_search_base::text::clip(owner, 80)
            ))),
            None => Ok(()),
        }
    }
}

/// Whether `owner` is the MCP server `server`: its name as given, or a safe
/// form of it (this package's [`safe_server_name`], or OpenClaw's: characters
/// outside `[A-Za-z0-9_-]` as `-`, `mcp-` before a name not starting with a
/// letter, at most 30 characters, `-<n>` after a name another server took).
pub(crate) fn names_server(owner: &str, server: &str) -> bool {
    if owner == server || owner == safe_server_name(server) {
        return true;
    }
    const OPENCLAW_PREFIX_CHARS: usize = 30;
    let trimmed = server.trim();
    // OpenClaw replaces each UTF-16 code unit (JavaScript's regex without `u`): a
    // character outside the BMP becomes two `-`.
    let mut safe: String = trimmed
        .chars()
        .flat_map(|c| {
            let kept = c.is_ascii_alphanumeric() || c == '_' || c == '-';
            std::iter::repeat_n(
                if kept { c } else { '-' },
                if kept { 1 } else { c.len_utf16() },
            )
        })
        .collect();
    if safe.is_empty() {
        safe = "mcp".into();
    }
    if !safe.starts_with(|c: char| c.is_ascii_alphabetic()) {
        safe = format!("mcp-{safe}");
    }
    let safe: String = safe.chars().take(OPENCLAW_PREFIX_CHARS).collect();
    if owner == safe {
        return true;
    }
    // A collision suffix: `<safe, cut to leave room>-<n>`.
    let Some((base, n)) = owner.rsplit_once('-') else {
        return false;
    };
    !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && safe.starts_with(base)
        && !base.is_empty()
        && (base.len() == safe.len()
            || base.len() == OPENCLAW_PREFIX_CHARS.saturating_sub(n.len() + 1).max(1))
}

/// Core coding tools a model expects in front of it (OpenClaw keeps them visible).
pub const DEFAULT_CORE_TOOLS: &[&str] =
    &["read", "write", "edit", "exec", "process", "apply_patch"];

/// The limits a search applies (resolved config values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchLimits {
    pub default_limit: u32,
    pub max_limit: u32,
}

impl Default for SearchLimits {
    fn default() -> Self {
        SearchLimits {
            default_limit: SEARCH_DEFAULT_LIMIT_DEFAULT,
            max_limit: MAX_SEARCH_LIMIT_DEFAULT,
        }
    }
}

impl SearchLimits {
    /// Clamp as the config does (contract §4).
    pub fn from_options(default_limit: Option<&Value>, max_limit: Option<&Value>) -> SearchLimits {
        let mut raw = serde_json::Map::new();
        raw.insert("mode".into(), Value::from("tools"));
        if let Some(v) = default_limit {
            raw.insert("searchDefaultLimit".into(), v.clone());
        }
        if let Some(v) = max_limit {
            raw.insert("maxSearchLimit".into(), v.clone());
        }
        let resolved =
            crate::config::resolve_labeled(&Value::Object(raw), false, "catalog options");
        SearchLimits {
            default_limit: resolved.search_default_limit,
            max_limit: resolved.max_search_limit,
        }
    }

    /// Contract §3: omitted → default; non-integer or < 1 → error; above max → capped.
    pub fn effective(&self, requested: Option<f64>) -> Result<usize> {
        match requested {
            None => Ok(self.default_limit as usize),
            Some(l) if l.is_finite() && l >= 1.0 && l.fract() == 0.0 => {
                Ok((l.min(f64::from(self.max_limit.min(MAX_SEARCH_LIMIT_CAP)))) as usize)
            }
            Some(_) => Err(Error::new(
                ErrorCode::InvalidLimit,
                "limit must be a positive integer.",
            )),
        }
    }
}

/// Result of checking model-supplied arguments against a tool's schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgsValidation {
    pub ok: bool,
    pub errors: Vec<ArgumentIssue>,
}

#[derive(Clone)]
pub struct Catalog {
    data: Arc<CatalogData>,
    /// `None`: every entry allowed. Otherwise the policy/restrict mask.
    mask: Option<Arc<[bool]>>,
    allowed_count: usize,
    fingerprint: String,
    uncataloged: Uncataloged,
    counters: Arc<Counters>,
    limits: SearchLimits,
    settings: BuildSettings,
    /// A `restrict`ed view (cannot be appended to).
    restricted: bool,
    /// Owners whose tools stay known but cannot run.
    unavailable: Unavailable,
}

/// Owners whose tools are known but cannot run (a disconnected MCP server):
/// left out of search, and a call fails closed with TOOL_UNAVAILABLE.
///
/// Entries are in id order and an id starts with `<source>:<owner>:`, so an
/// owner's tools are one run of ordinals, found by binary search: marking an
/// owner costs O(log n + owners), a lookup O(log owners), whatever the
/// number of unavailable owners.
/// (source, owner, reason) of each unavailable owner, in the order they were marked.
type UnavailableOwners = Arc<[(Source, Arc<str>, Arc<str>)]>;

#[derive(Clone, Default)]
struct Unavailable {
    owners: UnavailableOwners,
    /// Non-empty runs of ordinals `[start, end)` of this data's entries and
    /// the index of their owner in `owners`, by `start` (runs never overlap).
    runs: Arc<[(u32, u32, u32)]>,
}

impl Unavailable {
    fn of(owners: UnavailableOwners, data: &CatalogData) -> Unavailable {
        if owners.is_empty() {
            return Unavailable::default();
        }
        let mut runs: Vec<(u32, u32, u32)> = owners
            .iter()
            .enumerate()
            .filter_map(|(i, (s, o, _))| {
                let (start, end) = owner_run(data, *s, o);
                (start < end).then_some((start as u32, end as u32, i as u32))
            })
            .collect();
        runs.sort_unstable();
        Unavailable {
            owners,
            runs: runs.into(),
        }
    }

    /// These owners, without `selector`'s.
    fn without(&self, selector: &SourceSelector) -> UnavailableOwners {
        self.owners
            .iter()
            .filter(|(s, o, _)| !(*s == selector.source && **o == *selector.owner))
            .cloned()
            .collect()
    }

    /// The reason of the owner whose run holds `ordinal`.
    fn reason(&self, ordinal: usize) -> Option<&str> {
        let after = self
            .runs
            .partition_point(|&(start, _, _)| start as usize <= ordinal);
        let &(_, end, owner) = self.runs.get(after.checked_sub(1)?)?;
        (ordinal < end as usize).then(|| &*self.owners[owner as usize].2)
    }
}

/// The ordinals `[start, end)` of `source`'s `owner`'s entries (ids
/// `<source>:<owner>:…`, contiguous in id order; ':' is never part of an owner).
fn owner_run(data: &CatalogData, source: Source, owner: &str) -> (usize, usize) {
    let prefix = format!("{}:{owner}:", source.as_str());
    let start = data.entries.partition_point(|e| {
        #[cfg(test)]
        tests::ENTRIES_COMPARED.with(|n| n.set(n.get() + 1));
        e.id.as_str() < prefix.as_str()
    });
    let end = start
        + data.entries[start..].partition_point(|e| {
            #[cfg(test)]
            tests::ENTRIES_COMPARED.with(|n| n.set(n.get() + 1));
            e.id.starts_with(&prefix)
        });
    (start, end)
}

impl Drop for Catalog {
    /// The last view of a large catalog frees it on a background thread (a
    /// gateway drops catalogs on its event loop).
    fn drop(&mut self) {
        release::release(&mut self.data);
    }
}

/// Records kept out of the catalog whose tools may still be shown as given,
/// narrowed by the view's policy (and `restrict`).
#[derive(Clone)]
struct Uncataloged {
    /// `catalogMode: "direct-only"`: visible in every mode.
    direct_only: Arc<[Arc<DirectOnlyTool>]>,
    /// Named like a control tool: visible only with Tool Search off.
    control_named: Arc<[Arc<DirectOnlyTool>]>,
}

impl Uncataloged {
    fn of(
        direct_only: &[Arc<DirectOnlyTool>],
        control_named: &[Arc<DirectOnlyTool>],
        keep: impl Fn(&DirectOnlyTool) -> bool,
    ) -> Uncataloged {
        Uncataloged {
            direct_only: direct_only.iter().filter(|d| keep(d)).cloned().collect(),
            control_named: control_named.iter().filter(|d| keep(d)).cloned().collect(),
        }
    }
}

/// How a catalog was built, so `append` builds the next one the same way.
#[derive(Clone)]
struct BuildSettings {
    policy: Arc<CompiledPolicy>,
    strict: bool,
    repair: bool,
    cache: bool,
    core_tools: Arc<BTreeSet<String>>,
    ranking: ranking::RankingSetting,
    /// Where a large catalog's search index is stored ([`CatalogOptions::index_cache`]).
    index_cache: Option<Arc<std::path::PathBuf>>,
    /// The learned prior searches read ([`CatalogOptions::learning`]).
    learning: Option<Arc<learning::LearningSetting>>,
}

impl BuildSettings {
    fn of(options: &CatalogOptions) -> Result<BuildSettings> {
        let ranking = ranking::RankingSetting::of(
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
    ranking: &ranking::RankingSetting,
) -> Result<Option<Arc<std::path::PathBuf>>> {
    Ok(match setting {
        None | Some(Value::Null) => ranking.cache_dir.clone().map(Arc::new),
        Some(Value::Bool(true)) => ranking::default_cache_dir().map(Arc::new),
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

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("size", &self.allowed_count)
            .field("fingerprint", &self.fingerprint)
            .finish()
    }
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

    /// Built data for these records (in order), cached under their records
    /// key (and `also_key`, the text they came from).
    fn data_for_records(
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
        if let Some(data) = settings.cache.then(|| full_build(&content_key)).flatten() {
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

    /// Built data for `records`: this catalog's records without `replaced`'s,
    /// then the last `added` ones. Reused from the cache as in any build;
    /// otherwise derived from this catalog's data (only the added records are
    /// parsed and indexed), equal to a full build of `records`.
    fn derived_data(
        &self,
        replaced: Option<(Source, &str)>,
        records: Vec<Arc<store::StoredRecord>>,
        added: usize,
    ) -> Result<Arc<CatalogData>> {
        let settings = &self.settings;
        let key = repair::keyed(store::records_key(&records), settings.repair);
        // Data built from the same records stands for this version only if
        // the same unreadable records are owned by the same owners.
        let kept_adopted = self.kept_adoption(replaced);
        let same_owners = |data: &CatalogData| {
            if data.origins.len() != records.len() {
                return false;
            }
            let mut expected: Vec<(usize, Source, &str)> = kept_adopted
                .iter()
                .map(|(i, s, o)| (*i, *s, o.as_ref()))
                .collect();
            if let Some((source, owner)) = replaced {
                let fresh = records.len() - added..records.len();
                expected.extend(
                    fresh
                        .filter(|&i| data.origins[i].is_none())
                        .map(|i| (i, source, owner)),
                );
            }
            data.adopted
                .iter()
                .map(|(i, s, o)| (*i, *s, o.as_ref()))
                .eq(expected)
        };
        let cached = |key: &str| {
            settings
                .cache
                .then(|| cache::get(key))
                .flatten()
                .filter(|d| same_owners(d))
        };
        if let Some(data) = cached(&key) {
            return Ok(data);
        }
        let claim = settings.cache.then(|| cache::claim(&key));
        if let Some(data) = cached(&key) {
            return Ok(data);
        }
        let new = records[records.len() - added..].to_vec();
        let derived = match self
            .data
            .derive(replaced, new, settings.strict, settings.repair)
        {
            Ok(derived) => derived,
            // A strict build's error: reported exactly as a full build of these records reports it.
            Err(_) => {
                drop(claim);
                return Catalog::data_for_records(records, None, settings);
            }
        };
        let content_key = format!("content:{}", derived.fingerprint);
        if let Some(data) = settings
            .cache
            .then(|| cache::get(&content_key))
            .flatten()
            .filter(|d| d.adopted == derived.adopted)
        {
            cache::put_weak(&[&key, &content_key], &data);
            return Ok(data);
        }
        let data = Arc::new(derived);
        // Found again while a catalog holds it, but not kept for later: a
        // superseded version would hold its replaced tools.
        if settings.cache {
            cache::put_weak(&[&key, &content_key], &data);
        }
        Ok(data)
    }

    /// This data's unreadable records owned by an owner, with their index in
    /// a version without `replaced`'s records.
    fn kept_adoption(&self, replaced: Option<(Source, &str)>) -> Vec<(usize, Source, Box<str>)> {
        let data = &self.data;
        let Some((source, owner)) = replaced else {
            return data.adopted.clone();
        };
        if data.adopted.is_empty() {
            return Vec::new();
        }
        let mut removed = 0;
        let mut out = Vec::new();
        for index in 0..data.records.len() {
            if data.owned_by(index, source, owner) {
                removed += 1;
            } else if let Ok(at) = data.adopted.binary_search_by_key(&index, |(i, _, _)| *i) {
                let (_, s, o) = &data.adopted[at];
                out.push((index - removed, *s, o.clone()));
            }
        }
        out
    }

    /// This catalog plus the tools in `text` (same formats as
    /// [`Catalog::from_json_text`]), built with the same policy, strictness
    /// and limits. The telemetry counter scope carries over: appending
    /// continues the running totals, replacing the catalog starts new ones.
    /// Every record, old or new, is parsed on its own, so a bad one is still
    /// rejected alone; duplicate ids are handled as in any build (the later
    /// record is excluded). A restricted view cannot be appended to: its
    /// narrowing is per turn, not a catalog.
    pub fn append(&self, text: &str) -> Result<Catalog> {
        self.refuse_restricted("append to the catalog itself, not to a restricted view")?;
        self.append_stored(store::intern(record_spans(text)?))
    }

    /// [`Catalog::append`] of records already stored (each tool serialized
    /// on its own by the binding, in slices on the caller's event loop).
    pub fn append_stored(&self, new: Vec<Arc<store::StoredRecord>>) -> Result<Catalog> {
        self.refuse_restricted("append to the catalog itself, not to a restricted view")?;
        within_tool_cap(self.data.records.len() + new.len(), "would have")?;
        let added = new.len();
        let records: Vec<_> = self.data.records.iter().cloned().chain(new).collect();
        let data = self.derived_data(None, records, added)?;
        Ok(self.next_version(data, Arc::clone(&self.unavailable.owners)))
    }

    /// This catalog's next version over `data`: same policy, strictness,
    /// limits and counter scope, `unavailable` owners kept out, tool vectors
    /// of the tools it keeps reused.
    fn next_version(&self, data: Arc<CatalogData>, unavailable: UnavailableOwners) -> Catalog {
        let mut next = Catalog::with_policy(
            data,
            self.settings.clone(),
            self.limits,
            Arc::clone(&self.counters),
        );
        next.unavailable = Unavailable::of(unavailable, &next.data);
        next.prepare_ranking(Some(&self.data));
        next
    }

    /// This catalog with exactly the tools of one source's owner (an MCP
    /// server, a plugin) replaced by the tools in `text` (same formats as
    /// [`Catalog::from_json_text`]; no tools removes the owner, a new owner
    /// is added). Same policy, limits and strictness; the counter scope
    /// carries over, as with [`Catalog::append`]. A new record without
    /// `source` / `owner` gets the selector's (an MCP `tools/list` answer
    /// passes straight through); one naming another source or owner (or, in
    /// `mcp`, another server) is an INVALID_CATALOG error and nothing
    /// changes. Only the owner's new records are parsed and indexed; the
    /// result equals a full build of the final record set (same entries,
    /// fingerprint and ranking). Records that cannot be read stay the
    /// owner's: its next update removes them.
    pub fn with_source(&self, selector: &SourceSelector, text: &str) -> Result<Catalog> {
        self.refuse_restricted("replace a source in the catalog itself, not in a restricted view")?;
        let new = record_spans(text)?;
        let mut texts: Vec<std::borrow::Cow<'_, str>> = Vec::with_capacity(new.len());
        for (index, span) in new.into_iter().enumerate() {
            texts.push(selector.claim(index, span)?);
        }
        self.with_claimed_source(selector, store::intern(texts.iter().map(|t| t.as_ref())))
    }

    /// [`Catalog::with_source`] of records already stored (each tool
    /// serialized on its own by the binding, in slices on the caller's event
    /// loop); each is claimed for the selector here.
    pub fn with_source_stored(
        &self,
        selector: &SourceSelector,
        new: Vec<Arc<store::StoredRecord>>,
    ) -> Result<Catalog> {
        self.refuse_restricted("replace a source in the catalog itself, not in a restricted view")?;
        within_tool_cap(new.len(), "has")?;
        // Records given a source or owner are stored under their new text, in one batch.
        let mut changed: Vec<(usize, String)> = Vec::new();
        for (index, record) in new.iter().enumerate() {
            if let std::borrow::Cow::Owned(text) = selector.claim(index, &record.text)? {
                changed.push((index, text));
            }
        }
        let mut new = new;
        let stored = store::intern(changed.iter().map(|(_, text)| text.as_str()));
        for ((index, _), record) in changed.iter().zip(stored) {
            new[*index] = record;
        }
        self.with_claimed_source(selector, new)
    }

    fn with_claimed_source(
        &self,
        selector: &SourceSelector,
        new: Vec<Arc<store::StoredRecord>>,
    ) -> Result<Catalog> {
        let data = &self.data;
        let added = new.len();
        let kept = (0..data.records.len())
            .filter(|&i| !data.owned_by(i, selector.source, &selector.owner))
            .map(|i| Arc::clone(&data.records[i]));
        let records: Vec<_> = kept.chain(new).collect();
        within_tool_cap(records.len(), "would have")?;
        let data = self.derived_data(Some((selector.source, &selector.owner)), records, added)?;
        // Fresh tools from the owner: available again.
        Ok(self.next_version(data, self.unavailable.without(selector)))
    }

    /// This catalog with the tools of `selector` (one source's owner, e.g. a
    /// disconnected MCP server) kept but unable to run: search leaves them
    /// out, a call fails closed with TOOL_UNAVAILABLE and `reason` (at most
    /// 200 characters; control characters become spaces). `with_source` with
    /// fresh tools makes them available again. Same data, policy and counters.
    pub fn with_unavailable(&self, selector: &SourceSelector, reason: &str) -> Result<Catalog> {
        self.refuse_restricted(
            "mark a source unavailable in the catalog itself, not in a restricted view",
        )?;
        let reason: String = reason
            .chars()
            .take(200)
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let reason = reason.trim();
        let reason = if reason.is_empty() {
            "unavailable"
        } else {
            reason
        };
        // The owner's earlier mark (if any) is dropped; the others keep their order.
        let before = &self.unavailable;
        let replaced = before
            .owners
            .iter()
            .position(|(s, o, _)| *s == selector.source && **o == *selector.owner);
        let mut owners: Vec<_> = before.owners.to_vec();
        if let Some(at) = replaced {
            owners.remove(at);
        }
        owners.push((
            selector.source,
            Arc::from(selector.owner.as_str()),
            Arc::from(reason),
        ));
        let index = (owners.len() - 1) as u32;
        // Only the marked owner's run is looked up; the others' are this data's already.
        let mut runs: Vec<(u32, u32, u32)> = Vec::with_capacity(before.runs.len() + 1);
        for &(start, end, owner) in before.runs.iter() {
            match replaced {
                Some(at) if owner as usize == at => {}
                Some(at) if owner as usize > at => runs.push((start, end, owner - 1)),
                _ => runs.push((start, end, owner)),
            }
        }
        let (start, end) = owner_run(&self.data, selector.source, &selector.owner);
        if start < end {
            let at = runs.partition_point(|&(s, _, _)| (s as usize) < start);
            runs.insert(at, (start as u32, end as u32, index));
        }
        let mut next = self.clone();
        next.unavailable = Unavailable {
            owners: owners.into(),
            runs: runs.into(),
        };
        Ok(next)
    }

    /// For each unavailable owner with tools among the best `limit` matches of
    /// `query` (had they been available): (source, owner, how many, reason).
    /// Empty, at no cost, when no owner is unavailable.
    pub fn unavailable_matches(
        &self,
        query: &str,
        limit: usize,
    ) -> Vec<(Source, &str, usize, &str)> {
        if self.unavailable.owners.is_empty() || check_query(query).is_err() {
            return Vec::new();
        }
        let ranked = self
            .data
            .index
            .search(query, limit, &|o| self.is_allowed(o));
        let mut out: Vec<(Source, &str, usize, &str)> = Vec::new();
        for hit in ranked {
            let Some(reason) = self.unavailable_reason(hit.ordinal) else {
                continue;
            };
            let entry = &self.data.entries[hit.ordinal];
            match out
                .iter_mut()
                .find(|(s, o, _, _)| *s == entry.source && *o == entry.owner)
            {
                Some(group) => group.2 += 1,
                None => out.push((entry.source, &entry.owner, 1, reason)),
            }
        }
        out
    }

    /// Why the tool at `ordinal` cannot run, if its owner is unavailable.
    pub fn unavailable_reason(&self, ordinal: usize) -> Option<&str> {
        self.unavailable.reason(ordinal)
    }

    /// Build from records already in memory (Rust callers, tests, benches).
    pub fn from_records(records: Vec<Value>, options: &CatalogOptions) -> Result<Catalog> {
        let text =
            serde_json::to_string(&records).map_err(|e| Error::invalid_catalog(e.to_string()))?;
        Catalog::from_json_text(&text, options)
    }

    fn with_policy(
        data: Arc<CatalogData>,
        settings: BuildSettings,
        limits: SearchLimits,
        counters: Arc<Counters>,
    ) -> Catalog {
        let policy = &settings.policy;
        let mask: Option<Arc<[bool]>> = (!policy.is_unrestricted()).then(|| {
            data.entries
                .iter()
                .map(|e| policy.allows_entry(e))
                .collect()
        });
        let uncataloged = Uncataloged::of(&data.direct_only, &data.control_named, |d| {
            policy.allows(d.source, &d.owner, &d.name, &d.id)
        });
        Catalog::view(data, mask, uncataloged, counters, limits, settings, false)
    }

    fn view(
        data: Arc<CatalogData>,
        mask: Option<Arc<[bool]>>,
        uncataloged: Uncataloged,
        counters: Arc<Counters>,
        limits: SearchLimits,
        settings: BuildSettings,
        restricted: bool,
    ) -> Catalog {
        let allowed_count = mask
            .as_ref()
            .map_or(data.entries.len(), |m| m.iter().filter(|&&a| a).count());
        let fingerprint = match &mask {
            None => data.fingerprint.clone(),
            Some(mask) => {
                let mut hasher = blake3::Hasher::new();
                hasher.update(data.fingerprint.as_bytes());
                for (entry, _) in data.entries.iter().zip(mask.iter()).filter(|(_, &a)| a) {
                    hasher.update(&(entry.id.len() as u64).to_le_bytes());
                    hasher.update(entry.id.as_bytes());
                }
                hasher.finalize().to_hex()[..32].to_string()
            }
        };
        Catalog {
            data,
            mask,
            allowed_count,
            fingerprint,
            uncataloged,
            counters,
            limits,
            settings,
            restricted,
            unavailable: Unavailable::default(),
        }
    }

    /// INVALID_REQUEST with `message` on a restricted view: its narrowing is
    /// per turn, not a catalog to derive versions from.
    fn refuse_restricted(&self, message: &str) -> Result<()> {
        if self.restricted {
            return Err(Error::invalid_request(message));
        }
        Ok(())
    }

    pub fn size(&self) -> usize {
        self.allowed_count
    }

    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    pub fn limits(&self) -> SearchLimits {
        self.limits
    }

    /// The same catalog with other search limits (the session's resolved config).
    pub fn with_limits(&self, limits: SearchLimits) -> Catalog {
        let mut catalog = self.clone();
        catalog.limits = limits;
        catalog
    }

    pub fn is_allowed(&self, ordinal: usize) -> bool {
        self.mask
            .as_ref()
            .is_none_or(|m| m.get(ordinal).copied().unwrap_or(false))
    }

    /// Allowed entries in id order.
    pub fn entries(&self) -> impl Iterator<Item = &ToolEntry> + '_ {
        self.data
            .entries
            .iter()
            .enumerate()
            .filter(|(o, _)| self.is_allowed(*o))
            .map(|(_, e)| e)
    }

    /// Allowed entries in the directory's row order (name, owner, id).
    pub fn entries_by_name(&self) -> impl Iterator<Item = &ToolEntry> + '_ {
        self.data
            .name_order
            .iter()
            .map(|&o| o as usize)
            .filter(|&o| self.is_allowed(o))
            .map(|o| &self.data.entries[o])
    }

    /// Allowed entries with their ordinals.
    pub fn ordinals(&self) -> impl Iterator<Item = (usize, &ToolEntry)> + '_ {
        self.data
            .entries
            .iter()
            .enumerate()
            .filter(|(o, _)| self.is_allowed(*o))
    }

    pub fn entry(&self, ordinal: usize) -> Option<&ToolEntry> {
        self.is_allowed(ordinal)
            .then(|| self.data.entries.get(ordinal))
            .flatten()
    }

    /// Direct-only tools the policy allows: the gateway keeps them visible.
    pub fn direct_only(&self) -> &[Arc<DirectOnlyTool>] {
        &self.uncataloged.direct_only
    }

    /// Tools the policy allows that are named like a control tool: never
    /// cataloged, passed through as given when Tool Search is off.
    pub fn control_named(&self) -> &[Arc<DirectOnlyTool>] {
        &self.uncataloged.control_named
    }

    /// Whether `entry` is one of the core coding tools (`CatalogOptions.coreTools`):
    /// an `openclaw` tool of owner `core` with such a name. A plugin tool
    /// reusing the name is not.
    pub fn is_core_tool(&self, entry: &ToolEntry) -> bool {
        entry.source == Source::Openclaw
            && entry.owner == "core"
            && self.settings.core_tools.contains(&entry.name)
    }

    /// Allowed core coding tools, in id order. Looked up by name: the cost
    /// follows the configured names, not the catalog size.
    pub fn core_tools(&self) -> impl Iterator<Item = &ToolEntry> + '_ {
        let mut ordinals: Vec<usize> = self
            .settings
            .core_tools
            .iter()
            .flat_map(|name| self.data.ordinals_named(name))
            .map(|&o| o as usize)
            .filter(|&o| self.is_allowed(o) && self.is_core_tool(&self.data.entries[o]))
            .collect();
        ordinals.sort_unstable();
        ordinals.into_iter().map(|o| &self.data.entries[o])
    }

    /// Records that were not cataloged (bad records, control tools), with reasons.
    pub fn excluded(&self) -> &[ExcludedTool] {
        &self.data.excluded
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn data(&self) -> &CatalogData {
        &self.data
    }

    /// Ranked compact hits. Counts as one search.
    pub fn search(&self, query: &str, limit: Option<f64>) -> Result<Vec<SearchHit>> {
        let limit = self.limits.effective(limit)?;
        let hits = self.ranked_hits(query, limit)?;
        self.counters.record_search(1);
        Ok(hits.iter().map(|h| self.data.ranked_hit(h)).collect())
    }

    /// Ranked ordinals without rendering or counting (surfaces, hydration).
    pub fn search_ordinals(&self, query: &str, limit: usize) -> Result<Vec<usize>> {
        Ok(self
            .search_ranked(query, limit)?
            .into_iter()
            .map(|h| h.ordinal)
            .collect())
    }

    /// Lexically ranked hits with their match strength and weak mark,
    /// without rendering or counting (surfaces, hydration; `search` and
    /// `search_batch` go through [`Catalog::ranked_hits`], which re-ranks
    /// these when the catalog's ranking is hybrid).
    pub fn search_ranked(&self, query: &str, limit: usize) -> Result<Vec<ScoredHit>> {
        check_query(query)?;
        Ok(self
            .data
            .index
            .search(query, limit, &|o| self.is_searchable(o)))
    }

    /// Allowed by policy and available now: what a search may return.
    pub(crate) fn is_searchable(&self, ordinal: usize) -> bool {
        self.is_allowed(ordinal) && self.unavailable_reason(ordinal).is_none()
    }

    /// The compact hit of an allowed entry.
    pub fn hit(&self, ordinal: usize) -> Option<SearchHit> {
        self.is_allowed(ordinal).then(|| self.data.hit(ordinal))
    }

    pub fn resolve(&self, id_or_name: &str, style: LookupStyle) -> Result<&ToolEntry> {
        self.resolve_ordinal(id_or_name, style)
            .map(|o| &self.data.entries[o])
    }

    /// The hit plus exact schemas. Counts as one describe.
    pub fn describe(&self, id_or_name: &str, style: LookupStyle) -> Result<ToolDescription> {
        let ordinal = self.resolve_ordinal(id_or_name, style)?;
        self.counters.record_describe();
        Ok(self.data.description(ordinal))
    }

    /// Check arguments against the tool's input schema (trusted or not: the
    /// caller decides whether to enforce). An uncompilable schema is an
    /// INVALID_SCHEMA error.
    pub fn validate_args(&self, id_or_name: &str, args: &Value) -> Result<ArgsValidation> {
        let ordinal = self.resolve_ordinal(id_or_name, LookupStyle::Structured)?;
        self.validate_ordinal(ordinal, args)
    }

    pub fn validate_ordinal(&self, ordinal: usize, args: &Value) -> Result<ArgsValidation> {
        if !self.is_allowed(ordinal) {
            return Err(Error::new(
                ErrorCode::ToolNotFound,
                "tool is not in this catalog",
            ));
        }
        let validator = self.data.validator(ordinal)?;
        let errors = validator.validate(args);
        Ok(ArgsValidation {
            ok: errors.is_empty(),
            errors,
        })
    }

    /// Check what a trusted tool returned against its declared output schema.
    /// What is checked: the JSON value of the result, i.e. `details` when the
    /// result has OpenClaw's tool-result shape `{ content: [...], details }`
    /// (`content` is the text for the model), otherwise the whole result. Ok
    /// when the tool is untrusted or declares no output schema. Err says what
    /// does not match (a few issues, bounded); the call has then failed.
    pub fn check_output(&self, ordinal: usize, result: &Value) -> std::result::Result<(), String> {
        let Some(entry) = self.data.entries.get(ordinal) else {
            return Err("the tool is not in this catalog".into());
        };
        if !entry.is_trusted() || entry.output_schema.is_none() {
            return Ok(());
        }
        let value = match result {
            Value::Object(obj) if obj.get("content").is_some_and(Value::is_array) => match obj
                .get("details")
            {
                Some(details) => details,
                None => {
                    return Err(
                        "the result has no `details` to match its declared output schema".into(),
                    )
                }
            },
            other => other,
        };
        let validator = self
            .data
            .output_validator(ordinal)
            .map_err(|e| format!("its output schema is unusable: {}", e.message))?;
        let issues = validator.validate(value);
        if issues.is_empty() {
            return Ok(());
        }
        const SHOWN: usize = 3;
        let mut message = String::from("the result does not match its declared output schema:");
        for issue in issues.iter().take(SHOWN) {
            message.push(' ');
            message.push_str(&issue.message);
        }
        if issues.len() > SHOWN {
            message.push_str(&format!(" (+{} more)", issues.len() - SHOWN));
        }
        Err(message)
    }

    /// A narrowed view: only tools whose name or id is in `names` (and that this
    /// view already allows). Same index and counters; nothing is rebuilt.
    pub fn restrict<S: AsRef<str>>(&self, names: &[S]) -> Catalog {
        let wanted: std::collections::HashSet<&str> = names.iter().map(AsRef::as_ref).collect();
        let mask: Arc<[bool]> = self
            .data
            .entries
            .iter()
            .enumerate()
            .map(|(o, e)| {
                self.is_allowed(o)
                    && (wanted.contains(e.name.as_str()) || wanted.contains(e.id.as_str()))
            })
            .collect();
        let uncataloged = Uncataloged::of(
            &self.uncataloged.direct_only,
            &self.uncataloged.control_named,
            |d| wanted.contains(d.name.as_str()) || wanted.contains(d.id.as_str()),
        );
        let mut view = Catalog::view(
            Arc::clone(&self.data),
            Some(mask),
            uncataloged,
            Arc::clone(&self.counters),
            self.limits,
            self.settings.clone(),
            true,
        );
        view.unavailable = self.unavailable.clone();
        view
    }

    pub fn telemetry(&self) -> CatalogTelemetry {
        let mut sources = SourceCounts::default();
        for e in self.entries() {
            match e.source {
                Source::Openclaw => sources.openclaw += 1,
                Source::Mcp => sources.mcp += 1,
                Source::Client => sources.client += 1,
            }
        }
        CatalogTelemetry {
            catalog_size: self.allowed_count as u64,
            sources,
            counter_scope: self.counters.scope().to_string(),
            search_count: self.counters.searches(),
            describe_count: self.counters.describes(),
            call_count: self.counters.calls(),
        }
    }
}

/// `strict` builds accept only [`records::KNOWN_FIELDS`]: a record with any
/// other top-level field becomes a bad record (so the build fails on it).
fn reject_unknown_fields(records: &mut [RawRecord]) {
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

impl CatalogData {
    /// The compiled output schema of a trusted tool, compiled on first use and
    /// cached like the input validator.
    pub(crate) fn output_validator(
        &self,
        ordinal: usize,
    ) -> std::result::Result<Arc<crate::schema::CompiledSchema>, Error> {
        let entry = &self.entries[ordinal];
        let schema = entry.output_schema.as_deref();
        entry
            .lazy()
            .output_validator
            .get_or_init(|| {
                crate::schema::CompiledSchema::compile(schema.unwrap_or(&Value::Bool(true)))
                    .map(Arc::new)
            })
            .clone()
    }
}

/// Cached data a full build may use: none of its records owned by an owner
/// they do not name (only live updates adopt unreadable records).
fn full_build(key: &str) -> Option<Arc<CatalogData>> {
    cache::get(key).filter(|data| data.adopted.is_empty())
}

fn check_query(query: &str) -> Result<()> {
    // Counted as the tool_search schema's `maxLength` counts (JSON Schema: Unicode code points),
    // so a query the schema allows is never refused here.
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(Error::new(
            ErrorCode::InvalidQuery,
            format!("query must be at most {MAX_QUERY_CHARS} characters; describe the capability you need in a few words."),
        ));
    }
    Ok(())
}

/// What [`release_unused`] let go of.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ReleasedMemory {
    /// Cached catalog builds no catalog held.
    pub catalogs: usize,
    /// Stored tool records no catalog held.
    pub records: usize,
}

/// What the process-wide caches hold now ([`memory_in_use`]): to tell a long-lived
/// gateway's growth apart from what the catalogs it uses need.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheMemory {
    /// Built catalog data kept for reuse though no catalog may hold it (at most a few).
    pub recent_builds: usize,
    /// Stored tool records (each distinct record text once).
    pub stored_records: usize,
    /// Their text, bytes.
    pub stored_record_bytes: usize,
}

/// What the process-wide caches hold now (cheap: two counts under their locks).
pub fn memory_in_use() -> CacheMemory {
    let (stored_records, stored_record_bytes) = store::usage();
    CacheMemory {
        recent_builds: cache::recent_count(),
        stored_records,
        stored_record_bytes,
    }
}

/// INVALID_CATALOG when a catalog that `has` (or `would have`) `count` tools passes the cap.
fn within_tool_cap(count: usize, has: &str) -> Result<()> {
    if count > MAX_CATALOG_TOOLS {
        return Err(Error::invalid_catalog(format!(
            "catalog {has} {count} tools; at most {MAX_CATALOG_TOOLS} are accepted"
        )));
    }
    Ok(())
}

/// A memory-pressure hook: drop cached catalog builds and stored tool records
/// that no catalog holds. Catalogs in use are untouched; the next build of
/// released tools reads (and indexes) them again.
pub fn release_unused() -> ReleasedMemory {
    let catalogs = cache::clear();
    ReleasedMemory {
        catalogs,
        records: store::evict_unheld(),
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ranking;
#[cfg(test)]
mod tests_schemas;
