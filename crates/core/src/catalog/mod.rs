//! The run's tool catalog: validated entries in id order, the policy mask, the
//! search index, and the operations the model reaches (search, describe,
//! argument validation). A `Catalog` is a cheap view: clones and `restrict`ed
//! views share the built data and the telemetry counters.
//!
//! `impl Catalog` is split by job, one file each:
//! - building: [`options`] (what a caller asks), [`build`] (the settings a catalog keeps;
//!   records → data, cached), [`derive`] (append, replace an owner), [`update`] (a new
//!   run's whole list), [`slots`] (the same from stored record ids);
//! - reading: [`view`] (mask, accessors, restrict), [`lookup`] and [`exact`] (ids
//!   and names), [`describe`] (descriptions, argument and result checks);
//! - searching: [`search`] (the one search), [`batch`], [`hybrid`] (whether a
//!   search is hybrid, tool vectors), [`learning`], [`audit`];
//! - owners: [`selector`] (a source's owner, claiming its records),
//!   [`unavailable`] (owners whose tools cannot run);
//! - memory: [`memory`], [`release`], [`cache`], [`store`].
//!
//! The built data: [`data`] (entries and index), [`records`] (text → records),
//! [`policy`], [`hits`], [`refusal`].

mod audit;
mod batch;
mod build;
mod cache;
mod data;
mod derive;
mod describe;
mod exact;
mod hits;
mod hybrid;
mod learning;
mod lookup;
mod memory;
mod options;
mod policy;
mod records;
mod refusal;
mod release;
mod repair;
mod search;
mod selector;
mod slots;
pub mod store;
pub(crate) mod text;
mod unavailable;
mod update;
mod view;

use std::sync::Arc;

pub use crate::entry::CONTROL_TOOL_NAMES;
pub use crate::entry::{safe_server_name, EntryFields, McpInfo, Source, ToolEntry, ToolRecord};
pub use audit::{AuditOptions, CatalogAudit, Problem, ToolAudit, FINDABLE_RANK};
pub use batch::{BatchQuery, BatchRequest, BatchResult, BatchResultGroup};
pub use data::{CatalogData, DirectOnlyTool, ExcludedTool};
pub use describe::ArgsValidation;
pub use hits::{SearchHit, ToolDescription};
pub use hybrid::{CatalogRanking, QueryVectorSet};
pub use learning::{LearnedPart, Outcome, OutcomeRecorded, DEFAULT_SCOPE};
pub use lookup::LookupStyle;
pub use memory::{
    host_held, memory_in_use, native_memory, release_unused, CacheMemory, NativeMemory,
    ReleasedMemory,
};
pub use options::{CatalogOptions, RankingMode, DEFAULT_CORE_TOOLS};
pub use policy::{CompiledPolicy, Policy, PolicyLayer};
pub use records::{
    parse_catalog_text, parse_spans, record_spans, unreadable_record, RawRecord, KNOWN_FIELDS,
    UNREADABLE, UNREADABLE_FIELDS,
};
pub use refusal::{ExclusionCode, Refusal};
pub use repair::RepairedTool;
pub use search::{Found, SearchLimits, SearchOptions};
pub use selector::SourceSelector;
pub use slots::FromSlots;
pub use text::printable;

// Named here for the data's derivations (`super::…` in data.rs); private, so the file graph
// sees an import of this module, not of the file that defines them.
use build::reject_unknown_fields;
use selector::names_server;
use unavailable::owner_run;

use crate::telemetry::Counters;
use build::BuildSettings;
use unavailable::Unavailable;
use view::Uncataloged;

/// A view of built catalog data (see the module docs for where each job lives). Defined here,
/// not in `view`: every file of the folder implements it, and naming it from the folder's root
/// keeps their imports of each other one way (tests/layers.rs).
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
    /// Where each record, in the order the caller listed them, sits in the
    /// data's records, when an update derived the data owner by owner (in
    /// another order); `None`: the same order.
    record_order: Option<Arc<[u32]>>,
}

#[cfg(test)]
mod tests;
