//! A catalog as a view of built data: its mask, accessors, `restrict` and telemetry.

use std::sync::Arc;

use super::build::BuildSettings;
use super::data::{CatalogData, DirectOnlyTool, ExcludedTool};
use super::hits::SearchHit;
use super::search::SearchLimits;
use super::unavailable::Unavailable;
use super::{Catalog, Source, ToolEntry};
use crate::error::{Error, Result};
use crate::telemetry::{CatalogTelemetry, Counters, SourceCounts};

/// Records kept out of the catalog whose tools may still be shown as given,
/// narrowed by the view's policy (and `restrict`).
#[derive(Clone)]
pub(super) struct Uncataloged {
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

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("size", &self.allowed_count)
            .field("fingerprint", &self.fingerprint)
            .finish()
    }
}

impl Catalog {
    pub(super) fn with_policy(
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
            record_order: None,
        }
    }

    /// INVALID_REQUEST with `message` on a restricted view: its narrowing is
    /// per turn, not a catalog to derive versions from.
    pub(super) fn refuse_restricted(&self, message: &str) -> Result<()> {
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

    /// Allowed by policy and available now: what a search may return.
    pub(crate) fn is_searchable(&self, ordinal: usize) -> bool {
        self.is_allowed(ordinal) && self.unavailable_reason(ordinal).is_none()
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

    /// The compact hit of an allowed entry.
    pub fn hit(&self, ordinal: usize) -> Option<SearchHit> {
        self.is_allowed(ordinal).then(|| self.data.hit(ordinal))
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

    /// Per record this catalog was built from (in the order given), the id
    /// it is indexed under (a repaired record's new id), or `None`: not
    /// indexed (see [`Catalog::excluded`]), direct-only, or not in this view.
    pub fn record_ids(&self) -> impl ExactSizeIterator<Item = Option<&str>> + '_ {
        let order = self.record_order.as_deref();
        (0..self.data.record_entries.len()).map(move |position| {
            let index = order.map_or(position, |order| order[position] as usize);
            let ordinal = self.data.record_entries[index];
            let ordinal = (ordinal != crate::entry::GONE).then_some(ordinal as usize)?;
            self.is_allowed(ordinal)
                .then(|| self.data.entries[ordinal].id.as_str())
        })
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn data(&self) -> &CatalogData {
        &self.data
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
        view.record_order = self.record_order.clone();
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
