//! The immutable, shareable part of a catalog: validated entries in id order
//! (shared with the versions derived from it) and their search index.
//! Built once per distinct tool set and cached by fingerprint.

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tool_search_base::text::{clip, prefix};

use super::lookup::NameIndex;
use super::records::RawRecord;
use super::refusal::{ExclusionCode, Refusal};
use super::repair::{self, RepairInput, RepairedTool, Repairs};
use super::store::StoredRecord;
use super::text::is_invisible;
use crate::entry::{EntryDigest, EntryFields, Source, ToolEntry, ToolRecord, GONE};
use crate::error::{Error, Result};
use crate::limits::*;
use crate::schema::{self, CompiledSchema};
use crate::search::{IndexCacheOutcome, IndexCacheState, Prerequisites, SearchIndex};

/// A record that was not cataloged, and why: a code and the field at fault to
/// act on, a sentence to show.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExcludedTool {
    pub index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub code: ExclusionCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<&'static str>,
    pub reason: String,
}

/// A direct-only tool: kept out of the catalog, stays visible to the model.
#[derive(Debug, Clone)]
pub struct DirectOnlyTool {
    pub source: Source,
    pub owner: String,
    pub name: String,
    pub id: String,
    /// The record exactly as supplied.
    pub raw: Value,
    /// `raw` serialized: what the catalog fingerprint hashes (written once,
    /// not at each derived version).
    pub(crate) text: Box<str>,
}

impl DirectOnlyTool {
    fn new(source: Source, owner: String, name: String, id: String) -> DirectOnlyTool {
        DirectOnlyTool {
            source,
            owner,
            name,
            id,
            raw: Value::Null,
            text: Box::from(""),
        }
    }

    /// This tool with the record it was read from, shared.
    fn with_raw(mut self, raw: Value) -> Arc<DirectOnlyTool> {
        self.text = raw.to_string().into();
        self.raw = raw;
        Arc::new(self)
    }
}

/// The background vector job embeds this data's entries and fills its slots.
impl crate::search::semantic::VectorConsumer for CatalogData {
    fn entries(&self) -> &[ToolEntry] {
        &self.entries
    }

    fn vector_slots(&self) -> &crate::search::semantic::VectorSlots {
        &self.vectors
    }
}

/// Catalogs with fewer entries are freed in place (well under a millisecond).
pub const BACKGROUND_RELEASE_MIN_ENTRIES: usize = 1_000;
/// Catalogs at least this large build their name lookups and prerequisite
/// table on a second thread while the search index is built, where the
/// caller allows it ([`crate::search::with_second_thread`]; a thread's start
/// costs more than a small catalog's lookups).
const PARALLEL_LOOKUPS_MIN_ENTRIES: usize = 2_048;

/// An empty catalog's data, shared: what a released catalog points at.
/// Built once; `CatalogData::build` warms it for large catalogs, so the first
/// release does not build it (under the cache lock, or in a drop).
pub fn empty_data() -> Option<Arc<CatalogData>> {
    static EMPTY: OnceLock<Option<Arc<CatalogData>>> = OnceLock::new();
    EMPTY
        .get_or_init(|| {
            let validated = Validated {
                entries: Vec::new(),
                entry_records: Vec::new(),
                direct_only: Vec::new(),
                control_named: Vec::new(),
                excluded: Vec::new(),
                repaired: Vec::new(),
            };
            CatalogData::build(
                validated,
                String::new(),
                Arc::from(Vec::new()),
                Vec::new(),
                None,
            )
            .ok()
            .map(Arc::new)
        })
        .clone()
}

/// Two ascending (by `order`) sequences as one (equal elements: `a`'s first).
/// Each element of `b` (an update's few entries) is placed by binary search,
/// so the long `a` is copied, not compared element by element.
fn merge_sorted(
    a: &[u32],
    b: Vec<u32>,
    order: impl Fn(&u32, &u32) -> std::cmp::Ordering,
) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut rest = a;
    for y in b {
        let at = rest.partition_point(|x| !order(&y, x).is_lt());
        out.extend_from_slice(&rest[..at]);
        out.push(y);
        rest = &rest[at..];
    }
    out.extend_from_slice(rest);
    out
}

pub struct CatalogData {
    /// In id order (ids are unique): an id is found by binary search.
    pub entries: Vec<ToolEntry>,
    /// Each entry's digest, side by side: a derived version's fingerprint
    /// reads them without visiting every (shared, scattered) entry.
    pub(crate) digests: Vec<EntryDigest>,
    pub index: SearchIndex,
    /// Trigrams of owners and names: candidates for "did you mean". Built
    /// when first needed, or beside a large catalog after its build
    /// ([`CatalogData::prepare_names`]): most builds never suggest a name, and a
    /// large catalog's trigrams are a quarter of a build from a stored index.
    names: OnceLock<NameIndex>,
    /// (digest, ordinal) in digest order, built when a learned prior first
    /// asks which of its tools this catalog holds.
    by_digest: OnceLock<Vec<(EntryDigest, u32)>>,
    pub fingerprint: String,
    /// Ordinals in the directory's row order (name, owner, id): the directory
    /// renders in one pass without sorting, and a name's tools are one run.
    pub name_order: Vec<u32>,
    pub direct_only: Vec<Arc<DirectOnlyTool>>,
    /// Records named like a control tool (also in `excluded`): shown as given
    /// when Tool Search is off, never cataloged.
    pub control_named: Vec<Arc<DirectOnlyTool>>,
    pub excluded: Vec<ExcludedTool>,
    /// Records indexed in a repaired form (the `repair` option), by record index.
    pub repaired: Vec<RepairedTool>,
    /// Each record this data was built from, in order (an `append` parses
    /// these plus the new ones, each on its own). Shared with the record store.
    pub records: Arc<[Arc<StoredRecord>]>,
    /// The source and owner each record names (defaults applied), `None` for
    /// a record that could not be read: what `with_source` replaces.
    pub origins: Vec<Option<(Source, Arc<str>)>>,
    /// The ordinal of the entry each record is indexed as, [`GONE`] for a
    /// record that is not (excluded, direct-only, or replaced by a later
    /// record with its id): how a gateway maps its own tools to ids.
    pub record_entries: Vec<u32>,
    /// Records that could not be read (no origin of their own) that a live
    /// update sent under one source's owner (`with_source`), by record index
    /// (ascending): the next update of that owner replaces them with the rest
    /// of its tools. Empty after a full build.
    pub adopted: Vec<(usize, Source, Box<str>)>,
    /// Tool vectors for hybrid ranking (per model), filled in the background.
    pub vectors: crate::search::semantic::VectorSlots,
    /// The tools that find the identifiers other tools require (search ranking).
    pub(crate) prerequisites: Prerequisites,
    /// Whether the search index was built, loaded from the cache folder or
    /// derived from the previous version.
    pub index_cache: IndexCacheOutcome,
    /// Estimated heap bytes this data holds that the data it was derived
    /// from does not share (all of it after a full build): what the binding
    /// reports to the JS engine's collector while a JS object holds it.
    pub native_bytes: usize,
}

/// Heap bytes per byte of a new record's text: the text itself, its schemas
/// as `serde_json::Value`s and its share of a new search index part
/// (calibrated with a counting allocator on the dev catalog,
/// `tests/memory_estimate.rs`).
const BYTES_PER_NEW_RECORD_BYTE: usize = 5;

/// [`CatalogData::native_bytes`] of data with `entries` tools, of which
/// `fresh` are new entries (not shared with the data it was derived from),
/// read from new records of `fresh_text` bytes. Every version has its own
/// per-tool tables (ordinals, origins, per-document search tables, name
/// trigrams); entries, their schemas and index parts of kept tools are shared.
fn estimate_native_bytes<'a>(
    entries: usize,
    fresh: impl Iterator<Item = &'a ToolEntry>,
    fresh_text: usize,
) -> usize {
    use std::mem::size_of;
    let per_tool = size_of::<ToolEntry>()
        + 4 + 16 + 8 + 24 // name order, digest, record, origin
        + 8 + 12 + 24 + 128 + 8 // index tables: location, lengths, factors, signature, doc maps
        + 24 * 4; // name trigram postings
    let fresh: usize = fresh
        .map(|e| {
            crate::entry::ENTRY_BLOCK_BYTES
                + e.id.len()
                + e.owner.len()
                + e.name.len()
                + e.label.as_ref().map_or(0, String::len)
                + e.description.len()
                + e.mcp.as_ref().map_or(0, |m| {
                    m.server_name.len()
                        + m.safe_server_name.len()
                        + m.tool_name.len()
                        + m.operation.len()
                })
        })
        .sum();
    entries * per_tool + fresh + fresh_text * BYTES_PER_NEW_RECORD_BYTE
}

/// Records after validation, before indexing.
pub struct Validated {
    pub entries: Vec<ToolEntry>,
    /// The record index each entry was read from.
    pub entry_records: Vec<usize>,
    pub direct_only: Vec<Arc<DirectOnlyTool>>,
    pub control_named: Vec<Arc<DirectOnlyTool>>,
    pub excluded: Vec<ExcludedTool>,
    pub repaired: Vec<RepairedTool>,
}

impl Validated {
    /// Per record (of `records`), the ordinal of the entry read from it, or [`GONE`].
    pub fn record_entries(&self, records: usize) -> Vec<u32> {
        let mut table = vec![GONE; records];
        for (ordinal, &index) in self.entry_records.iter().enumerate() {
            if let Some(slot) = table.get_mut(index) {
                *slot = ordinal as u32;
            }
        }
        table
    }
}

/// The source and owner a parsed record names, defaults applied.
pub fn origin(record: &ToolRecord) -> Option<(Source, Arc<str>)> {
    origin_of(record.source.as_deref(), record.owner.as_deref()).map(|(s, o)| (s, o.into()))
}

/// The source and owner of a record's `source` and `owner` fields, defaults
/// applied; `None` for a source this package does not know.
pub fn origin_of<'a>(source: Option<&str>, owner: Option<&'a str>) -> Option<(Source, &'a str)> {
    let source = match source {
        None => Source::Openclaw,
        Some(s) => Source::parse(s)?,
    };
    Some((source, owner.unwrap_or(source.default_owner())))
}

/// A refused record a `repair` build tries to repair (a control tool's, with
/// its tool as given should it stay refused).
struct Pending {
    index: usize,
    refusal: Refusal,
    control: Option<Arc<DirectOnlyTool>>,
}

/// Validate and normalize records. Bad records are excluded with a reason;
/// `strict` turns the first one into an INVALID_CATALOG error instead. With
/// `repair` (the records' texts), a bad record is indexed in a repaired form
/// where its refusal has a repair ([`repair`]).
pub fn validate_records(
    records: Vec<RawRecord>,
    strict: bool,
    repair: Option<RepairInput<'_>>,
) -> Result<Validated> {
    let mut entries: Vec<(ToolEntry, usize)> = Vec::with_capacity(records.len());
    let mut direct_only = Vec::new();
    let mut control_named = Vec::new();
    let mut excluded = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    let outcomes = crate::search::map_in_halves(records, |raw| {
        let outcome = raw
            .parsed
            .and_then(|(record, value)| normalize(record).map(|n| (n, value)));
        (raw.index, outcome)
    });
    for (index, outcome) in outcomes {
        match outcome {
            Ok((Normalized::Entry(entry), _)) => entries.push((entry, index)),
            Ok((Normalized::Control(tool), Some(value))) if repair.is_some() => {
                pending.push(Pending {
                    index,
                    refusal: Refusal::control(),
                    control: Some(tool.with_raw(value)),
                })
            }
            Err(refusal) if repair.is_some() => pending.push(Pending {
                index,
                refusal,
                control: None,
            }),
            Ok((Normalized::DirectOnly(tool), Some(value))) => {
                direct_only.push(tool.with_raw(value))
            }
            Ok((Normalized::Control(tool), Some(value))) => {
                let tool = tool.with_raw(value);
                excluded.push(control_excluded(index, &tool));
                control_named.push(tool);
            }
            // The reader keeps the raw object of every record that can be
            // handed back as given (`records::parse_record`).
            Ok((Normalized::DirectOnly(_) | Normalized::Control(_), None)) => {
                return Err(Error::internal(format!(
                    "tool #{index}: its raw record was not kept"
                )));
            }
            Err(refusal) => {
                if strict {
                    return Err(Error::invalid_catalog(format!(
                        "tool #{index}: {}",
                        refusal.reason
                    )));
                }
                excluded.push(ExcludedTool {
                    index,
                    name: None,
                    code: refusal.code,
                    field: refusal.field,
                    reason: refusal.reason,
                });
            }
        }
    }
    let mut repaired = Vec::new();
    if let Some(input) = repair.filter(|_| !pending.is_empty()) {
        let mut fixed = Vec::new();
        let mut still_control = Vec::new();
        {
            // Every record's own id is taken, refused ones' too (as the record names it).
            let seed = || {
                let mut ids: Vec<String> = entries.iter().map(|(e, _)| e.id.clone()).collect();
                ids.extend(
                    direct_only
                        .iter()
                        .chain(&control_named)
                        .map(|d| d.id.clone()),
                );
                ids.extend(
                    pending
                        .iter()
                        .filter_map(|p| input.text(p.index))
                        .filter_map(repair::natural_id),
                );
                ids.extend(input.outside_ids());
                ids
            };
            let mut repairs = Repairs::new(input.len(), seed);
            for p in &pending {
                let outcome = input
                    .text(p.index)
                    .and_then(|text| repairs.repair(p.index, text, p.refusal.clone(), read_entry));
                if let Some((entry, made)) = outcome {
                    fixed.push((entry, p.index));
                    repaired.extend(made);
                    continue;
                }
                // No repair: as a build without them.
                if strict {
                    return Err(Error::invalid_catalog(format!(
                        "tool #{}: {}",
                        p.index, p.refusal.reason
                    )));
                }
                match &p.control {
                    Some(tool) => {
                        excluded.push(control_excluded(p.index, tool));
                        still_control.push(Arc::clone(tool));
                    }
                    None => excluded.push(ExcludedTool {
                        index: p.index,
                        name: None,
                        code: p.refusal.code,
                        field: p.refusal.field,
                        reason: p.refusal.reason.clone(),
                    }),
                }
            }
        }
        entries.extend(fixed);
        control_named.extend(still_control);
    }
    // Stable sort: equal ids stay in input order, and the last record wins
    // (a gateway registering a tool again means the newer one), keeping the
    // id's place; the replaced record is listed in `excluded`.
    // (Repaired entries were added last: ties go by record index.)
    entries.sort_by(|a, b| a.0.id.cmp(&b.0.id).then(a.1.cmp(&b.1)));
    let mut kept: Vec<ToolEntry> = Vec::with_capacity(entries.len());
    let mut kept_index: Vec<usize> = Vec::with_capacity(entries.len());
    // Records replaced by a later one with their id: no longer indexed, so not repaired either.
    let mut lost: Vec<usize> = Vec::new();
    for (entry, index) in entries {
        if let (Some(prev), Some(prev_index)) = (kept.last_mut(), kept_index.last_mut()) {
            if prev.id == entry.id {
                let reason = duplicate_reason(&entry.id);
                if strict {
                    return Err(Error::invalid_catalog(format!(
                        "tool #{prev_index}: {reason}"
                    )));
                }
                let replaced = std::mem::replace(prev, entry);
                lost.push(*prev_index);
                excluded.push(ExcludedTool {
                    index: *prev_index,
                    name: Some(replaced.name.clone()),
                    code: ExclusionCode::DuplicateId,
                    field: None,
                    reason,
                });
                *prev_index = index;
                continue;
            }
        }
        kept.push(entry);
        kept_index.push(index);
    }
    excluded.sort_by_key(|e| e.index);
    if !repaired.is_empty() && !lost.is_empty() {
        lost.sort_unstable();
        repaired.retain(|r| lost.binary_search(&r.index).is_err());
    }
    Ok(Validated {
        entries: kept,
        entry_records: kept_index,
        direct_only,
        control_named,
        excluded,
        repaired,
    })
}

/// The `excluded` item of a record named like a control tool.
fn control_excluded(index: usize, tool: &DirectOnlyTool) -> ExcludedTool {
    let refusal = Refusal::control();
    ExcludedTool {
        index,
        name: Some(tool.name.clone()),
        code: refusal.code,
        field: refusal.field,
        reason: refusal.reason,
    }
}

/// One record's text read and checked as a build does: what a repair gets back.
fn read_entry(text: &str) -> repair::Read<ToolEntry> {
    let Some(raw) = super::records::parse_spans([text]).pop() else {
        return repair::Read::Other;
    };
    match raw.parsed.and_then(|(record, _)| normalize(record)) {
        Ok(Normalized::Entry(entry)) => {
            let id = entry.id.clone();
            repair::Read::Indexed(entry, id)
        }
        Ok(Normalized::Control(_)) => repair::Read::Refused(Refusal::control()),
        Ok(Normalized::DirectOnly(_)) => repair::Read::Other,
        Err(refusal) => repair::Read::Refused(refusal),
    }
}

/// The `excluded` reason of a record replaced by a later one with its id.
/// No record index in it: a derived catalog renumbers records and carries
/// the reason over.
fn duplicate_reason(id: &str) -> String {
    format!("duplicate tool id {id}: replaced by a later record with this id (the last one wins)")
}

enum Normalized {
    Entry(ToolEntry),
    DirectOnly(DirectOnlyTool),
    Control(DirectOnlyTool),
}

fn normalize(record: ToolRecord) -> std::result::Result<Normalized, Refusal> {
    // The record reader keeps the raw object of exactly these (`records::parse_record`).
    let (control, direct_only) = (record.is_control(), record.is_direct_only());
    let name = record
        .name
        .ok_or_else(|| Refusal::field("name", "missing \"name\""))?;
    check_identifier_part("name", &name, MAX_NAME_CHARS)?;
    let source = match record.source.as_deref() {
        None => Source::Openclaw,
        Some(s) => Source::parse(s).ok_or_else(|| {
            Refusal::field(
                "source",
                format!(
                    "unknown source \"{}\" (openclaw, mcp or client)",
                    clip(s, 40)
                ),
            )
        })?,
    };
    let owner = record
        .owner
        .unwrap_or_else(|| source.default_owner().to_string());
    check_identifier_part("owner", &owner, MAX_OWNER_CHARS)?;
    let id = source.tool_id(&owner, &name);
    if let Some(given) = &record.id {
        if *given != id {
            return Err(Refusal::field(
                "id",
                format!(
                    "id \"{}\" does not equal <source>:<owner>:<name> = \"{}\"",
                    clip(given, 80),
                    clip(&id, 80)
                ),
            ));
        }
    }
    if control {
        return Ok(Normalized::Control(DirectOnlyTool::new(
            source, owner, name, id,
        )));
    }
    if let Some(mcp) = &record.mcp {
        if source != Source::Mcp {
            return Err(Refusal::field(
                "mcp",
                format!(
                    "\"mcp\" metadata is for source \"mcp\" tools only (this one is {})",
                    source.as_str()
                ),
            ));
        }
        // Routing data names a server: a tool may only name its own owner's
        // (the rule `withSource` applies to a server's update). OpenClaw names
        // the owner after `safeServerName` (`classifyTool`: sourceName =
        // mcp.safeServerName) and keeps the configured name in `serverName`;
        // its own tests make safe names such as `remoteDemo` of `remote-demo`.
        let server = mcp.server_name.as_str();
        let named = if !super::names_server(&owner, server) && !spelled_alike(&owner, server) {
            Some(("serverName", server))
        } else {
            let safe = mcp.safe_server_name.as_str();
            (safe != owner && !super::names_server(safe, server))
                .then_some(("safeServerName", safe))
        };
        if let Some((key, named)) = named {
            return Err(Refusal::field(
                "mcp",
                format!(
                    "names MCP server \"{}\" (mcp.{key}), not its owner \"{}\"",
                    clip(named, 80),
                    clip(&owner, 80)
                ),
            ));
        }
    }
    if direct_only {
        return Ok(Normalized::DirectOnly(DirectOnlyTool::new(
            source, owner, name, id,
        )));
    }
    if let Some(other) = record.catalog_mode.as_deref() {
        return Err(Refusal::field(
            "catalogMode",
            format!(
                "unknown catalogMode \"{}\" (only \"{}\")",
                clip(other, 40),
                crate::entry::DIRECT_ONLY
            ),
        ));
    }
    let input_schema = match record.input_schema {
        None => None,
        Some(schema) => {
            schema::check_bounds(&schema, MAX_JSON_DEPTH, MAX_SCHEMA_BYTES)
                .map_err(|e| Refusal::schema("inputSchema", format!("inputSchema: {e}")))?;
            if !(schema.is_object() || schema.is_boolean()) {
                return Err(Refusal::schema(
                    "inputSchema",
                    "inputSchema must be a JSON Schema object",
                ));
            }
            check_cost("inputSchema", &schema)?;
            Some(Arc::new(schema))
        }
    };
    // Output schemas are only ever shown for trusted tools; drop the rest. One
    // that cannot be used (too deep, too costly, a `$ref` that does not resolve,
    // not a schema) is dropped too, as OpenClaw lists such a tool without an
    // output hint: the tool keeps its place, only a result check is lost.
    let output_schema = match record.output_schema {
        Some(schema) if source.is_trusted() && usable_output_schema(&schema) => {
            Some(Arc::new(schema))
        }
        _ => None,
    };
    let label = record
        .label
        .map(|l| prefix(l.trim(), MAX_LABEL_CHARS).to_string())
        .filter(|l| !l.is_empty());
    // Trimmed and cut on a char boundary: the stored text is not marked as cut.
    let description = prefix(
        record.description.as_deref().unwrap_or("").trim(),
        MAX_DESCRIPTION_CHARS,
    )
    .to_string();
    let mcp = record.mcp;
    Ok(Normalized::Entry(ToolEntry::from(EntryFields {
        id,
        source,
        owner,
        name,
        label,
        description,
        input_schema,
        output_schema,
        mcp,
    })))
}

/// Whether two server names differ only in case and in what is not an ASCII
/// letter or digit (`remote-demo`, `remoteDemo`, `Remote Demo`): a safe form
/// of a name keeps its letters and digits in order.
fn spelled_alike(a: &str, b: &str) -> bool {
    let letters = |s: &str| {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect::<String>()
    };
    let (a, b) = (letters(a), letters(b));
    !a.is_empty() && a == b
}

/// Whether results can be checked against this output schema
/// (`Catalog::check_output`): within the bounds and the cost bound, and it
/// compiles (every `$ref` resolves).
fn usable_output_schema(schema: &Value) -> bool {
    schema::check_bounds(schema, MAX_JSON_DEPTH, MAX_SCHEMA_BYTES).is_ok()
        && check_cost("outputSchema", schema).is_ok()
        && CompiledSchema::compile(schema).is_ok()
}

/// A schema whose validation could explode is rejected here, at build, rather
/// than on the first call. A `$ref` that cannot be followed is left to the
/// compile on first use (INVALID_SCHEMA then), like any uncompilable schema.
fn check_cost(what: &'static str, schema: &Value) -> std::result::Result<(), Refusal> {
    if schema::within_bound_as_a_tree(schema) {
        return Ok(());
    }
    match schema::schema_cost(schema) {
        Err(schema::CostError::TooExpensive(why)) => Err(Refusal::schema(
            what,
            format!("{what} rejected (INVALID_SCHEMA): {why}"),
        )),
        Ok(_) | Err(schema::CostError::Unfollowable(_)) => Ok(()),
    }
}

fn check_identifier_part(
    what: &'static str,
    value: &str,
    max_chars: usize,
) -> std::result::Result<(), Refusal> {
    let refuse = |reason: String| Err(Refusal::field(what, reason));
    if value.is_empty() {
        return refuse(format!("\"{what}\" is empty"));
    }
    if value.chars().count() > max_chars {
        return refuse(format!("\"{what}\" is longer than {max_chars} characters"));
    }
    if value.chars().any(|c| c.is_control()) {
        return refuse(format!("\"{what}\" contains control characters"));
    }
    // `read\u{200B}` would sit beside `read`, and U+202E shows a name reversed.
    if let Some(c) = value.chars().find(|&c| is_invisible(c)) {
        return refuse(format!(
            "\"{what}\" contains an invisible or bidirectional formatting character (U+{:04X})",
            c as u32
        ));
    }
    if value != value.trim() {
        return refuse(format!("\"{what}\" has leading or trailing whitespace"));
    }
    // Ids are `<source>:<owner>:<name>`: a ':' would let an untrusted tool take
    // another tool's id (and match id-shaped policy patterns).
    if value.contains(':') {
        return refuse(format!(
            "\"{what}\" contains ':' (reserved as the id separator)"
        ));
    }
    Ok(())
}

/// Content fingerprint of validated entries (by their digests, in id order),
/// excluded records and direct-only tools: stable for the same tools and
/// schemas regardless of input order.
pub fn fingerprint(
    digests: &[EntryDigest],
    excluded: &[ExcludedTool],
    repaired: &[RepairedTool],
    direct_only: &[Arc<DirectOnlyTool>],
    control_named: &[Arc<DirectOnlyTool>],
) -> String {
    let mut hasher = blake3::Hasher::new();
    let mut write = |part: &[u8]| {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    };
    for digest in digests {
        write(digest);
    }
    // Excluded records are part of what a build reports, so part of its identity.
    write(b"excluded");
    for x in excluded {
        write(&(x.index as u64).to_le_bytes());
        write(x.code.as_str().as_bytes());
        write(x.reason.as_bytes());
    }
    // Repairs too: a repaired catalog never shares data (or a cache entry) with
    // an unrepaired one of other records. Written only when there are some, so
    // a build without them keeps its fingerprint.
    if !repaired.is_empty() {
        write(b"repaired");
        for r in repaired {
            write(&(r.index as u64).to_le_bytes());
            write(r.code.as_str().as_bytes());
            write(r.field.unwrap_or("").as_bytes());
            write(r.reason.as_bytes());
            write(r.change.as_bytes());
            write(r.id.as_bytes());
        }
    }
    write(b"direct-only");
    let mut direct: Vec<&str> = direct_only
        .iter()
        .chain(control_named)
        .map(|d| &*d.text)
        .collect();
    direct.sort_unstable();
    for d in direct {
        write(d.as_bytes());
    }
    let hash = hasher.finalize();
    hash.to_hex()[..32].to_string()
}

/// Whether two entries index the same text (the search index can keep the old one's doc).
fn same_indexed_text(a: &ToolEntry, b: &ToolEntry) -> bool {
    a.id == b.id
        && a.owner == b.owner
        && a.name == b.name
        && a.label == b.label
        && a.description == b.description
        && a.input_schema == b.input_schema
}

impl CatalogData {
    /// The data of `validated`; a large catalog's search index is loaded
    /// from `index_cache` (a folder) when a process stored it there, else
    /// built and stored.
    pub fn build(
        validated: Validated,
        fingerprint: String,
        records: Arc<[Arc<StoredRecord>]>,
        origins: Vec<Option<(Source, Arc<str>)>>,
        index_cache: Option<&std::path::Path>,
    ) -> Result<CatalogData> {
        let entries = &validated.entries;
        let index = || SearchIndex::build_stored(entries, index_cache);
        let lookups = || {
            let prerequisites = Prerequisites::build(entries);
            let mut name_order: Vec<u32> = (0..entries.len() as u32).collect();
            name_order.sort_unstable_by(|&a, &b| {
                crate::entry::directory_order(&entries[a as usize], &entries[b as usize])
            });
            (prerequisites, name_order)
        };
        // A large catalog's lookups are built beside its search index (which
        // takes most of a first build); a small one's on this thread.
        let ((index, index_cache), (prerequisites, name_order)) = if entries.len()
            >= PARALLEL_LOOKUPS_MIN_ENTRIES
            && crate::search::second_thread_allowed()
        {
            std::thread::scope(|scope| {
                let beside = std::thread::Builder::new()
                    .name("openclaw-lookups".into())
                    .spawn_scoped(scope, lookups);
                let index = index();
                let lookups = match beside {
                    Ok(thread) => thread
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                    // No thread to be had (a process limit): here, after the index.
                    Err(_) => lookups(),
                };
                Ok::<_, Error>((index?, lookups))
            })?
        } else {
            (index()?, lookups())
        };
        if validated.entries.len() >= BACKGROUND_RELEASE_MIN_ENTRIES {
            let _ = empty_data();
        }
        let digests = validated.entries.iter().map(ToolEntry::digest).collect();
        let record_entries = validated.record_entries(records.len());
        let native_bytes = estimate_native_bytes(
            validated.entries.len(),
            validated.entries.iter(),
            records.iter().map(|r| r.text.len()).sum(),
        );
        Ok(CatalogData {
            entries: validated.entries,
            digests,
            index,
            names: OnceLock::new(),
            by_digest: OnceLock::new(),
            fingerprint,
            name_order,
            direct_only: validated.direct_only,
            control_named: validated.control_named,
            excluded: validated.excluded,
            repaired: validated.repaired,
            records,
            origins,
            record_entries,
            adopted: Vec::new(),
            vectors: Default::default(),
            prerequisites,
            index_cache,
            native_bytes,
        })
    }

    /// The ordinal of the entry with content digest `digest`, if this data holds one.
    pub(crate) fn ordinal_of_digest(&self, digest: &EntryDigest) -> Option<usize> {
        let table = self.by_digest.get_or_init(|| {
            let mut table: Vec<(EntryDigest, u32)> = self
                .digests
                .iter()
                .enumerate()
                .map(|(o, d)| (*d, o as u32))
                .collect();
            table.sort_unstable();
            table
        });
        let at = table.partition_point(|(d, _)| d < digest);
        table
            .get(at)
            .filter(|(d, _)| d == digest)
            .map(|&(_, o)| o as usize)
    }

    /// The name trigrams ("did you mean"), built on first use.
    pub(crate) fn names(&self) -> &NameIndex {
        self.names.get_or_init(|| NameIndex::build(&self.entries))
    }

    /// Builds a large catalog's name trigrams on a thread of their own, at a
    /// low priority (the gateway's event loop keeps its core), so that a
    /// first "did you mean" finds them ready (a small catalog's are built
    /// when first needed, in well under a millisecond).
    pub(crate) fn prepare_names(data: &Arc<CatalogData>) {
        if data.entries.len() < PARALLEL_LOOKUPS_MIN_ENTRIES || data.names.get().is_some() {
            return;
        }
        let weak = Arc::downgrade(data);
        let _ = std::thread::Builder::new()
            .name("openclaw-names".into())
            .spawn(move || {
                crate::search::semantic::lower_priority();
                if let Some(data) = weak.upgrade() {
                    data.names();
                }
            });
    }

    /// The ordinal of the entry with this id.
    pub fn ordinal_of_id(&self, id: &str) -> Option<usize> {
        self.entries
            .binary_search_by(|e| e.id.as_str().cmp(id))
            .ok()
    }

    /// The ordinals of the entries named `name`, in the directory's order
    /// (owner, id): one run of `name_order`.
    pub fn ordinals_named(&self, name: &str) -> &[u32] {
        let name_of = |o: &u32| self.entries[*o as usize].name.as_str();
        let start = self.name_order.partition_point(|o| name_of(o) < name);
        let len = self.name_order[start..].partition_point(|o| name_of(o) == name);
        &self.name_order[start..start + len]
    }

    /// The record index (in the derived numbering `record_map` gives) of the
    /// record `entry` came from: the last of its owner's records with its
    /// name. Only read when an added record replaces it, so the scan is rare.
    fn record_index_of(&self, entry: &ToolEntry, record_map: &[Option<usize>]) -> Option<usize> {
        (0..self.records.len()).rev().find_map(|i| {
            let (source, owner) = self.origins.get(i)?.as_ref()?;
            if *source != entry.source || **owner != *entry.owner {
                return None;
            }
            let parsed = super::records::parse_spans(std::iter::once(&*self.records[i].text));
            let named = parsed.first()?.parsed.as_ref().ok()?.0.name.as_deref()
                == Some(entry.name.as_str());
            named
                .then(|| record_map.get(i).copied().flatten())
                .flatten()
        })
    }

    /// The owner record `index` belongs to: the source and owner it names, or
    /// (a record that could not be read) the owner it was sent under.
    pub(crate) fn owner_of(&self, index: usize) -> Option<(Source, &str)> {
        match &self.origins[index] {
            Some((s, o)) => Some((*s, o)),
            None => self
                .adopted
                .binary_search_by_key(&index, |(i, _, _)| *i)
                .ok()
                .map(|at| (self.adopted[at].1, &*self.adopted[at].2)),
        }
    }

    /// Whether record `index` belongs to `source`'s `owner` ([`CatalogData::owner_of`]).
    pub(crate) fn owned_by(&self, index: usize, source: Source, owner: &str) -> bool {
        self.owner_of(index) == Some((source, owner))
    }

    /// This data with the records of `replaced` (one source's owner; `None`:
    /// none) left out and the `added` records after the kept ones: equal to a
    /// full build of that record list, but only the added records are parsed,
    /// validated and indexed. Kept entries keep their order (remapped to their
    /// new ordinals); the search index shares its parts with this one. With
    /// `repair`, added records are repaired as in a full build; data holding
    /// a renamed or re-owned tool is built again in full instead (its ids
    /// depend on every other record's), keeping the adopted records.
    pub fn derive(
        &self,
        replaced: Option<(Source, &str)>,
        added: Vec<Arc<StoredRecord>>,
        strict: bool,
        repair: bool,
    ) -> Result<CatalogData> {
        let owned =
            |source: Source, owner: &str| replaced.is_some_and(|(s, o)| s == source && o == owner);
        let mut record_map: Vec<Option<usize>> = Vec::with_capacity(self.records.len());
        let mut records: Vec<Arc<StoredRecord>> =
            Vec::with_capacity(self.records.len() + added.len());
        let mut origins = Vec::with_capacity(self.records.len() + added.len());
        for (index, (record, origin)) in self.records.iter().zip(&self.origins).enumerate() {
            if replaced.is_some_and(|(s, o)| self.owned_by(index, s, o)) {
                record_map.push(None);
                continue;
            }
            record_map.push(Some(records.len()));
            records.push(Arc::clone(record));
            origins.push(origin.clone());
        }
        let mut adopted: Vec<(usize, Source, Box<str>)> = self
            .adopted
            .iter()
            .filter_map(|(index, s, o)| record_map[*index].map(|index| (index, *s, o.clone())))
            .collect();
        let kept_records = records.len();
        let mut parsed = super::records::parse_spans(added.iter().map(|r| &*r.text));
        for record in &mut parsed {
            record.index += kept_records;
        }
        origins.extend(parsed.iter().map(|r| {
            r.parsed
                .as_ref()
                .ok()
                .and_then(|(record, _)| origin(record))
        }));
        // A record of the replaced owner that could not be read is still that
        // owner's: its next update removes it (else it would outlive the server).
        if let Some((source, owner)) = replaced {
            adopted.extend(
                (kept_records..origins.len())
                    .filter(|&i| origins[i].is_none())
                    .map(|i| (i, source, Box::from(owner))),
            );
        }
        records.extend(added);
        if repair && !repair::all_local(&self.repaired) {
            return CatalogData::rebuilt(records, origins, adopted, strict);
        }
        if strict {
            super::reject_unknown_fields(&mut parsed);
        }
        // The replaced owner's entries are one run of the id order (ids start
        // with `<source>:<owner>:`): only that run is read to leave them out.
        let run = replaced.map_or(0..0, |(s, o)| {
            let (start, end) = super::owner_run(self, s, o);
            start..end
        });
        let kept_entry =
            |o: usize| !run.contains(&o) || !owned(self.entries[o].source, &self.entries[o].owner);
        // The ids the kept records take, for a rename among the added ones.
        let kept_ids = || {
            let mut ids: Vec<String> = (0..self.entries.len())
                .filter(|&o| kept_entry(o))
                .map(|o| self.entries[o].id.clone())
                .collect();
            ids.extend(
                self.direct_only
                    .iter()
                    .chain(&self.control_named)
                    .filter(|d| !owned(d.source, &d.owner))
                    .map(|d| d.id.clone()),
            );
            ids.extend(
                self.excluded
                    .iter()
                    .filter(|x| record_map.get(x.index).copied().flatten().is_some())
                    .filter_map(|x| repair::natural_id(&self.records.get(x.index)?.text)),
            );
            ids
        };
        let input = repair.then(|| {
            RepairInput::new(&records[kept_records..], kept_records).with_outside(&kept_ids)
        });
        let fresh = validate_records(parsed, strict, input)?;
        // Kept repairs, renumbered; those of a tool an added record replaces are dropped below.
        let mut repaired: Vec<RepairedTool> = self
            .repaired
            .iter()
            .filter_map(|r| {
                record_map
                    .get(r.index)
                    .copied()
                    .flatten()
                    .map(|index| RepairedTool { index, ..r.clone() })
            })
            .collect();
        let mut replaced_ids: Vec<String> = Vec::new();

        // Merge the kept entries (in id order) with the fresh ones (in id order).
        let capacity = self.entries.len() + fresh.entries.len();
        let mut entries: Vec<ToolEntry> = Vec::with_capacity(capacity);
        let mut digests: Vec<EntryDigest> = Vec::with_capacity(capacity);
        let mut reused: Vec<Option<u32>> = Vec::with_capacity(capacity);
        let mut new_of_old = vec![GONE; self.entries.len()];
        // Ordinals of entries made for this version (not a kept or reused one).
        let mut created: Vec<u32> = Vec::with_capacity(fresh.entries.len());
        let mut fresh_ordinals: Vec<u32> = Vec::with_capacity(fresh.entries.len());
        let mut excluded: Vec<ExcludedTool> = self
            .excluded
            .iter()
            .filter_map(|x| {
                record_map
                    .get(x.index)
                    .copied()
                    .flatten()
                    .map(|index| ExcludedTool { index, ..x.clone() })
            })
            .collect();
        excluded.extend(fresh.excluded);
        let mut old = (0..self.entries.len())
            .filter(|&o| kept_entry(o))
            .peekable();
        // Where the next fresh entry goes in the old id order (binary search):
        // the old entries before it are taken without reading their ids.
        let mut place: Option<usize> = None;
        let mut new = fresh
            .entries
            .into_iter()
            .zip(fresh.entry_records)
            .peekable();
        let mut record_entries = vec![GONE; records.len()];
        for (old_index, new_index) in record_map.iter().enumerate() {
            if let Some(new_index) = new_index {
                record_entries[*new_index] = self.record_entries[old_index];
            }
        }
        loop {
            let take_old = match (old.peek(), new.peek()) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(&o), Some((entry, _)))
                    if o < *place.get_or_insert_with(|| {
                        self.entries.partition_point(|e| e.id < entry.id)
                    }) =>
                {
                    true
                }
                (Some(&o), Some((entry, index))) => match self.entries[o].id.cmp(&entry.id) {
                    std::cmp::Ordering::Less => true,
                    std::cmp::Ordering::Greater => false,
                    // The later record (the added one) wins, as in a full build.
                    std::cmp::Ordering::Equal => {
                        let reason = duplicate_reason(&entry.id);
                        let replaced = &self.entries[o];
                        let old_index = self
                            .record_index_of(replaced, &record_map)
                            .unwrap_or(*index);
                        if strict {
                            return Err(Error::invalid_catalog(format!(
                                "tool #{old_index}: {reason}"
                            )));
                        }
                        excluded.push(ExcludedTool {
                            index: old_index,
                            name: Some(replaced.name.clone()),
                            code: ExclusionCode::DuplicateId,
                            field: None,
                            reason,
                        });
                        if !repaired.is_empty() {
                            replaced_ids.push(replaced.id.clone());
                        }
                        old.next();
                        continue;
                    }
                },
            };
            let ordinal = entries.len() as u32;
            if take_old {
                let o = old.next().expect("peeked");
                new_of_old[o] = ordinal;
                entries.push(self.entries[o].clone());
                digests.push(self.digests[o]);
                reused.push(Some(o as u32));
            } else {
                let (entry, index) = new.next().expect("peeked");
                record_entries[index] = ordinal;
                place = None;
                // A replaced tool whose text is unchanged keeps its indexed doc;
                // one whose content is unchanged keeps its entry too (with its
                // compiled validators and hints).
                let twin = self
                    .ordinal_of_id(&entry.id)
                    .filter(|&o| same_indexed_text(&self.entries[o], &entry));
                reused.push(twin.map(|o| o as u32));
                fresh_ordinals.push(ordinal);
                digests.push(entry.digest());
                match twin
                    .map(|o| &self.entries[o])
                    .filter(|old| old.digest() == entry.digest())
                {
                    Some(old) => entries.push(old.clone()),
                    None => {
                        created.push(ordinal);
                        entries.push(entry);
                    }
                }
            }
        }
        excluded.sort_by_key(|e| e.index);
        // Kept records held their old ordinals: renumbered (an added record's is new already).
        for ordinal in record_entries.iter_mut().take(kept_records) {
            if *ordinal != GONE {
                *ordinal = new_of_old[*ordinal as usize];
            }
        }
        if !replaced_ids.is_empty() {
            replaced_ids.sort_unstable();
            repaired.retain(|r| replaced_ids.binary_search(&r.id).is_err());
        }
        // Added records come after the kept ones: the order stays by record index.
        repaired.extend(fresh.repaired);
        let direct_only: Vec<Arc<DirectOnlyTool>> = self
            .direct_only
            .iter()
            .filter(|d| !owned(d.source, &d.owner))
            .cloned()
            .chain(fresh.direct_only)
            .collect();
        let control_named: Vec<Arc<DirectOnlyTool>> = self
            .control_named
            .iter()
            .filter(|d| !owned(d.source, &d.owner))
            .cloned()
            .chain(fresh.control_named)
            .collect();
        let fingerprint = fingerprint(&digests, &excluded, &repaired, &direct_only, &control_named);

        let index = self.index.derive(&entries, &reused)?;
        // Derived only if built; else built when first needed, as after a full build.
        let names = match self.names.get() {
            Some(names) => {
                OnceLock::from(names.derive(&self.entries, &new_of_old, &entries, &fresh_ordinals))
            }
            None => OnceLock::new(),
        };
        // Pairs stay within a server: only the servers holding fresh entries are paired again.
        let prerequisites = self
            .prerequisites
            .derive(&entries, &new_of_old, &fresh_ordinals);
        let order = |a: &u32, b: &u32| {
            crate::entry::directory_order(&entries[*a as usize], &entries[*b as usize])
        };
        let mut fresh_by_name = fresh_ordinals.clone();
        fresh_by_name.sort_unstable_by(order);
        let kept_by_name = self
            .name_order
            .iter()
            .map(|&o| new_of_old[o as usize])
            .filter(|&o| o != GONE)
            .collect::<Vec<u32>>();
        let name_order = merge_sorted(&kept_by_name, fresh_by_name, order);
        let created = created.iter().map(|&o| &entries[o as usize]);
        let native_bytes = estimate_native_bytes(
            entries.len(),
            created,
            records[kept_records..].iter().map(|r| r.text.len()).sum(),
        );
        Ok(CatalogData {
            entries,
            digests,
            index,
            names,
            by_digest: OnceLock::new(),
            fingerprint,
            name_order,
            direct_only,
            control_named,
            excluded,
            repaired,
            records: records.into(),
            origins,
            record_entries,
            adopted,
            vectors: Default::default(),
            prerequisites,
            index_cache: IndexCacheOutcome::of(IndexCacheState::Derived),
            native_bytes,
        })
    }

    /// A full `repair` build of `records` (a derived version's list), with
    /// the derived version's `origins` and `adopted` records.
    fn rebuilt(
        records: Vec<Arc<StoredRecord>>,
        origins: Vec<Option<(Source, Arc<str>)>>,
        adopted: Vec<(usize, Source, Box<str>)>,
        strict: bool,
    ) -> Result<CatalogData> {
        let mut parsed = super::records::parse_spans(records.iter().map(|r| &*r.text));
        if strict {
            super::reject_unknown_fields(&mut parsed);
        }
        let validated = validate_records(parsed, strict, Some(RepairInput::new(&records, 0)))?;
        let digests: Vec<EntryDigest> = validated.entries.iter().map(ToolEntry::digest).collect();
        let fingerprint = fingerprint(
            &digests,
            &validated.excluded,
            &validated.repaired,
            &validated.direct_only,
            &validated.control_named,
        );
        let mut data = CatalogData::build(validated, fingerprint, records.into(), origins, None)?;
        data.adopted = adopted;
        Ok(data)
    }

    pub(crate) fn input_hint(&self, ordinal: usize) -> &str {
        let entry = &self.entries[ordinal];
        entry.lazy().input_hint.get_or_init(|| {
            if entry.is_trusted() {
                schema::input_hint(entry.input_schema.as_deref())
            } else {
                "unknown".to_string()
            }
        })
    }

    pub(crate) fn output_hint(&self, ordinal: usize) -> Option<&str> {
        let entry = &self.entries[ordinal];
        entry
            .lazy()
            .output_hint
            .get_or_init(|| {
                entry
                    .output_schema
                    .as_deref()
                    .filter(|_| entry.is_trusted())
                    .and_then(schema::output_hint)
            })
            .as_deref()
    }

    pub(crate) fn validator(
        &self,
        ordinal: usize,
    ) -> std::result::Result<Arc<CompiledSchema>, Error> {
        let entry = &self.entries[ordinal];
        entry
            .lazy()
            .validator
            .get_or_init(|| {
                let schema = entry
                    .input_schema
                    .as_deref()
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({}));
                CompiledSchema::compile(&schema).map(Arc::new)
            })
            .clone()
    }
}
