//! A catalog's next version from the whole tool list of a new run (a gateway
//! passes every tool again, each run): derived owner by owner from this one
//! when few owners changed (only their tools are parsed and indexed), a full
//! build with this catalog's settings otherwise. Either way it equals a full
//! build of the list.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::build::within_tool_cap;
use super::data::origin_of;
use super::repair;
use super::selector::ClaimedFields;
use super::store::{self, Digest, SlotId, StoredRecord};
use super::unavailable::Unavailable;
use super::{record_spans, Catalog, FromSlots, SourceSelector};
use crate::entry::Source;
use crate::error::Result;

/// Derived owner by owner only when at most this many owners changed ...
const MAX_CHANGED_OWNERS: usize = 8;
/// ... and their tools (before and after) are at most a quarter of the new list:
/// past that, one full build costs less than the derivations.
const MAX_CHANGED_SHARE_DENOMINATOR: usize = 4;

/// An owner (one source's MCP server, plugin, ...), borrowed from the catalog's
/// data or from a new record's fields.
type Owner<'a> = (Source, &'a str);

impl Catalog {
    /// This catalog's next version holding exactly the tools in `text` (same
    /// formats as [`Catalog::from_json_text`]): same policy, strictness,
    /// limits and counter scope; owners marked unavailable stay so. Equal
    /// to a full build of the tools (entries, fingerprint, ranking, and the
    /// `excluded` positions, which are positions in `text`).
    pub fn update(&self, text: &str) -> Result<Catalog> {
        self.update_stored(store::intern(record_spans(text)?))
    }

    /// [`Catalog::update`] of the records `ids` name.
    pub fn update_slots(&self, ids: &[SlotId]) -> Result<FromSlots> {
        match store::find(ids) {
            Ok(records) => self.update_stored(records).map(FromSlots::Built),
            Err(missing) => Ok(FromSlots::Missing(missing)),
        }
    }

    /// [`Catalog::update`] of records already stored.
    pub fn update_stored(&self, records: Vec<Arc<StoredRecord>>) -> Result<Catalog> {
        self.refuse_restricted("update the catalog itself, not a restricted view")?;
        within_tool_cap(records.len(), "has")?;
        if let Some(next) = self.derived_update(&records) {
            return Ok(next);
        }
        let data = Catalog::data_for_records(records, None, &self.settings)?;
        Ok(self.next_version(data, Arc::clone(&self.unavailable.owners)))
    }

    /// The update derived owner by owner, or `None` when a full build is the
    /// better (or the only exact) way.
    fn derived_update(&self, records: &[Arc<StoredRecord>]) -> Option<Catalog> {
        let changed = self.changed_owners(records)?;
        let mut next = self.clone();
        for (selector, list) in changed {
            // A renamed or re-owned tool makes each later version a full build: one is enough.
            if !repair::all_local(next.repaired()) {
                return None;
            }
            next = next.with_claimed_source(&selector, list).ok()?;
        }
        next.unavailable = Unavailable::of(Arc::clone(&self.unavailable.owners), &next.data);
        // Exclusions and repairs are numbered by a full build's positions; and
        // a record placed with another owner than the build read would be lost
        // or kept twice: all are left to a full build.
        if !next.excluded().is_empty()
            || !repair::same_positions(next.repaired(), &next.data.records, records)
        {
            return None;
        }
        // Derived owner by owner, the data lists each owner's records together: when that
        // is not the caller's order, each record's place in it (`record_ids` answers in
        // the caller's order).
        let built = next.data.records.iter().map(|r| r.digest);
        next.record_order = if built.eq(records.iter().map(|r| r.digest)) {
            None
        } else {
            Some(Arc::from(placement(&next.data.records, records)?))
        };
        Some(next)
    }

    /// Per owner whose tools changed, its tools in `records` (in order);
    /// `None` when too much changed or a record's owner is not plain.
    fn changed_owners(
        &self,
        records: &[Arc<StoredRecord>],
    ) -> Option<Vec<(SourceSelector, Vec<Arc<StoredRecord>>)>> {
        let data = &self.data;
        let mut old: HashMap<Digest, usize> = HashMap::with_capacity(data.records.len());
        for (index, record) in data.records.iter().enumerate() {
            if old.insert(record.digest, index).is_some() {
                return None; // the same tool twice: its duplicate's exclusion is positional
            }
        }
        let old_owners: Vec<Owner<'_>> = (0..data.records.len())
            .map(|index| data.owner_of(index))
            .collect::<Option<_>>()?;
        // Each record: where it was (`Ok(index)`), or the owner fields of a new one (`Err`).
        let mut kept = vec![false; data.records.len()];
        let mut placed: Vec<std::result::Result<usize, ClaimedFields>> =
            Vec::with_capacity(records.len());
        for record in records {
            placed.push(match old.get(&record.digest) {
                Some(&index) if !std::mem::replace(&mut kept[index], true) => Ok(index),
                Some(_) => return None,
                None => Err(serde_json::from_str(&record.text).ok()?),
            });
        }
        let owners: Vec<Owner<'_>> = placed
            .iter()
            .map(|place| match place {
                Ok(index) => Some(old_owners[*index]),
                Err(fields) => new_record_owner(fields),
            })
            .collect::<Option<_>>()?;
        let mut changed: BTreeMap<Owner<'_>, usize> = BTreeMap::new();
        for (place, owner) in placed.iter().zip(&owners) {
            if place.is_err() {
                changed.entry(*owner).or_default();
            }
        }
        for (owner, _) in old_owners.iter().zip(&kept).filter(|(_, kept)| !**kept) {
            changed.entry(*owner).or_default();
        }
        if changed.len() > MAX_CHANGED_OWNERS {
            return None;
        }
        // The cost of the derivations: each changed owner's tools before and after.
        for owner in &old_owners {
            if let Some(count) = changed.get_mut(owner) {
                *count += 1;
            }
        }
        let mut lists: BTreeMap<Owner<'_>, Vec<Arc<StoredRecord>>> =
            changed.keys().map(|o| (*o, Vec::new())).collect();
        for (record, owner) in records.iter().zip(&owners) {
            if let Some(list) = lists.get_mut(owner) {
                list.push(Arc::clone(record));
            }
        }
        let cost: usize =
            changed.values().sum::<usize>() + lists.values().map(Vec::len).sum::<usize>();
        if cost * MAX_CHANGED_SHARE_DENOMINATOR > records.len() {
            return None;
        }
        Some(
            lists
                .into_iter()
                .map(|((source, owner), list)| {
                    let selector = SourceSelector {
                        source,
                        owner: owner.to_string(),
                    };
                    (selector, list)
                })
                .collect(),
        )
    }
}

/// The owner a build reads from a new record's fields (`data::origin`'s
/// defaults); `None` when a field is not a plain string.
fn new_record_owner(fields: &ClaimedFields) -> Option<Owner<'_>> {
    origin_of(plain(&fields.source)?, plain(&fields.owner)?)
}

/// A field's text: `Some(None)` when it is absent, `None` when it is not a string.
fn plain(field: &Option<Value>) -> Option<Option<&str>> {
    match field {
        None => Some(None),
        Some(Value::String(text)) => Some(Some(text)),
        Some(_) => None,
    }
}

/// Whether two record lists hold the same records, in any order.
/// Where each of `given` sits in `built` (the same records, in another
/// order), or `None` when they are not the same records.
fn placement(built: &[Arc<StoredRecord>], given: &[Arc<StoredRecord>]) -> Option<Vec<u32>> {
    if built.len() != given.len() {
        return None;
    }
    // Equal texts are interchangeable: each takes the first free place.
    let mut places: HashMap<Digest, Vec<u32>> = HashMap::with_capacity(built.len());
    for (index, record) in built.iter().enumerate().rev() {
        places.entry(record.digest).or_default().push(index as u32);
    }
    given
        .iter()
        .map(|record| places.get_mut(&record.digest)?.pop())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::catalog::{CatalogOptions, SearchOptions};

    fn server_tool(owner: &str, name: &str, description: &str) -> Value {
        json!({ "source": "mcp", "owner": owner, "name": name, "description": description })
    }

    /// Twenty servers of twenty tools and six core tools.
    fn base_tools() -> Vec<Value> {
        let mut tools = Vec::new();
        for server in 0..20 {
            for t in 0..20 {
                tools.push(server_tool(
                    &format!("server{server}"),
                    &format!("op{t}_on_s{server}"),
                    &format!("Operation {t} of server {server}: reads records and exports reports"),
                ));
            }
        }
        for t in 0..6 {
            tools.push(json!({ "name": format!("core{t}"), "description": format!("core tool {t} edits files") }));
        }
        tools
    }

    fn text(tools: &[Value]) -> String {
        Value::from(tools.to_vec()).to_string()
    }

    fn uncached() -> CatalogOptions {
        serde_json::from_value(json!({ "cache": false })).unwrap()
    }

    /// The update and a full build of the same tools agree on everything a caller reads.
    fn assert_equals_full_build(updated: &Catalog, tools: &[Value]) {
        let full = Catalog::from_json_text(&text(tools), &uncached()).unwrap();
        assert_eq!(updated.fingerprint(), full.fingerprint());
        assert_eq!(updated.size(), full.size());
        let ids = |c: &Catalog| c.entries().map(|e| e.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(updated), ids(&full));
        let excluded = |c: &Catalog| {
            c.excluded()
                .iter()
                .map(|e| serde_json::to_value(e).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(excluded(updated), excluded(&full));
        // Each record, in the order given, reports the id it is indexed under.
        let record_ids = |c: &Catalog| {
            c.record_ids()
                .map(|id| id.map(str::to_string))
                .collect::<Vec<_>>()
        };
        assert_eq!(record_ids(updated), record_ids(&full));
        for query in [
            "export reports of server 3",
            "edit files",
            "op7 on s9",
            "records",
        ] {
            let ranked = |c: &Catalog| {
                c.search(query, &SearchOptions::hits(Some(20.0)))
                    .unwrap()
                    .into_iter()
                    .map(|h| h.id)
                    .collect::<Vec<_>>()
            };
            assert_eq!(ranked(updated), ranked(&full), "{query}");
        }
    }

    #[test]
    fn record_ids_follow_the_callers_order_through_derived_versions() {
        let base = Catalog::from_json_text(&text(&base_tools()), &uncached()).unwrap();
        // A new server listed first, and the core tools before the servers: derived owner by owner.
        let mut tools = vec![server_tool(
            "first",
            "lead",
            "A new server's tool, listed first",
        )];
        tools.extend(base_tools()[400..].iter().cloned());
        tools.extend(base_tools()[..400].iter().cloned());
        let next = base.update(&text(&tools)).unwrap();
        assert!(next.record_order.is_some(), "derived in another order");
        assert_equals_full_build(&next, &tools);
        // Its next versions keep that order, then list the new records.
        let appended = next
            .append(&text(&[
                json!({ "name": "appended", "description": "added last" }),
            ]))
            .unwrap();
        let ids: Vec<_> = appended.record_ids().collect();
        assert_eq!(ids[0], Some("mcp:first:lead"));
        assert_eq!(ids[1], Some("openclaw:core:core0"));
        assert_eq!(
            ids.last().copied().flatten(),
            Some("openclaw:core:appended")
        );
        let selector: SourceSelector =
            serde_json::from_value(json!({ "source": "mcp", "owner": "first" })).unwrap();
        let sourced = appended
            .with_source(
                &selector,
                &text(&[json!({ "name": "lead", "description": "again" })]),
            )
            .unwrap();
        let ids: Vec<_> = sourced.record_ids().collect();
        assert_eq!(ids[0], Some("openclaw:core:core0"));
        assert_eq!(ids[6], Some("mcp:server0:op0_on_s0"));
        assert_eq!(ids.last().copied().flatten(), Some("mcp:first:lead"));
        assert_eq!(ids.len(), tools.len() + 1);
    }

    #[test]
    fn a_few_changed_owners_are_derived_and_equal_a_full_build() {
        let base = Catalog::from_json_text(&text(&base_tools()), &uncached()).unwrap();
        let mut tools = base_tools();
        // server2: one tool changed, one removed; server99: new; core: one added.
        tools[41]["description"] = Value::from("Operation 1 of server 2, now also sends mail");
        tools.remove(45);
        tools.push(server_tool(
            "server99",
            "fresh_tool",
            "A new server's only tool",
        ));
        tools.push(json!({ "name": "core_extra", "description": "core tool that prints" }));
        tools.reverse(); // the order a gateway passes does not matter
        let stored = store::intern(record_spans(&text(&tools)).unwrap());
        let changed = base
            .changed_owners(&stored)
            .expect("a small change is derived");
        let owners: Vec<(String, usize)> = changed
            .iter()
            .map(|(s, list)| (format!("{}/{}", s.source.as_str(), s.owner), list.len()))
            .collect();
        assert_eq!(
            owners,
            [
                ("openclaw/core".to_string(), 7),
                ("mcp/server2".to_string(), 19),
                ("mcp/server99".to_string(), 1),
            ]
        );
        assert!(base.derived_update(&stored).is_some());
        let updated = base.update(&text(&tools)).unwrap();
        assert_equals_full_build(&updated, &tools);
        // The running totals carry over, as with withSource.
        assert!(Arc::ptr_eq(&updated.counters, &base.counters));
    }

    #[test]
    fn the_same_tools_again_are_the_same_catalog() {
        let base = Catalog::from_json_text(&text(&base_tools()), &uncached()).unwrap();
        let mut tools = base_tools();
        tools.rotate_left(17);
        let stored = store::intern(record_spans(&text(&tools)).unwrap());
        assert_eq!(base.changed_owners(&stored).map(|c| c.len()), Some(0));
        let updated = base.update(&text(&tools)).unwrap();
        assert!(Arc::ptr_eq(&updated.data, &base.data));
        assert_equals_full_build(&updated, &tools);
    }

    #[test]
    fn large_changes_duplicates_and_bad_records_are_full_builds_equal_to_one() {
        let base = Catalog::from_json_text(&text(&base_tools()), &uncached()).unwrap();
        // Nine owners changed: past the owner limit.
        let mut many = base_tools();
        for server in 0..9 {
            many[server * 20]["description"] =
                Value::from(format!("changed tool of server {server}"));
        }
        let stored = store::intern(record_spans(&text(&many)).unwrap());
        assert!(base.changed_owners(&stored).is_none());
        assert_equals_full_build(&base.update(&text(&many)).unwrap(), &many);
        // Two owners, but more than a quarter of the tools: a full build.
        let mut share = base_tools();
        share.retain(|t| t["owner"] != "server0");
        for t in share.iter_mut().filter(|t| t["owner"] == "server1") {
            t["description"] = Value::from(format!("{} (v2)", t["description"].as_str().unwrap()));
        }
        share.extend((0..40).map(|i| server_tool("server12", &format!("n{i}"), "new")));
        let stored = store::intern(record_spans(&text(&share)).unwrap());
        assert!(base.changed_owners(&stored).is_none());
        assert_equals_full_build(&base.update(&text(&share)).unwrap(), &share);
        // A tool passed twice, and a record that cannot be read: positions as a full build's.
        let mut odd = base_tools();
        odd.push(odd[3].clone());
        odd.insert(
            7,
            json!({ "source": "mcp", "owner": "server1", "name": 42 }),
        );
        odd.insert(9, json!("not a tool"));
        assert_equals_full_build(&base.update(&text(&odd)).unwrap(), &odd);
        // A tool moving between owners is a change of both.
        let mut moved = base_tools();
        moved[5]["owner"] = Value::from("server9");
        assert_equals_full_build(&base.update(&text(&moved)).unwrap(), &moved);
    }

    #[test]
    fn restricted_views_refuse_and_unavailable_owners_stay_unavailable() {
        let base = Catalog::from_json_text(&text(&base_tools()), &uncached()).unwrap();
        let view = base.restrict(&["op1_on_s1"]);
        let Err(err) = view.update(&text(&base_tools())) else {
            panic!("a restricted view was updated");
        };
        assert_eq!(err.code, crate::error::ErrorCode::InvalidRequest);
        let selector: SourceSelector =
            serde_json::from_value(json!({ "source": "mcp", "owner": "server4" })).unwrap();
        let down = base
            .with_unavailable(&selector, "server4 disconnected")
            .unwrap();
        let mut tools = base_tools();
        tools[0]["description"] = Value::from("changed");
        for update in [tools.clone(), {
            let mut all = tools.clone();
            for t in all.iter_mut().take(120) {
                t["description"] = Value::from("all changed");
            }
            all
        }] {
            let updated = down.update(&text(&update)).unwrap();
            let found = updated
                .search("operation 3 of server 4", &SearchOptions::hits(Some(50.0)))
                .unwrap();
            assert!(found.iter().all(|h| !h.id.contains("server4")), "{found:?}");
        }
    }
}
