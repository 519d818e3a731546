//! Owners whose tools are known but cannot run: marked per owner, left out of search.

use std::sync::Arc;

use super::data::CatalogData;
use super::search::check_query;
use super::selector::SourceSelector;
use super::{Catalog, Source};
use crate::error::Result;

/// Owners whose tools are known but cannot run (a disconnected MCP server):
/// left out of search, and a call fails closed with TOOL_UNAVAILABLE.
///
/// Entries are in id order and an id starts with `<source>:<owner>:`, so an
/// owner's tools are one run of ordinals, found by binary search: marking an
/// owner costs O(log n + owners), a lookup O(log owners), whatever the
/// number of unavailable owners.
/// (source, owner, reason) of each unavailable owner, in the order they were marked.
pub(super) type UnavailableOwners = Arc<[(Source, Arc<str>, Arc<str>)]>;

#[derive(Clone, Default)]
pub(super) struct Unavailable {
    pub(super) owners: UnavailableOwners,
    /// Non-empty runs of ordinals `[start, end)` of this data's entries and
    /// the index of their owner in `owners`, by `start` (runs never overlap).
    pub(super) runs: Arc<[(u32, u32, u32)]>,
}

impl Unavailable {
    pub(super) fn of(owners: UnavailableOwners, data: &CatalogData) -> Unavailable {
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
    pub(super) fn without(&self, selector: &SourceSelector) -> UnavailableOwners {
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
pub(super) fn owner_run(data: &CatalogData, source: Source, owner: &str) -> (usize, usize) {
    let prefix = format!("{}:{owner}:", source.as_str());
    id_run(&data.entries, &prefix, |e| e.id.as_str())
}

/// The run of `items` (in id order) whose ids start with `prefix`: two binary
/// searches, so marking an owner costs O(log n) whatever the catalog's size.
pub(super) fn id_run<T>(items: &[T], prefix: &str, id: impl Fn(&T) -> &str) -> (usize, usize) {
    let start = items.partition_point(|item| id(item) < prefix);
    let end = start + items[start..].partition_point(|item| id(item).starts_with(prefix));
    (start, end)
}

impl Catalog {
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
}
