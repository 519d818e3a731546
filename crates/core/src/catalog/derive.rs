//! A catalog's next versions: tools appended, or one owner's replaced (only new records parsed).

use std::sync::Arc;

use super::build::within_tool_cap;
use super::data::CatalogData;
use super::records::record_spans;
use super::repair;
use super::selector::SourceSelector;
use super::unavailable::{Unavailable, UnavailableOwners};
use super::{cache, store, Catalog, Source};
use crate::error::Result;

impl Catalog {
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
        let kept = self.data.records.len();
        let records: Vec<_> = self.data.records.iter().cloned().chain(new).collect();
        let data = self.derived_data(None, records, added)?;
        let mut next = self.next_version(data, Arc::clone(&self.unavailable.owners));
        // This catalog's records in its caller's order, then the added ones.
        next.record_order = self.record_order.as_ref().map(|order| {
            let appended = kept as u32..(kept + added) as u32;
            order.iter().copied().chain(appended).collect()
        });
        Ok(next)
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

    pub(super) fn with_claimed_source(
        &self,
        selector: &SourceSelector,
        new: Vec<Arc<store::StoredRecord>>,
    ) -> Result<Catalog> {
        let data = &self.data;
        let added = new.len();
        let kept: Vec<usize> = (0..data.records.len())
            .filter(|&i| !data.owned_by(i, selector.source, &selector.owner))
            .collect();
        let records: Vec<_> = kept
            .iter()
            .map(|&i| Arc::clone(&data.records[i]))
            .chain(new)
            .collect();
        within_tool_cap(records.len(), "would have")?;
        let derived =
            self.derived_data(Some((selector.source, &selector.owner)), records, added)?;
        // Fresh tools from the owner: available again.
        let mut next = self.next_version(derived, self.unavailable.without(selector));
        // The other records in this catalog's caller's order, then the owner's new ones.
        next.record_order = self.record_order.as_ref().map(|order| {
            let mut new_index = vec![u32::MAX; data.records.len()];
            for (at, &i) in kept.iter().enumerate() {
                new_index[i] = at as u32;
            }
            let others = order.iter().map(|&i| new_index[i as usize]);
            let fresh = kept.len() as u32..(kept.len() + added) as u32;
            others.filter(|&at| at != u32::MAX).chain(fresh).collect()
        });
        Ok(next)
    }

    /// This catalog's next version over `data`: same policy, strictness,
    /// limits and counter scope, `unavailable` owners kept out, tool vectors
    /// of the tools it keeps reused.
    pub(super) fn next_version(
        &self,
        data: Arc<CatalogData>,
        unavailable: UnavailableOwners,
    ) -> Catalog {
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
            .filter(|d| d.adopted == derived.adopted && d.record_entries == derived.record_entries)
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
}
